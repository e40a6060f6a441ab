"""Agreement statistics equal scikit-learn's κ and the krippendorff package's α, on built and real labels."""

from __future__ import annotations

import json
import random
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from inprocess import run_cli
from proctor.analyze.agreement import (
    agreement_report,
    alpha_of_counts,
    cohen_kappa,
    confusion,
    kappa_of_counts,
    krippendorff_alpha_ordinal,
)
from proctor.evaluate.sources import exam_qrels
from proctor.gradesets.resolve import resolve_grade_set
from proctor.store import Store


@pytest.mark.parametrize("seed", range(10))
def test_kappa_and_alpha_on_random_labels(seed):
    rng = random.Random(seed)
    a = [rng.randrange(6) for _ in range(300)]
    b = [min(3, max(0, x // 2 + rng.choice([-1, 0, 0, 1]))) for x in a]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert cohen_kappa(a, b, "linear") == pytest.approx(cohen_kappa_score(a, b, weights="linear"), abs=1e-12)
    expected = krippendorff.alpha(reliability_data=np.array([a, b]), level_of_measurement="ordinal")
    assert krippendorff_alpha_ordinal(a, b) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_kappa_from_pair_counts_is_scikit_learns_kappa_to_the_last_bit(seed):
    rng = random.Random(seed)
    top_a, top_b = rng.choice([(1, 1), (1, 1), (3, 3), (5, 3), (2, 3), (5, 5)])  # binary: as calibrate asks
    a = [rng.randint(0, top_a) for _ in range(rng.randint(2, 5000))]
    b = [min(top_b, max(0, x + rng.randint(-2, 2))) if rng.random() < 0.7 else rng.randint(0, top_b) for x in a]
    a[0], b[0] = 0, min(1, top_b)  # two labels at least
    counts = Counter(zip(a, b, strict=True))
    keys = sorted(counts)
    weight = [counts[k] for k in keys]
    for weights in (None, "linear", "quadratic"):
        ours = kappa_of_counts(counts, weights)
        theirs = cohen_kappa_score([x for x, _ in keys], [y for _, y in keys], weights=weights, sample_weight=weight)
        assert ours == theirs or (np.isnan(ours) and np.isnan(theirs)), (weights, ours, theirs)
        plain = cohen_kappa_score(a, b, weights=weights)  # one pair a passage: the same
        assert ours == plain or (np.isnan(ours) and np.isnan(plain)), (weights, ours, plain)
    for table in ([(0, 1)], [(1, 0), (0, 1)], [(0, 0), (1, 1)], [(3, 0), (0, 3), (0, 3)], [(0, 0), (0, 1)]):
        left, right = [x for x, _ in table], [y for _, y in table]
        ours, theirs = cohen_kappa(left, right), cohen_kappa_score(left, right)
        assert ours == theirs or (np.isnan(ours) and np.isnan(theirs)), (table, ours, theirs)


@pytest.mark.parametrize("seed", range(20))
def test_alpha_from_pair_counts_is_the_package_alpha_to_the_last_bit(seed):
    rng = random.Random(seed)
    top_a, top_b = rng.choice([(5, 3), (3, 3), (1, 1), (2, 3), (5, 5)])
    a = [rng.randint(0, top_a) for _ in range(rng.randint(2, 5000))]
    b = [min(top_b, max(0, x + rng.randint(-2, 2))) if rng.random() < 0.7 else rng.randint(0, top_b) for x in a]
    expected = krippendorff.alpha(reliability_data=np.array([a, b], dtype=float), level_of_measurement="ordinal",
                                  value_domain=sorted(set(a) | set(b)))
    assert krippendorff_alpha_ordinal(a, b) == float(expected)  # not approx: reports stay byte-identical


def test_alpha_of_millions_of_pairs_costs_what_their_distinct_pairs_do():
    pairs = Counter({(0, 0): 4_000_000, (1, 1): 1_000_000, (2, 2): 500_000, (0, 1): 300_000, (2, 0): 100_000})
    scaled = Counter({pair: n // 1_000 for pair, n in pairs.items()})  # the same proportions, 1/1,000 the units
    alpha = alpha_of_counts(pairs)  # as units: 2 x 5.9 million labels, gigabytes in the package's arrays
    assert 0 < alpha < 1 and alpha == pytest.approx(alpha_of_counts(scaled), abs=1e-3)


def test_confusion_totals():
    table = confusion([0, 4, 5, 4], [0, 2, 3, 0])
    assert table["predicted_labels"] == [0, 4, 5] and table["judgments"] == [0, 2, 3]
    assert table["counts"] == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    assert table["row_totals"] == [1, 2, 1] and table["column_totals"] == [2, 1, 1] and table["total"] == 4


def test_llmjudge_binarisations_only_for_0_to_3_labels():
    report = agreement_report([0, 1, 2, 3, 3], [0, 1, 3, 3, 2], judged_relevant=2)
    assert set(report["llmjudge_kappa"]) == {"0|123", "01|23", "012|3"}
    assert report["llmjudge_kappa"]["01|23"] == pytest.approx(cohen_kappa_score([0, 0, 1, 1, 1], [0, 0, 1, 1, 1]))
    assert agreement_report([0, 5], [0, 3], 2)["llmjudge_kappa"] is None


def test_real_dl19_labels_equal_the_reference_packages(dl19_store):
    store = Store.open(dl19_store)
    judgments = store.corpus.judgments()
    grade_set = resolve_grade_set(store)
    for m in (1, 2, 5):
        labels = exam_qrels(store, grade_set, min_questions=m)
        pairs = [(label, judgments[q][p]) for q, per in labels.items() for p, label in per.items()]
        a, b = [x for x, _ in pairs], [y for _, y in pairs]
        assert len(a) == 9260
        for t in (1, 3, 4):
            pa, pb = [int(x >= t) for x in a], [int(y >= 2) for y in b]
            assert cohen_kappa(pa, pb) == pytest.approx(cohen_kappa_score(pa, pb), abs=1e-12)
        assert cohen_kappa(a, b, "linear") == pytest.approx(cohen_kappa_score(a, b, weights="linear"), abs=1e-12)
        expected = krippendorff.alpha(reliability_data=np.array([a, b]), level_of_measurement="ordinal")
        assert krippendorff_alpha_ordinal(a, b) == pytest.approx(expected, abs=1e-9)


def _kappa_values_and_keys(node, key=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _kappa_values_and_keys(v, k if isinstance(v, int | float) or v is None else k + "/" + key)
    elif isinstance(node, list):
        for item in node:
            yield from _kappa_values_and_keys(item, key)
    else:
        yield key, node


def test_agreement_command_on_dl19(dl19_store):
    result = run_cli("agreement", "--store", dl19_store, "--judged-relevant", "2", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    reports = data["grade_sets"][0]["at_least_m_questions"]
    assert set(reports) == {"1", "2", "5"}
    binary = reports["1"]["binary"]
    assert [b["predicted"] for b in binary] == [">=1", ">=3", ">=4", "=5"]
    assert all("kappa" in key for b in binary for key in b if isinstance(b[key], float))
    assert "linear_weighted_kappa" in reports["1"] and "krippendorff_alpha_ordinal" in reports["1"]
    assert reports["1"]["confusion"]["total"] == 9260
    for fmt in ("md", "tsv"):
        assert run_cli("agreement", "--store", dl19_store, "--judged-relevant", "2", "--format", fmt).code == 0


def test_agreement_needs_judgments(tmp_path):
    store = tmp_path / "s.db"
    grades = tmp_path / "g.jsonl"
    grades.write_text(json.dumps(["q", [{"paragraph_id": "p", "text": "t", "paragraph_data": {},
                                         "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True},
                                                          "self_ratings": [{"question_id": "q/1",
                                                                            "self_rating": 3}]}]}]]) + "\n")
    assert run_cli("import", "exampp", grades, "--store", store).code == 0
    result = run_cli("agreement", "--store", store, "--judged-relevant", "2")
    assert result.code == 2 and "no judgments" in result.err


def _direct_reply(prompt: str) -> str:
    """thomas 0-2 and umbrela 0-3 labels from the passage's words."""
    passage = prompt.split("Passage:")[-1].lower()
    return "2" if "nectar" in passage else "1" if "bee" in passage else "0"


def test_direct_relevance_rows_follow_the_methods_own_scale(demo_store, cli):
    from fake_openai import FakeOpenAI

    with FakeOpenAI(reply=_direct_reply) as server:
        for method in ("thomas", "umbrela"):
            graded = cli("grade", "--store", demo_store, "--method", method, "--llm", "openai:judge",
                         "--base-url", server.base_url, "--format", "json")
            assert graded.code == 0, graded.err
    result = cli("agreement", "--store", demo_store, "--judged-relevant", "1", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    by_method = {gs["method"]: gs for gs in data["grade_sets"]}
    thomas, umbrela = by_method["thomas"], by_method["umbrela"]
    # one label per passage: no m-th largest over questions, no cut the scale cannot reach
    assert thomas["scale"] == [0, 2] and thomas["label_rule"].startswith("label = the method's grade of the passage")
    assert list(thomas["at_least_m_questions"]) == ["1"]
    assert [b["predicted"] for b in thomas["at_least_m_questions"]["1"]["binary"]] == [">=1", ">=2"]
    assert thomas["at_least_m_questions"]["1"]["llmjudge_kappa"] is None
    assert [b["predicted"] for b in umbrela["at_least_m_questions"]["1"]["binary"]] == [">=1", ">=2", ">=3"]
    assert set(umbrela["at_least_m_questions"]["1"]["llmjudge_kappa"]) == {"0|123", "01|23", "012|3"}
    assert data["label_rule"] == "label = the method's grade of the passage (one per passage)"
    # the κ of thomas >= 2 vs judged >= 1 is scikit-learn's on the same passages
    store = Store.open(demo_store)
    grade_set = resolve_grade_set(store, method="thomas")
    labels, judgments = exam_qrels(store, grade_set), store.corpus.judgments()
    pairs = [(label, judgments[q][p]) for q, per in labels.items() for p, label in per.items() if p in judgments[q]]
    store.close()
    expected = cohen_kappa_score([int(a >= 2) for a, _ in pairs], [int(b >= 1) for _, b in pairs])
    kappa = thomas["at_least_m_questions"]["1"]["binary"][1]["cohen_kappa"]
    assert kappa == pytest.approx(expected) and thomas["at_least_m_questions"]["1"]["n_passages"] == len(pairs)
    md = cli("agreement", "--store", demo_store, "--judged-relevant", "1", "--method", "thomas", "--format", "md").out
    assert ">=4" not in md and "=5" not in md and "m-th largest" not in md and "m=2" not in md
    assert "labels 0-2; prompt" in md and "is relevant; label = the method's grade of the passage" in md
    # a merge beyond the scale is left out and named, never computed on labels that cannot reach it
    asked = json.loads(cli("agreement", "--store", demo_store, "--judged-relevant", "1", "--method", "thomas",
                           "--merges", ">=2,>=4").out)["grade_sets"][0]
    assert [b["predicted"] for b in asked["at_least_m_questions"]["1"]["binary"]] == [">=2"]
    assert asked["merges_outside_scale"] == [">=4"]
