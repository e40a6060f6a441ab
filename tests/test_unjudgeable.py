"""A passage the corpus does not hold is unjudgeable: counted at import, in `info` and on every leaderboard of the
runs that rank it, never graded, left out of EXAM-Qrels, and unjudged for every measure as trec_eval treats a
document missing from qrels (ir_measures / pytrec_eval are the oracle)."""

from __future__ import annotations

import json

import ir_measures
import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from proctor import api
from proctor.api import LabelChoice
from proctor.store import Store


@pytest.fixture(scope="module")
def store_with_d99(tmp_path_factory):
    """The demo store, a run `holes` ranking passages d98 and d99 that no corpus holds, graded with self-rating."""
    from proctor.cli import main

    folder = tmp_path_factory.mktemp("unjudgeable")
    store = seed_demo(folder)
    lines = (folder / "collection" / "runs" / "strong.run").read_text().splitlines()
    holes = []
    for line in lines:
        qid, _, pid, rank, score, _ = line.split()
        holes.append(f"{qid} Q0 {pid} {int(rank) + 1} {score} holes")
        if rank == "1":
            holes.append(f"{qid} Q0 {'d99' if qid == 'q1' else 'd98'} 1 {float(score) + 1} holes")
    (folder / "holes.run").write_text("\n".join(holes) + "\n")
    assert main(["import", "runs", str(folder / "holes.run"), "--store", str(store)]) == 0
    with FakeOpenAI() as server:
        assert main(["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:fake-model",
                     "--base-url", server.base_url, "--format", "json"]) == 0
        requests = server.requests
    return store, folder, requests


def test_import_counts_unjudgeable_pairs(tmp_path, cli):
    store = seed_demo(tmp_path)
    (tmp_path / "x.run").write_text("q1 Q0 d99 1 5.0 x\nq1 Q0 d101 2 4.0 x\nq2 Q0 d98 1 3.0 x\n")
    result = cli("import", "runs", tmp_path / "x.run", "--store", store)
    assert result.code == 0
    assert "runs now rank 2 (query, passage) pairs that name a passage the store has no text" in result.err
    assert json.loads(cli("info", "--store", store, "--format", "json").out)["unjudgeable"] == 2
    assert "unjudgeable    2" in cli("info", "--store", store).out


def test_unjudgeable_passages_are_never_graded_nor_labelled(store_with_d99):
    store, _, requests = store_with_d99
    opened = Store.open(store)
    try:
        graded = {g.passage_id for s in opened.grades.grade_sets() for g in opened.grades.records(s)}
        qrels = api.labels(opened, LabelChoice(method="self-rating")).qrels
    finally:
        opened.close()
    assert graded and not graded & {"d98", "d99"}
    assert not {pid for per in qrels.values() for pid in per} & {"d98", "d99"}
    assert requests == 72  # the demo pool's 24 passages x 3 questions: nothing sent for d98 / d99


@pytest.mark.parametrize("measure, ir_name", [("P@5", "P@5"), ("P@10", "P@10"), ("nDCG@10", "nDCG@10"),
                                              ("AP", "AP"), ("RR", "RR"), ("Rprec", "Rprec")])
def test_measures_treat_unjudgeable_as_unjudged(store_with_d99, cli, measure, ir_name):
    store, folder, _ = store_with_d99
    result = cli("leaderboard", "--store", store, "--method", "self-rating", "--measure", measure, "--min-grade", "4",
                 "--format", "json", "--per-query")
    assert result.code == 0, result.err
    board = json.loads(result.out)
    assert board["unjudgeable"] == 4 and "unjudgeable: 4 ranked" in result.err
    opened = Store.open(store)
    try:
        qrels = api.labels(opened, LabelChoice(method="self-rating")).qrels
    finally:
        opened.close()
    run = list(ir_measures.read_trec_run(str(folder / "holes.run")))
    qrels_ = [ir_measures.Qrel(q, d, rel) for q, per in qrels.items() for d, rel in per.items()]
    oracle = ir_measures.parse_measure(ir_name)
    if ir_name != "nDCG@10":
        oracle = oracle(rel=4)
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([oracle], qrels_, run)}
    holes = next(s for s in board["systems"] if s["system"] == "holes")
    assert holes["per_query"] == pytest.approx(expected)


@pytest.mark.parametrize("runs, expected", [(["strong.run", "weak.run"], 0), (["strong.run", "x.run"], 2)])
def test_a_leaderboard_counts_the_unjudgeable_pairs_of_its_own_runs(store_with_d99, cli, tmp_path, runs, expected):
    store, folder, _ = store_with_d99
    (tmp_path / "x.run").write_text("q1 Q0 d97 1 5.0 x\nq1 Q0 d101 2 4.0 x\nq2 Q0 d98 1 3.0 x\n")
    paths = [tmp_path / r if r == "x.run" else folder / "collection" / "runs" / r for r in runs]
    result = cli("leaderboard", "--store", store, "--method", "self-rating", "--measure", "P@5", "--min-grade", "4",
                 "--format", "json", "--runs", *paths)
    assert result.code == 0, result.err
    assert json.loads(result.out)["unjudgeable"] == expected
    assert ("unjudgeable" in result.err) == bool(expected)


def test_a_cover_leaderboard_counts_them_too(store_with_d99, cli):
    store, _, _ = store_with_d99
    result = cli("leaderboard", "--store", store, "--method", "self-rating", "--metric", "cover", "--min-grade", "4",
                 "--format", "md")
    assert result.code == 0, result.err
    assert "unjudgeable: 4 ranked" in result.out and "unjudgeable: 4 ranked" in result.err
    tsv = cli("leaderboard", "--store", store, "--method", "self-rating", "--measure", "P@5", "--min-grade", "4")
    assert tsv.out.splitlines()[0].startswith("system\t") and "unjudgeable: 4 ranked" in tsv.err  # TSV stays clean
