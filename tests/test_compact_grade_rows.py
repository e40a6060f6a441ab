"""Compact grade rows (store schema 3). A grade row names its (grade set, step), question and writing
time by small integers; a store of schema 2 migrates on first open with every grade, count, label and
leaderboard unchanged, and every write keeps its meaning and keeps the caches valid."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from conftest import raw_rows, raw_write
from inprocess import copy_store
from proctor import api
from proctor.errors import UsageError
from proctor.records import Grade, GradeSet
from proctor.store import Store
from proctor.store.schema import SCHEMA_V2, SCHEMA_VERSION

A = GradeSet("self-rating", "m", "v1", None, None, {"source": "test"}, "self-rating")
B = GradeSet("four-prompts", "m", "v1", None, None, {"source": "test"}, "four-prompts")
C = GradeSet("self-rating", "m", "v1", None, None, {"source": "carried"}, "self-rating")
HASHES = ("zz", "b", "a10", "a9")
"""Question suffixes in an order that is not their text order: item numbers are not question order."""
DAY1, DAY2 = "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"

V2_TRIGGERS = (  # what a schema-2 store of the previous release holds: caches keyed by grade set, triggers on it
    "CREATE TABLE grade_set_counts (grade_set_id TEXT PRIMARY KEY, counts TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TRIGGER grade_set_counts_insert AFTER INSERT ON grades BEGIN"
    " DELETE FROM grade_set_counts WHERE grade_set_id = NEW.grade_set_id; END",
    "CREATE TABLE label_cache (grade_set_id TEXT NOT NULL, step TEXT NOT NULL, query_id TEXT NOT NULL,"
    " pairs TEXT NOT NULL, PRIMARY KEY (grade_set_id, step, query_id)) WITHOUT ROWID",
    "CREATE TRIGGER label_cache_update AFTER UPDATE ON grades BEGIN"
    " DELETE FROM label_cache WHERE grade_set_id IN (OLD.grade_set_id, NEW.grade_set_id); END",
)


def _grade(q: int, j: int, h: str, step: str, n: int) -> Grade:
    grade = None if n % 7 == 0 else n % 6
    return Grade(f"q{q}", f"q{q}p{j}", f"q{q}/{h}", step, "m", "v1", grade, "failed" if grade is None else "ok",
                 f"reply {n}", None if n % 3 == 0 else f"answer {n}", None if n % 4 == 0 else n % 2 == 0,
                 {"n": n} if n % 5 == 0 else None)


def _fill(store: Store) -> None:
    """Three grade sets (one of two steps, one carried), failed and retried grades, two writing times."""
    with store.transaction():
        store.corpus.upsert_rankings((f"run{r}", f"q{q}", f"q{q}p{j}", rank, float((r * 7 + j * 3 + q) % 5))
                              for r in range(3) for q in range(4) for rank, j in enumerate(range(r, r + 10)))
        for grade_set in (A, B, C):
            store.grades.ensure_grade_set(grade_set)
        for k, h in enumerate(HASHES):  # one write per question suffix: they are numbered in this order
            store.grades.upsert_grades(A.id, [_grade(q, j, h, "self-rating", q * 100 + j * 5 + k)
                                       for q in range(4) for j in range(13)], DAY1)
        store.grades.upsert_grades(B.id, [_grade(q, j, h, step, q * 50 + j * 3 + k + len(step))
                                   for step in ("criteria", "four-prompts")
                                   for q in range(3) for j in range(6) for k, h in enumerate(HASHES[:2])], DAY1)
        failed = [g for g in store.grades.records(A) if g.parse_status == "failed"][:5]
        store.grades.upsert_grades(A.id, failed, DAY2, attempt=True)  # tried again, failed again: attempts 2
        store.grades.upsert_grades(A.id, [_grade(0, 0, "zz", "self-rating", 5)], DAY2)  # changed content
        store.grades.carry_grades(C.id, A.id, "self-rating", ["q1/b", "q2/a9", "q3/zz"])


def _reads(store: Store) -> dict:
    """Every read of grades through `Store` and the API, in the order each returns."""
    out: dict = {"sets": [(s.id, s.method, s.step, s.grades, s.failures) for s in store.grades.grade_sets()],
                 "counts": {k: v for k, v in store.counts().items() if k != "store"}, "dump": store.dump()}
    for grade_set in (A, B, C):
        gid = grade_set.id
        out[gid, "statuses"] = store.grades.step_statuses(gid)
        out[gid, "grades"] = list(store.grades.records(grade_set))
        for step in ("self-rating", "criteria", "four-prompts"):
            out[gid, step] = (list(store.grades.grade_rows(gid, step)), list(store.grades.graded(gid, step).items()),
                              sorted(store.grades.exhausted(gid, step, 2)), list(store.tallies.label_histogram(gid,
                                                                                                               step)),
                              list(store.tallies.graded_questions(gid, step)), list(store.tallies.answered(gid, step,
                                                                                                           2)),
                              list(store.caches.top_grades(gid, step)), store.review.grade_progress(gid, step),
                              store.review.query_grades(gid, step, "q1"), list(store.grades.records(grade_set, step)))
        out[gid, "detail"] = store.review.grade_detail(gid, "q0", "q0p0", "q0/zz")
    labels = api.LabelChoice(grade_set=A.id)
    out["qrels"] = api.labels(store, labels).qrels
    out["boards"] = [api.render(api.leaderboard(store, m, min_grade=2, labels=labels))
                     for m in ("P@5", "ndcg_cut.10")]
    out["cover"] = api.render(api.leaderboard(store, "Cover(rel=3)@5", labels=labels))
    out["qrels2"] = api.labels(store, api.LabelChoice(grade_set=A.id, min_questions=2)).qrels
    return out


def _schema_2_copy(store: Store, path: Path) -> None:
    """The same content in a store of schema 2, as the previous release wrote it (its grades table, caches and
    triggers)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(SCHEMA_V2)
    for statement in V2_TRIGGERS:
        db.execute(statement)
    db.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    db.execute("ATTACH ? AS new", (str(store.path),))
    for table in ("queries", "passages", "rankings", "judgments", "grade_sets"):
        db.execute(f"INSERT INTO main.{table} SELECT * FROM new.{table}")
    db.execute("DETACH new")
    db.executemany("INSERT INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", store.dump()["grades"])
    db.execute("INSERT INTO grade_set_counts VALUES (?, '{}')", (A.id,))  # wrong on purpose: must not survive
    db.execute("INSERT INTO label_cache VALUES (?, 'self-rating', 'q0', '[]')", (A.id,))
    db.close()


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> tuple[Path, Path]:
    """A schema-3 store file with the content, and a schema-2 file with the same content; built once (many
    small writes: seconds on a busy disk) and copied by `stores`."""
    folder = tmp_path_factory.mktemp("compact")
    store = Store.create_or_open(folder / "v3.db")
    _fill(store)
    _schema_2_copy(store, folder / "v2.db")
    store.close()
    return folder / "v3.db", folder / "v2.db"


