"""The EXAM-Cover cache gives exactly the numbers computed from every grade, is dropped by every write
to a grade set's grades (triggers), and a read-only or busy store, or grades it cannot hold, compute as before."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import random_store
from conftest import held_write_lock, raw_write
from proctor import api
from proctor.demo.write import write_collection
from proctor.evaluate.cover import CoverTable, n_exam
from proctor.evaluate.labels import LabelStats, labels_from_histogram
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard
from proctor.evaluate.sources import cover_table, cover_tables, exam_qrels, grade_rows, load_runs
from proctor.importing import import_files
from proctor.records import Grade, GradeSet
from proctor.store import Store

SETS = [GradeSet("self-rating", "m1", "v1", None, None, {"source": "test"}, "self-rating"),
        GradeSet("self-rating", "m2", "v1", None, None, {"source": "test"}, "self-rating")]
OPTIONS = [{}, {"normalize": "pool"}, {"normalize": "pool-per-query"}, {"missing": "skip"}, {"budget": 3},
           {"gold": "run0"}]


def _store(path: Path, seed: int = 16) -> Store:
    """Random grades: failures, passages graded on a subset of their query's questions, some queries never
    ranked and some runs missing queries."""
    rnd = random.Random(seed)
    ranked = random_store.rankings(rnd, 5, [f"q{q}" for q in range(7)], pool=15, depth=12, top_score=5, keep=0.9)
    graded = [(s, random_store.grades(rnd, s, [f"q{q}" for q in range(8)], (3, 15), (1, 12), question="{q}/h{k:02d}",
                                      keep=0.8)) for s in SETS]
    return random_store.random_store(path, ranked, graded)


def _numbers(board: Leaderboard) -> list:
    return [[(e.system, e.score, e.stderr, e.n_queries, e.per_query) for e in rows]
            for rows in (board.entries, board.references)] + [board.notes, board.description]


def _boards(store: Store, grade_set: GradeSet, table_of) -> list:
    runs = load_runs(store, None)
    return [_numbers(cover_leaderboard(runs, table_of(tau), **options)) for tau in range(0, 7) for options in OPTIONS]


def _uncached(store: Store, grade_set: GradeSet) -> list:
    """Every leaderboard from a table built from every grade (the definition)."""
    def table_of(tau: int) -> CoverTable:
        table = CoverTable.build(grade_rows(store, grade_set), tau)
        table.add_bank({})
        return table
    return _boards(store, grade_set, table_of)


def _cached(store: Store, grade_set: GradeSet) -> list:
    return _boards(store, grade_set, lambda tau: cover_table(store, grade_set, tau)[0])


_SERIES = "(SELECT series FROM grade_series WHERE grade_set_id = ?)"
"""The grade series (one per step) of a grade set, in raw SQL over schema-3 rows."""
_ITEM = "(SELECT item FROM grade_items WHERE question_id = 'q9/new')"


def _kept(store: Store, grade_set: GradeSet | None = None) -> int:
    return store.caches.kept_rows("cover_cache", grade_set.id if grade_set else None)


def _without_bank_note(rows: list) -> list:
    return [[n for n in part if not n.startswith("EXAM-Cover: the grade set has no bank")]
            if i == 2 else part for i, part in enumerate(rows)]


def _same(got: list, want: list) -> None:
    assert [_without_bank_note(b) for b in got] == [_without_bank_note(b) for b in want]


def test_the_cache_is_filled_once_and_gives_the_uncached_numbers(tmp_path):
    store = _store(tmp_path / "s.db")
    grade_set = store.grades.grade_sets()[0]
    want = _uncached(store, grade_set)
    assert _kept(store) == 0
    _same(_cached(store, grade_set), want)
    queries = len({qid for qid, _ in store.tallies.graded_questions(grade_set.id, grade_set.step)})
    assert _kept(store) == _kept(store, grade_set) == queries  # one row per query, the other set untouched
    kept = store.caches.cover_grades(grade_set.id, grade_set.step)
    assert kept is not None and [row[0] for row in kept] == sorted(row[0] for row in kept)
    assert all(len(grades) == len(questions) * len(passages) for _, questions, passages, grades in kept)
    assert any(MISSING in grades for *_, grades in kept)  # sparse grading and failures are both held
    _same(_cached(store, grade_set), want)  # read from the cache
    assert store.caches.cover_grades(grade_set.id, "other-step") is None


MISSING = "-"


def test_tables_of_every_tau_equal_the_definition(tmp_path):
    store = _store(tmp_path / "s.db", seed=3)
    for grade_set in store.grades.grade_sets():
        for tau, (table, _) in zip(range(7), cover_tables(store, grade_set, range(7)), strict=True):
            want = CoverTable.build(grade_rows(store, grade_set), tau)
            assert table.questions == want.questions
            for qid in want.questions:
                assert table.pool_covered(qid) == want.pool_covered(qid)
                for pid in {p for per in want.answered.values() for p in per} | {"nope"}:
                    assert table.covered(qid, [pid]) == want.covered(qid, [pid])


def test_every_write_drops_its_grade_sets_rows(tmp_path):
    store = _store(tmp_path / "s.db")
    first, second = store.grades.grade_sets()
    _cached(store, first), _cached(store, second)
    assert _kept(store, first) and _kept(store, second)
    kept_second = _kept(store, second)
    ranked = store.corpus.rankings()["run1"]["q0"]
    top = next((pid, qid) for pid, qid, grade, _ in store.review.query_grades(first.id, first.step, "q0")
               if grade is not None and grade < 5 and pid in ranked)
    insert = ("INSERT INTO grades (series, query_id, passage_id, item, grade, parse_status, batch)"
              f" VALUES ({_SERIES}, 'q9', 'q9p0', {_ITEM}, ?, 'ok', 1)")
    writes = [
        lambda: store.grades.upsert_grades(first.id, [Grade("q0", *top, "self-rating", "m1", "v1", 5, "ok")]),
        lambda: raw_write(store.path, f"UPDATE grades SET grade = 0 WHERE series IN {_SERIES} AND grade = 5",
                          (first.id,)),
        lambda: raw_write(store.path, f"DELETE FROM grades WHERE series IN {_SERIES} AND query_id = 'q1'", (first.id,)),
        lambda: raw_write(store.path, insert, (first.id, 4)),
        lambda: raw_write(store.path, insert + " ON CONFLICT DO UPDATE SET grade = 1", (first.id, 1)),  # a raw upsert
    ]
    raw_write(store.path, "INSERT OR IGNORE INTO grade_items (question_id) VALUES ('q9/new')")
    for write in writes:  # each changes some number: a stale cache would show
        before = _cached(store, first)
        assert _kept(store, first)
        write()
        assert _kept(store, first) == 0 and _kept(store, second) == kept_second
        after = _cached(store, first)
        _same(after, _uncached(store, first))
        assert after != before
    _cached(store, first)
    raw_write(store.path, f"UPDATE grades SET series = {_SERIES} WHERE series IN {_SERIES} AND query_id = 'q9'",
              (second.id, first.id))  # moved between grade sets: both dropped
    assert _kept(store) == 0
    _same(_cached(store, second), _uncached(store, second))
    assert "q9" in cover_table(store, second, 1)[0].questions


def test_a_read_only_or_busy_store_computes_from_the_grades(tmp_path):
    path = tmp_path / "s.db"
    store = _store(path)
    grade_set = store.grades.grade_sets()[0]
    want = _uncached(store, grade_set)
    store.close()
    reader = Store.open(path, read_only=True)
    assert reader.caches.cover_grades(grade_set.id, grade_set.step) is None
    _same(_cached(reader, grade_set), want)
    reader.close()
    with held_write_lock(path):  # another process holds the write lock: nothing is kept, nothing waits
        store = Store.open(path)
        assert store.caches.cover_grades(grade_set.id, grade_set.step) is None
        _same(_cached(store, grade_set), want)
    assert _kept(store) == 0
    _same(_cached(store, grade_set), want)
    assert _kept(store, grade_set)
    store.close()
    reader = Store.open(path, read_only=True)  # a read-only store reads what was kept
    assert reader.caches.cover_grades(grade_set.id, grade_set.step) is not None
    _same(_cached(reader, grade_set), want)


@pytest.mark.parametrize("grade", [75, -1, 2.5, "high"])
def test_grades_the_cache_cannot_hold_are_read_from_the_table(tmp_path, grade):
    store = _store(tmp_path / "s.db")
    grade_set = store.grades.grade_sets()[0]
    raw_write(store.path, f"UPDATE grades SET grade = ? WHERE series IN {_SERIES} AND query_id = 'q3' AND passage_id"
              " = (SELECT MIN(passage_id) FROM grades WHERE query_id = 'q3')", (grade, grade_set.id))
    want = _uncached(store, grade_set) if not isinstance(grade, str) else None
    assert store.caches.cover_grades(grade_set.id, grade_set.step) is None and _kept(store, grade_set) == 0
    got = _cached(store, grade_set)
    if want is not None:
        _same(got, want)
    raw_write(store.path, f"UPDATE grades SET grade = 3 WHERE series IN {_SERIES} AND grade = ?", (grade_set.id, grade))
    assert store.caches.cover_grades(grade_set.id, grade_set.step) is not None  # held again once the grade is


def test_a_question_id_holding_odd_characters_is_kept_and_read_back(tmp_path):
    store = _store(tmp_path / "s.db")
    grade_set = store.grades.grade_sets()[0]
    raw_write(store.path, "UPDATE grade_items SET question_id = 'q4/a' || char(31) || 'b,c'"
              " WHERE question_id = 'q4/h00'")
    kept = store.caches.cover_grades(grade_set.id, grade_set.step)
    assert kept is not None and "q4/a\x1fb,c" in {q for _, questions, _, _ in kept for q in questions}
    _same(_cached(store, grade_set), _uncached(store, grade_set))


def test_demo_collection_cover_identical_cached_and_uncached(tmp_path):
    paths = write_collection(tmp_path / "collection")
    store = Store.create_or_open(tmp_path / "s.db")
    for kind in ("queries", "corpus", "qrels", "bank", "exampp"):
        import_files(store, kind, [paths[kind]])
    import_files(store, "runs", sorted(paths["runs"].iterdir()))
    boards = {}
    for cached in (True, False):
        if not cached:
            assert _kept(store) == len(store.corpus.queries())  # the first pass read the cache
            raw_write(store.path, "DROP TABLE cover_cache")  # as a store of an earlier release, read-only
            store.read_only = True
        boards[cached] = [_numbers(api.leaderboard(store, measure))
                          for tau in range(1, 6) for budget in (1, 2, 20)
                          for measure in (f"Cover(rel={tau})@{budget}", f"NEXAM(rel={tau},norm=pool)@{budget}",
                                          f"NEXAM(rel={tau},norm=pool-per-query)@{budget}")]
    assert boards[True] == boards[False]
    assert any(row[0][1] not in (0.0, 1.0) for board in boards[True] for row in board[0])


def test_n_exam_counts_match_the_per_system_computation(tmp_path):
    store = _store(tmp_path / "s.db", seed=5)
    grade_set = store.grades.grade_sets()[1]
    runs = load_runs(store, None)
    table, _ = cover_table(store, grade_set, 2)
    board = cover_leaderboard(runs, table, normalize="pool")
    assert {e.system: e.score for e in board.entries} == {run: n_exam(ranked, table) for run, ranked in runs.items()}


@pytest.mark.parametrize("min_questions", [2, 3, 5, 13])
def test_labels_at_m_questions_from_the_cache_equal_the_histogram(tmp_path, min_questions):
    store = _store(tmp_path / "s.db")
    totals, positive = LabelStats(), False
    for grade_set in store.grades.grade_sets():
        want_stats, got_stats = LabelStats(), LabelStats()
        want = labels_from_histogram(store.tallies.label_histogram(grade_set.id, grade_set.step),
                                     min_questions=min_questions, stats=want_stats)
        got = exam_qrels(store, grade_set, min_questions=min_questions, stats=got_stats)
        assert _kept(store, grade_set)  # read from the cover cache
        assert got == want and vars(got_stats) == vars(want_stats)
        assert [(q, list(per)) for q, per in got.items()] == [(q, list(per)) for q, per in want.items()]  # order
        totals.failed += want_stats.failed
        totals.passages_without_grade += want_stats.passages_without_grade
        positive = positive or any(label > 0 for per in got.values() for label in per.values())
    assert totals.failed and totals.passages_without_grade and positive == (min_questions <= 5)
