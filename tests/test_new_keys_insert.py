"""Content rows written by a plain insert first (`store.repository.insert_new_first`): the store ends exactly as
the upsert alone leaves it, whatever a batch holds (new keys, known keys with the same or other values, a key twice
in one batch), counts the same changes (no INSERT trigger here changes anything), and an import's guard still sees
every change of a stored row."""

from __future__ import annotations

import random
import shutil
import sqlite3

import pytest

from conftest import raw_rows
from proctor.records import GradeSet
from proctor.store import Store
from proctor.store.repository import ROWS_PER_INSERT, insert_new_first, insert_shared


def _rankings(rng: random.Random, n: int, passages: int) -> list[tuple[str, str, str, int, float]]:
    """Rankings over a few runs, queries and `passages`, so that batches repeat keys (same or other values)."""
    return [(f"run{rng.randrange(3)}", f"q{rng.randrange(3)}", f"p{rng.randrange(passages)}", rng.randrange(1, 3),
             float(rng.randrange(2))) for _ in range(n)]


def _write(path, batches: list[list[tuple]], *, as_lists: bool) -> list[int]:
    """Write each batch of rankings in its own transaction (lists: the plain insert first; generators: the upsert
    alone); the store's change count after each."""
    store = Store.create_or_open(path)
    changes = []
    try:
        for batch in batches:
            with store.transaction():
                before = store.db.total_changes
                store.corpus.upsert_rankings(list(batch) if as_lists else (row for row in batch))
                changes.append(store.db.total_changes - before)
    finally:
        store.close()
    return changes


@pytest.mark.parametrize(("seed", "size", "passages"), [(seed, 12, 6) for seed in range(4)]
                         + [(seed, 3 * ROWS_PER_INSERT, 300) for seed in range(4)])
def test_the_store_ends_as_the_upsert_alone_leaves_it(tmp_path, seed, size, passages):
    """Small batches over few keys (known keys in almost every batch), and batches of several statements of plain
    inserts over many keys (a known key in the first, a later or no statement)."""
    rng = random.Random(seed)
    batches = [_rankings(rng, rng.randrange(1, size), passages) for _ in range(8)]
    Store.create_or_open(tmp_path / "empty.db").close()
    for name in ("lists.db", "upserts.db"):
        shutil.copy(tmp_path / "empty.db", tmp_path / name)
    assert _write(tmp_path / "lists.db", batches, as_lists=True) == \
        _write(tmp_path / "upserts.db", batches, as_lists=False)
    dump = "SELECT * FROM rankings ORDER BY run, query_id, passage_id"
    assert raw_rows(tmp_path / "lists.db", dump) == raw_rows(tmp_path / "upserts.db", dump)
    assert raw_rows(tmp_path / "lists.db", dump)  # something was written


def test_a_known_row_with_other_values_goes_through_the_guard(tmp_path):
    store = Store.create_or_open(tmp_path / "s.db")
    try:
        with store.transaction():
            store.corpus.upsert_rankings([("run", "q", "p1", 1, 2.0)])
        with pytest.raises(sqlite3.IntegrityError, match="contradicts the store"):  # noqa: SIM117
            with store.transaction(), store.imports.guarded(False) as guard:
                store.corpus.upsert_rankings([("run", "q", "p0", 1, 3.0), ("run", "q", "p1", 2, 2.0)])
        assert guard.refused is not None and guard.refused.table == "rankings"
    finally:
        store.close()
    assert raw_rows(tmp_path / "s.db", "SELECT passage_id, rank FROM rankings") == [("p1", 1)]  # rolled back


