"""Measures: names in both vocabularies, hand-computed values, and equality with trec_eval (pytrec_eval)."""

from __future__ import annotations

import random

import pytest
import pytrec_eval

from proctor.errors import UsageError
from proctor.evaluate.leaderboard import measure_per_query
from proctor.evaluate.measures import parse_measure
from proctor.io.runs import order, order_runs


@pytest.mark.parametrize(("name", "canonical", "trec"), [
    ("P@20", "P@20", "P.20"), ("P.20", "P@20", "P.20"), ("P_20", "P@20", "P.20"),
    ("P(rel=3)@20", "P(rel=3)@20", "P.20"),
    ("nDCG@10", "nDCG@10", "ndcg_cut.10"), ("ndcg_cut.10", "nDCG@10", "ndcg_cut.10"), ("ndcg", "nDCG", "ndcg"),
    ("RR", "RR", "recip_rank"), ("recip_rank", "RR", "recip_rank"),
    ("AP", "AP", "map"), ("map", "AP", "map"), ("Rprec", "Rprec", "Rprec"), ("R-Prec", "Rprec", "Rprec"),
])
def test_measure_names(name, canonical, trec):
    spec = parse_measure(name)
    assert (spec.name, spec.trec_name) == (canonical, trec)


@pytest.mark.parametrize("bad", ["P", "bpreff", "P@0", "Rprec@5", "nDCG@x"])
def test_bad_measure_names(bad):
    with pytest.raises(UsageError):
        parse_measure(bad)


def test_trec_eval_tie_order_is_descending_docid():
    assert order({"a": 1.0, "c": 1.0, "b": 2.0, "d": 1.0}) == ["b", "d", "c", "a"]


QRELS = {"a": 3, "b": 0, "c": 1, "d": 2, "z": 3}
RANKED = ["b", "a", "x", "c", "d"]


@pytest.mark.parametrize(("measure", "level", "expected"), [
    ("P@2", 1, 0.5), ("P@5", 2, 0.4), ("P@10", 1, 0.3),
    ("RR", 1, 0.5), ("RR", 3, 0.5), ("RR@1", 1, 0.0),
    ("AP", 1, (1 / 2 + 2 / 4 + 3 / 5) / 4), ("AP", 3, (1 / 2) / 2),
    ("Rprec", 2, 1 / 3), ("Rprec", 1, 2 / 4),
])
def test_hand_computed(measure, level, expected):
    assert parse_measure(measure).per_query(RANKED, QRELS, level) == pytest.approx(expected)


def test_ndcg_hand_computed_ignores_level():
    import math
    dcg = 3 / math.log2(3) + 1 / math.log2(5) + 2 / math.log2(6)
    ideal = 3 + 3 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5)
    for level in (1, 3):
        assert parse_measure("nDCG@5").per_query(RANKED, QRELS, level) == pytest.approx(dcg / ideal)


def _random_case(seed: int):
    rng = random.Random(seed)
    qrels, runs = {}, {}
    for q in range(8):
        qid = f"q{q}"
        docs = [f"d{rng.randrange(60)}" for _ in range(40)]
        qrels[qid] = {d: rng.choice([0, 0, 0, 1, 2, 3, 4, 5]) for d in docs[:25]}
        if q == 7:
            qrels[qid] = {d: 0 for d in docs[:10]}  # a query without relevant passages
    for r in range(5):
        runs[f"run{r}"] = {}
        for q in range(9):  # q8 is not judged: trec_eval leaves it out
            docs = {f"d{rng.randrange(60)}" for _ in range(30)}
            # coarse scores make many ties, which trec_eval breaks by docid
            runs[f"run{r}"][f"q{q}"] = {d: float(rng.randrange(6)) for d in docs}
    return qrels, runs


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2, 3, 5])
def test_equals_pytrec_eval_with_ties(seed, level):
    qrels, runs = _random_case(seed)
    names = {"P@5": "P_5", "P@20": "P_20", "nDCG@10": "ndcg_cut_10", "nDCG": "ndcg", "RR": "recip_rank",
             "AP": "map", "Rprec": "Rprec"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names.values()), relevance_level=level)
    ranked = order_runs(runs)
    for run, per_query in runs.items():
        expected = evaluator.evaluate(per_query)
        for ours, theirs in names.items():
            got = measure_per_query(ranked[run], qrels, parse_measure(ours), level)
            assert set(got) == set(expected)
            for qid in expected:
                assert got[qid] == pytest.approx(expected[qid][theirs], abs=1e-12), (run, ours, qid)


def test_missing_zero_adds_judged_queries_the_run_lacks():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    ranked = {"q1": ["a"]}
    spec = parse_measure("P@1")
    assert measure_per_query(ranked, qrels, spec, 1) == {"q1": 1.0}
    assert measure_per_query(ranked, qrels, spec, 1, missing="zero") == {"q1": 1.0, "q2": 0.0}


@pytest.mark.parametrize("seed", range(3))
def test_labels_kept_per_ranked_list_give_the_same_values_in_any_order(seed):
    """A `QueryLabels` keeps each ranked list's labels and extends them when a deeper measure asks: shallow
    then deep, deep then shallow, several runs and levels — every value equals the plain-dict computation."""
    from proctor.evaluate.measures.base import QueryLabels

    qrels, runs = _random_case(seed)
    ranked = order_runs(runs)
    names = ["P@5", "RR@3", "nDCG@10", "P@20", "AP", "Rprec", "nDCG", "RR", "AP@7"]
    rng = random.Random(seed)
    kept = {qid: QueryLabels(per, keep_gains=True) for qid, per in qrels.items()}
    for _ in range(3):
        rng.shuffle(names)
        for name in names:
            for level in (1, 3):
                for run in ranked:
                    expected = measure_per_query(ranked[run], qrels, parse_measure(name), level)
                    assert measure_per_query(ranked[run], kept, parse_measure(name), level) == expected
    some = next(iter(kept.values()))
    assert any(key[0] == "gains" for key in some.memo)  # the labels were kept, not looked up again