@pytest.fixture
def stores(filled, tmp_path: Path) -> tuple[Store, Path]:
    """A schema-3 store with the content, and a schema-2 file with the same content (fresh copies)."""
    v3, v2 = filled
    shutil.copyfile(v2, tmp_path / "v2.db")  # as written: a schema-2 file under a rollback journal
    return Store.open(copy_store(v3, tmp_path / "v3.db")), tmp_path / "v2.db"


def test_grade_rows_hold_numbers_and_reads_give_names_in_text_order(stores) -> None:
    store, _ = stores
    columns = store.schema.columns("grades")
    assert columns[:4] == ["series", "query_id", "passage_id", "item"] and "batch" in columns
    assert not {"grade_set_id", "step", "question_id", "created"} & set(columns)
    assert raw_rows(store.path, "SELECT COUNT(*) FROM grade_series") == [(4,)]  # A, C and B's two steps
    assert raw_rows(store.path, "SELECT created FROM grade_batches ORDER BY batch") == [(DAY1,), (DAY2,)]
    assert raw_rows(store.path, "SELECT typeof(series), typeof(item), typeof(batch) FROM grades") \
        == [("integer",) * 3] * store.counts()["grades"]
    items = [r[0] for r in raw_rows(store.path, "SELECT question_id FROM grade_items WHERE question_id LIKE 'q0/%'"
                                               " ORDER BY item")]
    assert items == ["q0/zz", "q0/b", "q0/a10", "q0/a9"]  # numbered as written, not in text order ...
    rows = list(store.grades.grade_rows(A.id, "self-rating"))
    assert [r[2] for r in rows[:4]] == ["q0/a10", "q0/a9", "q0/b", "q0/zz"]  # ... read in text order
    assert rows == sorted(rows, key=lambda r: r[:3])
    detail = store.review.grade_detail(A.id, "q0", "q0p0", "q0/zz")
    # failed, tried again (attempts 2), then imported with new content (attempts kept) on DAY2
    assert detail[0]["created"] == DAY2 and detail[0]["raw_reply"] == "reply 5" and detail[0]["attempts"] == 2