@pytest.mark.parametrize("bad", [1, ROWS_PER_INSERT + 3, 2 * ROWS_PER_INSERT + 1])
def test_a_row_the_table_refuses_is_refused_as_before(tmp_path, bad):
    """A row the table refuses (in the first statement of plain inserts, a later one, or among the rest)."""
    rows = [("q", f"p{i}", 1) for i in range(2 * ROWS_PER_INSERT + 2)]
    rows[bad] = ("q", "bad", None)
    store = Store.create_or_open(tmp_path / "s.db")
    try:
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"), store.transaction():
            insert_new_first(store.db, "judgments", "(?, ?, ?, NULL)", "ON CONFLICT DO NOTHING", rows)
    finally:
        store.close()
    assert raw_rows(tmp_path / "s.db", "SELECT COUNT(*) FROM judgments") == [(0,)]


def test_rows_of_different_widths_are_refused(tmp_path):
    store = Store.create_or_open(tmp_path / "s.db")
    try:
        with pytest.raises(ValueError, match="different widths"), store.transaction():
            insert_new_first(store.db, "judgments", "(?, ?, ?, NULL)", "ON CONFLICT DO NOTHING",
                             [("q", "p1", 1), ("q", "p2"), ("q", "p3", 1, 2)])
    finally:
        store.close()


def _grade_batch(rng: random.Random, n: int, kind: str) -> list[tuple]:
    """An exam_pp line's grade rows of one query (`kind` "line"), or rows that break one of what the shared
    statement needs (another query, status, answer or an extra)."""
    query = f"q{rng.randrange(2)}"
    rows = []
    for _ in range(n):
        raw = rng.choice(["0", "3", "5", None])
        row = [query, f"p{rng.randrange(40)}", f"{query}/{rng.randrange(12)}", raw, rng.choice([0, 3, 5, None]),
               "imported", raw, rng.choice([True, False, None]), None]
        rows.append(row)
    if kind != "line" and rows:
        column, value = {"query": (0, "q9"), "status": (5, "ok"), "answer": (6, "another"), "extra": (8, "{}")}[kind]
        rng.choice(rows)[column] = value
    return [tuple(row) for row in rows]


@pytest.mark.parametrize("seed", range(4))
def test_grade_rows_of_one_line_are_stored_as_the_upsert_alone_stores_them(tmp_path, seed, monkeypatch):
    """`GradeImport.write` binds a line's query once and the answer as the raw reply (`store.bulk._SHARED`) when
    the rows allow it; the grades table ends as `upsert_grade_rows` leaves it, whatever the batches hold."""
    import proctor.store.bulk as bulk

    shared = []
    monkeypatch.setattr(bulk, "insert_shared", lambda *args: shared.append(1) or insert_shared(*args))
    rng = random.Random(seed)
    kinds = ["line", "line", "query", "status", "answer", "extra"]
    batches = [_grade_batch(rng, rng.choice([1, 7, ROWS_PER_INSERT, 2 * ROWS_PER_INSERT + 3]), rng.choice(kinds))
               for _ in range(10)]
    dumps = []
    for name, bulk_write in (("bulk.db", True), ("upsert.db", False)):
        store = Store.create_or_open(tmp_path / name)
        with store.transaction():
            store.grades.ensure_grade_set(GRADES)
            for batch in batches:
                if bulk_write:
                    with store.grades.grade_import("2026-01-01T00:00:00+00:00") as writer:
                        writer.write(GRADES.id, GRADES.step, batch)
                else:
                    store.grades.upsert_grade_rows(GRADES.id, [(GRADES.step, *row[:7], row[7], row[8]) for row in
                                                               batch], "2026-01-01T00:00:00+00:00")
        store.close()
        dumps.append(sorted(raw_rows(tmp_path / name, "SELECT * FROM grades")))
    assert dumps[0] == dumps[1] and dumps[0]
    assert shared  # the shared statement wrote some of them


GRADES = GradeSet("self-rating", "m", "v", None, None, {"source": "test"}, "self-rating")


