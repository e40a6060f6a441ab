"""`proctor export runs` and `proctor export judgments` give back what the store holds as TREC files that
other tools read: pytrec_eval (trec_eval's own code; `all` = the mean over the run's queries, trec_eval
without -c) on the exported files, read with ir_measures' readers, equals Proctor's leaderboard for every
system; ir_measures' and autojudge-base's qrels loaders read the judgments back."""

from __future__ import annotations

import json

import ir_measures
import pytest
import pytrec_eval

from proctor.store import Store

MEASURES = {"P@20": ("P", "P_20"), "nDCG@10": ("ndcg_cut", "ndcg_cut_10"), "AP": ("map", "map"),
            "RR": ("recip_rank", "recip_rank")}
"""Proctor's name: trec_eval's measure family and the value it prints."""


def trec_eval_all(qrels: dict, path, measure: tuple[str, str]) -> float:
    """trec_eval's `all` row of one run file (pytrec_eval: trec_eval's code)."""
    run: dict[str, dict[str, float]] = {}
    for row in ir_measures.read_trec_run(str(path)):
        run.setdefault(row.query_id, {})[row.doc_id] = row.score
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure[0]}).evaluate(run)
    values = [v[measure[1]] for v in per_query.values()]
    return sum(values) / len(values)


def exported(cli, store, folder):
    """The store's runs (a folder) and judgments (a file), as `proctor export` writes them."""
    result = cli("export", "runs", "--store", store, "--out", folder / "runs")
    assert result.code == 0, result.err
    qrels = cli("export", "judgments", "--store", store)
    assert qrels.code == 0, qrels.err
    (folder / "qrels.txt").write_text(qrels.out)
    return folder / "runs", folder / "qrels.txt"


def assert_trec_eval_equals_leaderboards(cli, store, folder):
    runs, qrels = exported(cli, store, folder)
    judged: dict[str, dict[str, int]] = {}
    for row in ir_measures.read_trec_qrels(str(qrels)):
        judged.setdefault(row.query_id, {})[row.doc_id] = row.relevance
    files = sorted(runs.iterdir())
    for name, measure in MEASURES.items():
        board = json.loads(cli("leaderboard", "--store", store, "--qrels", "official", "--measure", name,
                               "--format", "json").out)
        ours = {row["system"]: row["score"] for row in board["systems"]}
        assert sorted(ours) == [f.name for f in files]
        for path in files:
            theirs = trec_eval_all(judged, path, measure)
            assert ours[path.name] == pytest.approx(theirs, rel=0, abs=1e-12), (name, path.name)
    return files


def test_exported_runs_score_as_the_leaderboard_demo(cli, demo_store, tmp_path):
    files = assert_trec_eval_equals_leaderboards(cli, demo_store, tmp_path)
    assert [f.name for f in files] == ["middling", "partial", "strong", "weak"]
    line = files[2].read_text().splitlines()[0].split()
    assert line[1] == "Q0" and line[5] == "strong" and len(line) == 6


def test_exported_runs_score_as_the_leaderboard_dl19(cli, dl19_store, tmp_path):
    files = assert_trec_eval_equals_leaderboards(cli, dl19_store, tmp_path)
    assert len(files) == 37


def test_exported_judgments_are_the_imported_ones(cli, demo_store, tmp_path, peer_nltk):
    _, qrels = exported(cli, demo_store, tmp_path)
    store = Store.open(demo_store)
    try:
        judgments = store.corpus.judgments()
    finally:
        store.close()
    back = {(q, d): r for q, per in judgments.items() for d, r in per.items()}
    assert {(r.query_id, r.doc_id): r.relevance for r in ir_measures.read_trec_qrels(str(qrels))} == back
    loader = pytest.importorskip("autojudge_base.qrels.qrels")
    assert {(r.topic_id, r.doc_id): r.grade for r in loader.read_qrel_file(qrels).rows} == back


def test_export_refusals(cli, demo_store, tmp_path):
    assert cli("export", "runs", "--store", demo_store).code == 2
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli("export", "runs", "--store", demo_store, "--out", blocker)
    assert result.code == 2 and "exists and is not a folder" in result.err
    empty = tmp_path / "empty.db"
    assert cli("import", "queries", tmp_path / "missing.tsv", "--store", empty).code == 2
