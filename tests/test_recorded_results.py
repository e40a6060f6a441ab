"""The faster store paths give exactly the numbers the 0.1/0.2 code gave.

`tests/data/recorded-results/expected.json` was recorded with the code before compact grade rows and the caches
(`PROCTOR_RECORD=1`) on the synthetic store `_build` makes (random grades with failures, two grade sets, one of
two steps, facets in the question ids); every figure is compared exactly (floats by their repr), but the
agreement figures, which scikit-learn and krippendorff compute since (to 1e-12 of the recorded values, summed
in another order)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

import random_store
from conftest import raw_write
from proctor import api
from proctor.analyze.judges import store_agreement
from proctor.evaluate.labels import LabelStats
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard
from proctor.evaluate.sources import exam_qrels, grade_rows, load_runs
from proctor.evaluate.sweep import sweep
from proctor.records import Grade, GradeSet
from proctor.store import Store

EXPECTED = Path(__file__).parent / "data" / "recorded-results" / "expected.json"


def _build(path: Path) -> Store:
    rnd = random.Random(16)
    queries = [f"q{i}" for i in range(12)]
    sets = [GradeSet("self-rating", "m1", "v1", None, None, {"source": "test"}, "self-rating"),
            GradeSet("four-prompts", "m2", "v1", None, None, {}, "four-prompts-sum")]
    ranked = random_store.rankings(rnd, 6, [queries[: 10 + r % 3] for r in range(6)], pool=30, depth=25, top_score=9)
    judgments = ((q, f"{q}p{j}", rnd.randint(0, 3)) for q in queries[:10] for j in range(0, 30, 2))
    graded = [(s, random_store.grades(rnd, s, queries, (18, 30), (1, 7), question="{q}/f{facet}/h{k}", failed=0.08,
                                      steps=None if s.method == "self-rating" else ["four-prompts", s.step],
                                      statuses=["ok", "ok", "defaulted"], reply="reply")) for s in sets]
    return random_store.random_store(path, ranked, graded, queries=((q, f"text {q}") for q in queries),
                                     passages=((f"{q}p{j}", "x") for q in queries for j in range(30)),
                                     judgments=judgments)


def _board(board: Leaderboard) -> dict:
    def entry(e):
        return [e.system, repr(e.score), repr(e.stderr), e.n_queries, {q: repr(v) for q, v in e.per_query.items()}]
    return {"entries": [entry(e) for e in board.entries], "references": [entry(e) for e in board.references],
            "notes": board.notes, "description": {k: v for k, v in board.description.items()}, "kind": board.kind}


def _outputs(store: Store) -> dict:
    out: dict = {"grade_sets": [[s.id, s.grades, s.failures, s.step] for s in store.grades.grade_sets()]}
    counts = store.counts()
    out["counts"] = {k: v for k, v in counts.items() if k not in ("store", "grade_sets", "bank_versions")}
    runs = load_runs(store, None)
    for grade_set in store.grades.grade_sets():
        key = grade_set.id
        out[f"statuses {key}"] = store.grades.step_statuses(key)
        for m in (1, 2, 5):
            for facets in (False, True):
                stats = LabelStats()
                out[f"qrels {key} m={m} facets={facets}"] = exam_qrels(store, grade_set, min_questions=m,
                                                                      facets=facets, stats=stats)
                out[f"stats {key} m={m} facets={facets}"] = vars(stats)
        out[f"sweep {key}"] = [_board(b) for b in sweep(store, grade_set, runs, measures=(
            "P@20", "nDCG@10", "RR", "AP", "Rprec"))]
        from proctor.evaluate.cover import CoverTable
        for normalize in ("pool", "pool-per-query"):
            table = CoverTable.build(grade_rows(store, grade_set), 2)
            out[f"cover {key} {normalize}"] = _board(cover_leaderboard(runs, table, normalize=normalize))
        for measure, m in (("P@20", 1), ("AP", 2)):
            board = api.leaderboard(store, measure, min_grade=3,
                                    labels=api.LabelChoice(grade_set=key, min_questions=m))
            out[f"api {key} {measure} m={m}"] = _board(board)
        board = api.leaderboard(store, "Cover(rel=3)@20", labels=api.LabelChoice(grade_set=key))
        out[f"api cover {key}"] = _board(board)
        out[f"api qrels {key}"] = api.labels(store, api.LabelChoice(grade_set=key), binary_min_grade=2).qrels
    out["agreement"] = {k: v for k, v in store_agreement(store, 2).items() if k != "store"}
    return json.loads(json.dumps(out, default=repr))


def test_results_identical_to_recorded(tmp_path: Path) -> None:
    store = _build(tmp_path / "s.db")
    got = _outputs(store)
    store.close()
    if os.environ.get("PROCTOR_RECORD"):
        EXPECTED.parent.mkdir(parents=True, exist_ok=True)
        EXPECTED.write_text(json.dumps(got, indent=1, sort_keys=True))
        pytest.skip("recorded")
    expected = json.loads(EXPECTED.read_text())
    assert sorted(got) == sorted(expected)
    for key in expected:
        if key == "agreement":
            assert _close(_later(got[key]), _later(expected[key])), key
        else:
            assert _later(got[key]) == _later(expected[key]), key


def _close(a, b) -> bool:
    """Equal, floats to 1e-12."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=0, abs=1e-12, nan_ok=True)
    return a == b


ADDED_LATER = {"labels_id", "measure_id", "trec_eval_output", "computed_by", "coverage", "label_rule",
               "scale", "unjudgeable", "stale_grades"}
"""Description keys added after the recording, among them what a number rests on (every number is still
compared)."""