def test_a_line_whose_rankings_contradict_the_store_is_refused_naming_its_first_in_file_order(tmp_path):
    """The import inserts a line's new rankings grouped by run (`upsert_rankings(sorted_rows=...)`), but a line
    that meets stored keys goes through the upsert in the file's order: the refusal names the file's first."""
    import json

    from proctor.errors import InputError
    from proctor.importing import import_files

    def line(ranks: list[tuple[str, int, float]]) -> str:
        return json.dumps(["q1", [{"paragraph_id": pid, "paragraph_data": {"rankings": [
            {"method": "r", "queryId": "q1", "rank": rank, "score": score}]}} for pid, rank, score in ranks]]) + "\n"

    store = Store.create_or_open(tmp_path / "s.db")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(line([("p2", 1, 9.0), ("p1", 2, 8.0)]))
    second.write_text(line([("p2", 5, 1.0), ("p1", 4, 2.0)]))  # by score, p1 comes first
    import_files(store, "exampp", [first])
    with pytest.raises(InputError, match="'p2'") as err:
        import_files(store, "exampp", [second])
    assert "'p1'" not in str(err.value)


@pytest.mark.parametrize("seed", range(3))
def test_grade_blocks_are_stored_as_the_upsert_alone_stores_their_rows(tmp_path, seed):
    """`GradeImport.write_blocks` (an exam_pp line's entries as columns) ends as `upsert_grade_rows` of the same
    rows, whether a batch's keys are new (the shared statement) or some are stored already (the upsert)."""
    from proctor.io.exampp_rows import Blocks

    rng = random.Random(seed)
    batches = []
    for _ in range(8):
        query = f"q{rng.randrange(2)}"
        questions = [f"{query}/{i}" for i in sorted(rng.sample(range(12), rng.randrange(1, 6)))]
        blocks = Blocks((f"p{rng.randrange(30)}", questions, [rng.choice(["0", "4", None]) for _ in questions],
                         [rng.randrange(6) for _ in questions], [rng.choice([True, False, None]) for _ in questions])
                        for _ in range(rng.randrange(1, 2 * ROWS_PER_INSERT)))
        batches.append((query, blocks))
    dumps = []
    for name, bulk_write in (("bulk.db", True), ("upsert.db", False)):
        store = Store.create_or_open(tmp_path / name)
        with store.transaction():
            store.grades.ensure_grade_set(GRADES)
            for query, blocks in batches:
                if bulk_write:
                    with store.grades.grade_import("2026-01-01T00:00:00+00:00") as writer:
                        writer.write_blocks(GRADES.id, GRADES.step, query, blocks)
                else:
                    store.grades.upsert_grade_rows(GRADES.id, [(GRADES.step, *row) for row in blocks.rows(query)],
                                                   "2026-01-01T00:00:00+00:00")
        store.close()
        dumps.append(sorted(raw_rows(tmp_path / name, "SELECT * FROM grades")))
    assert dumps[0] == dumps[1] and dumps[0]


def test_a_line_whose_grades_contradict_the_store_is_refused_naming_its_first_in_file_order(tmp_path):
    """The import inserts a line's new grades by passage (`GradeImport.write_blocks`), but a line that meets stored
    keys goes through the upsert in the file's order: the refusal names the file's first contradicting grade."""
    import json

    from proctor.errors import InputError
    from proctor.importing import import_files

    def line(grades: dict[str, int]) -> str:
        return json.dumps(["q1", [{"paragraph_id": pid, "exam_grades": [{"llm": "m", "self_ratings": [
            {"question_id": "q1/h", "self_rating": grade}], "prompt_info": {"prompt_class": "P",
                                                                             "is_self_rated": True}}]}
            for pid, grade in grades.items()]]) + "\n"

    store = Store.create_or_open(tmp_path / "s.db")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(line({"z": 1, "a": 2}))
    second.write_text(line({"z": 3, "a": 4}))  # by passage, a comes first
    import_files(store, "exampp", [first])
    before = store.dump()
    with pytest.raises(InputError, match="passage_id 'z'") as err:
        import_files(store, "exampp", [second])
    assert "'a'" not in str(err.value) and err.value.line == 1
    assert store.dump() == before
