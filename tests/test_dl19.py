"""The foundation on real data: TREC DL 2019 with FLAN-T5-large grades (skips when ../shared is absent).

Reference values are computed here independently from the raw exam_pp file: runs and grades are read
with `json`, measures with pytrec_eval (trec_eval's own code)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest
import pytrec_eval

from conftest import DL19
from inprocess import run_cli
from proctor.store import Store


def _paragraphs(path) -> dict[str, dict[str, dict]]:
    """`{qid: {pid: paragraph}}` of an exam_pp file, read with `json`."""
    with gzip.open(path, "rt") as handle:
        return {qid: {p["paragraph_id"]: p for p in paras} for qid, paras in map(json.loads, handle)}


@pytest.fixture(scope="module")
def pool(dl19_pool) -> dict[str, dict[str, dict]]:
    """The graded pool's paragraphs (`_paragraphs`), read once for the module's tests."""
    return _paragraphs(dl19_pool)


@pytest.fixture(scope="module")
def raw(pool):
    """Runs `{run: {qid: {pid: score}}}` and grades `{qid: {pid: {question: rating}}}` read directly."""
    runs: dict = defaultdict(lambda: defaultdict(dict))
    grades: dict = defaultdict(dict)
    for qid, paragraphs in pool.items():
        for p in paragraphs.values():
            for r in p["paragraph_data"]["rankings"]:
                runs[r["method"]][qid][p["paragraph_id"]] = r["score"]
            ratings = p["exam_grades"][0]["self_ratings"]
            grades[qid][p["paragraph_id"]] = {r["question_id"]: r["self_rating"] for r in ratings}
    return {k: dict(v) for k, v in runs.items()}, dict(grades)


def _board(result) -> dict[str, dict]:
    assert result.code == 0, result.err
    return {row["system"]: row for row in json.loads(result.out)["systems"]}


def _tsv(result) -> list[list[str]]:
    assert result.code == 0, result.err
    rows = [line.split("\t") for line in result.out.splitlines()]
    assert rows[0] == ["system", "score", "stderr", "n_queries", "measure", "labels"]
    return rows[1:]


def test_must_show_commands(dl19_store, tmp_path):
    rows = _tsv(run_cli("leaderboard", "--store", dl19_store, "--measure", "P@20", "--min-grade", "3",
                        "--format", "tsv"))
    assert len(rows) == 37 and all(r[3] == "43" for r in rows)
    assert [float(r[1]) for r in rows] == sorted((float(r[1]) for r in rows), reverse=True)
    cover = run_cli("leaderboard", "--store", dl19_store, "--metric", "cover", "--min-grade", "3",
                    "--budget", "20", "--missing", "skip", "--format", "tsv")
    assert len(_tsv(cover)) == 37 and "skipped" in cover.err
    qrels = run_cli("qrels", "--store", dl19_store)
    assert qrels.code == 0 and len(qrels.out.splitlines()) == 9260
    official = run_cli("leaderboard", "--store", dl19_store, "--measure", "ndcg_cut.10", "--qrels", "official",
                       "--format", "tsv")
    assert len(_tsv(official)) == 37
    info = run_cli("info", "--store", dl19_store, "--format", "json")
    counts = json.loads(info.out)
    assert (counts["queries"], counts["runs"], counts["judgments"], counts["grades"]) == (43, 37, 9260, 92600)
    assert counts["grade_sets"][0]["method"] == "self-rating"


def test_exam_qrels_equal_pytrec_eval(dl19_store, raw, tmp_path):
    runs, _ = raw
    qrels_out = run_cli("qrels", "--store", dl19_store)
    qrels: dict = defaultdict(dict)
    for line in qrels_out.out.splitlines():
        qid, _, pid, label = line.split()
        qrels[qid][pid] = int(label)
    for tau in (3, 5):
        ours = _board(run_cli("leaderboard", "--store", dl19_store, "--measure", "P@20", "--min-grade", tau,
                              "--format", "json"))
        evaluator = pytrec_eval.RelevanceEvaluator(dict(qrels), {"P_20"}, relevance_level=tau)
        for run, per_query in runs.items():
            values = [v["P_20"] for v in evaluator.evaluate(per_query).values()]
            assert ours[run]["score"] == pytest.approx(sum(values) / len(values), abs=1e-12), run
            assert ours[run]["n_queries"] == len(values)


def test_exam_label_is_max_self_rating(dl19_store, raw):
    _, grades = raw
    labels = {(q, p): int(label) for q, _, p, label in
              (line.split() for line in run_cli("qrels", "--store", dl19_store).out.splitlines())}
    for qid, per in grades.items():
        for pid, ratings in per.items():
            assert labels[(qid, pid)] == max(ratings.values())


def test_official_ndcg_orders_systems_as_official_leaderboard(dl19_store):
    official = json.loads((DL19 / "dl19-official-leaderboard.json").read_text())
    rows = _tsv(run_cli("leaderboard", "--store", dl19_store, "--measure", "ndcg_cut.10", "--qrels", "official"))
    ours = [r[0] for r in rows if r[0] in official]
    assert len(ours) == len(official) == 36
    # The data README: Spearman 1.000, Kendall 0.997 — one adjacent near-tie (0.67463 vs 0.67458) swaps.
    assert all(abs(official[run] - (i + 1)) <= 1 for i, run in enumerate(ours))
    discordant = sum(1 for i in range(len(ours)) for j in range(i + 1, len(ours))
                     if official[ours[i]] > official[ours[j]])
    assert discordant <= 1


@pytest.mark.parametrize("query", ["1037798", "104861", "19335"])
def test_cover_matches_definition_on_hand_checked_queries(dl19_store, raw, query):
    runs, grades = raw
    tau, k = 3, 20
    questions = {q for ratings in grades[query].values() for q in ratings}
    expected = {}
    for run, per_query in runs.items():
        if query not in per_query:
            continue
        ranked = sorted(per_query[query].items(), key=lambda item: (-item[1], [-ord(c) for c in item[0]]))
        answered = {q for pid, _ in ranked[:k] for q, r in grades[query].get(pid, {}).items() if r >= tau}
        expected[run] = len(answered) / len(questions)
    for missing in ("skip", "zero"):
        board = _board(run_cli("leaderboard", "--store", dl19_store, "--metric", "cover", "--min-grade", tau,
                               "--budget", k, "--missing", missing, "--format", "json", "--per-query"))
        for run in runs:
            got = board[run]["per_query"].get(query)
            if run in expected:
                assert got == pytest.approx(expected[run])
            else:
                assert got == (0.0 if missing == "zero" else None)


@pytest.mark.slow
def test_export_import_round_trip(dl19_store, pool, tmp_path):
    out = tmp_path / "export.jsonl.gz"
    result = run_cli("export", "exampp", "--store", dl19_store, "--out", out)
    assert result.code == 0, result.err
    again = tmp_path / "again.db"
    assert run_cli("import", "exampp", out, "--store", again).code == 0
    first, second = Store.open(dl19_store).dump(), Store.open(again).dump()
    for table in first:
        if table in ("grades", "grade_sets"):  # all but the time of grading, which exam_pp files do not carry
            created = 11 if table == "grades" else -1
            assert [row[:created] + row[created:][1:] for row in first[table]] == [
                row[:created] + row[created:][1:] for row in second[table]]
        elif table != "imports":
            assert first[table] == second[table], table
    # The exported file says what the original said, paragraph by paragraph.
    original, exported = pool, _paragraphs(out)
    assert original.keys() == exported.keys()
    for qid, paragraphs in original.items():
        assert paragraphs.keys() == exported[qid].keys()
        for pid, p in paragraphs.items():
            e = exported[qid][pid]
            assert e["text"] == p["text"]
            key = lambda r: (r["method"], r["rank"])  # noqa: E731
            assert sorted(e["paragraph_data"]["rankings"], key=key) == sorted(p["paragraph_data"]["rankings"], key=key)
            assert e["paragraph_data"]["judgments"] == p["paragraph_data"]["judgments"]
            eg, pg = e["exam_grades"][0], p["exam_grades"][0]
            for field in ("llm", "llm_options", "prompt_info"):
                assert eg[field] == pg[field]
            assert eg["exam_ratio"] == pytest.approx(pg["exam_ratio"])
            assert set(eg["correctAnswered"]) == set(pg["correctAnswered"])
            assert sorted(map(tuple, eg["answers"])) == sorted(map(tuple, pg["answers"]))
            rating = lambda g: sorted((r["question_id"], r["self_rating"]) for r in g["self_ratings"])  # noqa: E731
            assert rating(eg) == rating(pg)


def test_n_exam_keeps_the_order_of_exam_cover_and_is_a_ratio_of_sums(dl19_store):
    from proctor.analyze.correlation import kendall_tau_b

    def board(*extra):
        result = run_cli("leaderboard", "--store", dl19_store, "--metric", "cover", "--min-grade", "3",
                         "--budget", "20", "--format", "json", "--per-query", *extra)
        assert result.code == 0, result.err
        return json.loads(result.out)

    plain, normalised = board(), board("--normalize", "pool")
    cover = {row["system"]: row for row in plain["systems"]}
    n_exam = {row["system"]: row["score"] for row in normalised["systems"]}
    systems = sorted(cover)
    assert kendall_tau_b([cover[s]["score"] for s in systems], [n_exam[s] for s in systems]) == pytest.approx(1.0)
    [overall] = plain["reference_rows"]
    assert overall["system"] == "_overall_" and overall["reference"] is True
    pool_sum = sum(overall["per_query"].values())
    for system in systems:
        assert n_exam[system] == pytest.approx(sum(cover[system]["per_query"].values()) / pool_sum)