def _later(value):
    """`value` without what deliberately came after the recording: the description keys saying which measure
    and labels a leaderboard holds, and EXAM-Cover's note on which queries it scores."""
    if isinstance(value, dict):
        return {k: _later(v) for k, v in value.items() if k not in ADDED_LATER}
    if isinstance(value, list):
        return [_later(v) for v in value if not (isinstance(v, str) and v.startswith("EXAM-Cover: the grade set has no "
                                                                                    "bank"))]
    return value


def test_counts_are_kept_and_dropped_by_every_write(tmp_path: Path) -> None:
    store = _build(tmp_path / "s.db")
    first = {s.id: (s.grades, s.failures) for s in store.grades.grade_sets()}
    kept = store.tallies.kept_counts()
    assert set(kept) == set(first)
    grade_set = store.grades.grade_sets()[0]
    with store.transaction():
        store.grades.upsert_grades(grade_set.id, [Grade("q0", "q0p0", "new", grade_set.step, "m", "v", None, "failed")])
    assert grade_set.id not in store.tallies.kept_counts()
    after = {s.id: (s.grades, s.failures) for s in store.grades.grade_sets()}
    assert after[grade_set.id] == (first[grade_set.id][0] + 1, first[grade_set.id][1] + 1)
    raw_write(store.path, "DELETE FROM grades WHERE item = (SELECT item FROM grade_items WHERE question_id = 'new')")
    # ^ any writer, not only Store's methods
    assert {s.id: (s.grades, s.failures) for s in store.grades.grade_sets()} == first
    changed = raw_write(store.path, "UPDATE grades SET parse_status = 'failed', grade = NULL WHERE series = (SELECT"
                        " series FROM grade_series WHERE grade_set_id = ? AND step = ?) AND parse_status != 'failed'"
                        " AND passage_id = 'q1p1'", (grade_set.id, grade_set.step))
    assert changed > 0
    recount = {step: per["failed"] for step, per in store.tallies.recount(grade_set.id).items() if "failed" in per}
    assert store.grades.step_statuses(grade_set.id)[grade_set.step]["failed"] == recount[grade_set.step]
    assert store.counts()["grades"] == sum(n for s in store.grades.grade_sets()
                                           for per in store.tallies.recount(s.id).values() for n in per.values())
    store.close()


def test_stores_without_kept_counts_open_read_only_and_writable(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _build(path)
    expected = [(s.id, s.grades, s.failures) for s in store.grades.grade_sets()]
    store.close()
    for name in ("grade_set_counts_insert", "grade_set_counts_update", "grade_set_counts_delete"):
        raw_write(path, f"DROP TRIGGER {name}")
    raw_write(path, "DROP TABLE grade_set_counts")  # as a store of an earlier schema written before the kept counts
    raw_write(path, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    read_only = Store.open(path, read_only=True)
    assert [(s.id, s.grades, s.failures) for s in read_only.grades.grade_sets()] == expected
    read_only.close()
    store = Store.open(path)
    assert [(s.id, s.grades, s.failures) for s in store.grades.grade_sets()] == expected
    assert len(store.schema.names("grade_set_counts")) == 4
    store.close()


def test_release_010_fixture_still_opens(tmp_path: Path) -> None:
    source = Path(__file__).parent / "data" / "store-v1" / "store-v1.sqlite"
    copy = tmp_path / "v1.sqlite"
    copy.write_bytes(source.read_bytes())
    store = Store.open(copy)
    sets = store.grades.grade_sets()
    assert sets and all(s.grades == sum(store.tallies.recount(s.id).get(s.step, {}).values()) for s in sets)
    store.close()


def test_trec_eval_order_by_two_stable_sorts_equals_the_pairwise_order() -> None:
    from proctor.io.runs import _Desc, order
    rnd = random.Random(7)
    for _ in range(2000):
        scores = {f"{rnd.choice(['', 'd', 'D', '1', '10'])}{rnd.randint(0, 40)}":
                  rnd.choice([0.0, -0.0, 1.0, 2.5, -3.0, float(rnd.randint(0, 5)), rnd.random(), float("inf")])
                  for _ in range(rnd.randint(0, 30))}
        reference = [pid for pid, _ in sorted(scores.items(), key=lambda item: (-item[1], _Desc(item[0])))]
        assert order(scores) == reference
    assert order({"a": float("nan"), "b": 1.0}) == [p for p, _ in sorted(
        {"a": float("nan"), "b": 1.0}.items(), key=lambda item: (-item[1], _Desc(item[0])))]


def test_rankings_sorted_by_sqlite_equal_trec_eval_order(tmp_path: Path) -> None:
    from proctor.io.runs import order_runs
    rnd = random.Random(3)
    store = Store.create_or_open(tmp_path / "r.db")
    ids = ["a", "B", "b", "10", "9", "ä", "é", "z\u00e9", "\u4e2d", "😀", "a~1", "a/2"]
    with store.transaction():
        store.corpus.upsert_rankings((f"run{r}", f"q{q}", pid, rank, rnd.choice([0.0, -0.0, 1.5, -2.0, 3.0, 1e300,
                                                                                 -1e-300]))
                              for r in range(3) for q in range(4) for rank, pid in enumerate(rnd.sample(ids, 9)))
    assert store.corpus.ranked_lists() == order_runs(store.corpus.rankings())
    store.close()


def test_runs_listed_by_index_lookups_equal_distinct(tmp_path: Path) -> None:
    store = Store.create_or_open(tmp_path / "e.db")
    assert store.corpus.runs() == [] and store.counts()["runs"] == 0
    store.close()
    store = _build(tmp_path / "s.db")
    distinct = sorted({row[0] for row in store.corpus.ranking_rows()})
    assert store.corpus.runs() == distinct and store.counts()["runs"] == len(distinct) == 6
    store.close()