def test_a_grade_row_takes_under_60_bytes(tmp_path: Path) -> None:
    """DL19-like ids (7-digit query and passage ids, question ids `query/md5`): the rows spelled out as
    schema 2 kept them take almost three times the room."""
    store = Store.create_or_open(tmp_path / "s.db")
    grade_set = GradeSet("self-rating", "flan-t5-large", "v1", None, None, {"source": "exampp"}, "self-rating")
    rows = [("self-rating", f"{1037798 + q}", f"{8412680 + 997 * p}",
             f"{1037798 + q}/{hashlib.md5(bytes([q, h])).hexdigest()}", str(h % 6), h % 6, "imported", str(h % 6),
             None, None)
            for q in range(10) for p in range(200) for h in range(10)]
    with store.bulk_transaction():
        store.grades.ensure_grade_set(grade_set)
        store.grades.upsert_grade_rows(grade_set.id, rows, "2026-11-23T10:51:22+00:00")
    store.close()
    size = _table_bytes(store.path, "grades") / len(rows)
    v2 = sqlite3.connect(":memory:")
    v2.executescript(SCHEMA_V2)
    v2.executemany("INSERT INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                   ((grade_set.id, *row, "2026-11-23T10:51:22+00:00") for row in rows))
    before = v2.execute("SELECT SUM(pgsize) FROM dbstat WHERE name = 'grades'").fetchone()[0] / len(rows)
    assert size < 60 and before > 2.5 * size, (size, before)


def _table_bytes(path: Path, table: str) -> int:
    raw_write(path, "VACUUM")
    return raw_rows(path, "SELECT SUM(pgsize) FROM dbstat WHERE name = ?", (table,))[0][0]


def test_a_schema_2_store_migrates_with_every_read_identical(stores) -> None:
    store, v2 = stores
    expected = _reads(store)
    migrated = Store.open(v2)
    assert migrated.migration_note.startswith(f"migrated the store from schema 2 to 3: "
                                              f"{len(expected['dump']['grades'])} grades in compact rows; ")
    assert migrated.schema.version() == SCHEMA_VERSION
    assert migrated.caches.kept_rows("label_cache") == 0  # emptied: recomputed
    triggers = {name for name, _ in migrated.schema.triggers("grades")}
    assert triggers == {f"{cache}_{event}" for cache in ("grade_set_counts", "label_cache", "cover_cache")
                        for event in ("insert", "update", "delete")}
    got = _reads(migrated)
    for key in expected:
        assert got[key] == expected[key], key
    assert _reads(migrated) == expected  # now from the refilled caches
    migrated.close()
    again = Store.open(v2)
    assert again.migration_note is None
    again.close()


def test_writes_after_migration_behave_as_on_a_new_store(stores) -> None:
    store, v2 = stores
    migrated = Store.open(v2)
    results = []
    for db in (store, migrated):
        list(db.caches.top_grades(A.id, "self-rating"))  # fill the caches, which every write must drop
        db.grades.grade_sets()
        unchanged = [g for g in db.grades.records(A) if g.query_id == "q2"]
        db.grades.upsert_grades(A.id, unchanged, "2026-03-01T00:00:00+00:00")  # same content: nothing written
        assert db.caches.kept_rows("label_cache") > 0
        assert {d["created"] for d in db.review.grade_detail(A.id, "q2", "q2p0", "q2/b")} == {DAY1}
        db.grades.upsert_grades(A.id, unchanged[:1], "2026-03-01T00:00:00+00:00", attempt=True)  # an attempt rewrites
        assert db.caches.kept_rows("label_cache") == 0
        first = unchanged[0]
        assert db.review.grade_detail(A.id, first.query_id, first.passage_id, first.question_id)[0]["attempts"] == 2
        usable = {k for k in db.grades.graded(A.id, "self-rating") if k[2] in ("q0/a9", "q1/a10")}
        assert db.grades.carry_grades(C.id, A.id, "self-rating", ["q0/a9", "q1/a10"]) == len(usable) > 0
        assert db.grades.carry_grades(C.id, A.id, "self-rating", ["q0/a9", "q1/b"]) == 0  # kept, not copied twice
        assert {k for k in db.grades.graded(C.id, "self-rating") if k[2] in ("q0/a9", "q1/a10")} == usable
        assert all(g.extra["carried_from"] == A.id for g in db.grades.records(C) if g.question_id == "q0/a9")
        failed = db.grades.step_statuses(A.id)["self-rating"]["failed"]
        assert db.grades.exhausted(A.id, "self-rating", 2) and failed > 0
        assert db.grades.forget_failed(A.id) == {"self-rating": failed}
        assert db.grades.exhausted(A.id, "self-rating", 1) == set()
        assert "failed" not in db.grades.step_statuses(A.id)["self-rating"]
        assert db.grades.drop_grade_set(B.id) == 72 and B.id not in {s.id for s in db.grades.grade_sets()}
        assert raw_rows(db.path, "SELECT COUNT(*) FROM grade_series WHERE grade_set_id = ?", (B.id,)) == [(0,)]
        results.append(_reads(db))
    assert results[0] == results[1]


def test_raw_writes_to_grades_still_drop_the_kept_counts_and_labels(stores) -> None:
    _, v2 = stores
    store = Store.open(v2)
    before = {s.id: s.grades for s in store.grades.grade_sets()}
    top = list(store.caches.top_grades(A.id, "self-rating"))
    raw_write(store.path, "DELETE FROM grades WHERE query_id = 'q3' AND series ="
              " (SELECT series FROM grade_series WHERE grade_set_id = ?)", (A.id,))
    kept = store.caches.kept_grade_sets("grade_set_counts")
    assert A.id not in kept and B.id in kept  # only the grade set written to is recounted
    assert store.caches.kept_rows("label_cache", A.id) == 0
    assert list(store.caches.top_grades(A.id, "self-rating")) == [r for r in top if r[0] != "q3"]
    after = {s.id: s.grades for s in store.grades.grade_sets()}
    assert after[A.id] == before[A.id] - 13 * 4 and after[B.id] == before[B.id]
    raw_write(store.path, "UPDATE grades SET grade = 5 WHERE passage_id = 'q0p1'")
    assert A.id not in store.caches.kept_grade_sets("grade_set_counts")
    assert [r for r in store.caches.top_grades(A.id, "self-rating") if r[1] == "q0p1"][0][2] == 5


def test_a_read_only_schema_2_store_is_refused_clearly_and_copies_migrate(stores, tmp_path: Path) -> None:
    store, v2 = stores
    with pytest.raises(UsageError, match="schema 2 is migrated when first opened, but this one cannot be written"):
        Store.open(v2, read_only=True)
    copy = Store.copy_of(v2, tmp_path / "copy.db")  # what a dry run reads: the copy migrates, the store stays
    assert copy.migration_note and copy.dump() == store.dump()
    assert raw_rows(v2, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]
    os.chmod(v2, stat.S_IRUSR)
    try:
        if not os.access(v2, os.W_OK):  # (root writes read-only files all the same)
            with pytest.raises(UsageError, match="cannot be written"):
                Store.open(v2)
    finally:
        os.chmod(v2, stat.S_IRUSR | stat.S_IWUSR)


def test_a_process_that_waited_for_another_ones_migration_does_not_migrate_again(stores) -> None:
    from proctor.store.schema import migrate_v1, migrate_v2

    store, v2 = stores
    waiting = sqlite3.connect(v2, isolation_level=None)  # opened while the store was of schema 2
    Store.open(v2).close()  # another process migrates first
    assert migrate_v2(waiting) is None and migrate_v1(waiting, DAY1) is None and not waiting.in_transaction
    waiting.close()
    again = Store.open(v2)
    assert again.migration_note is None and again.dump() == store.dump()
