"""One schema: a new store holds every table from the start (schema 7), and a store of schema 4 (whose kept
counts, caches, batch, probe and review tables came with an opening or a first use) migrates to it when first
opened writable, reading the same; read-only, it is read as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import held_write_lock, raw_rows, raw_write
from proctor.errors import UsageError
from proctor.records import Grade, GradeSet
from proctor.store import Store
from proctor.store.schema import ADDED_V5, SCHEMA, SCHEMA_VERSION, TABLES_V4

SET = GradeSet("self-rating", "m", "v1", None, None, {"source": "test"}, "self-rating")


def _store(path: Path, *, reviewed: bool) -> Store:
    store = Store.create_or_open(path)
    with store.transaction():
        store.corpus.upsert_queries([("q0", "bees"), ("q1", "honey")])
        store.corpus.upsert_passages([(f"q{q}p{p}", f"text {q} {p}") for q in range(2) for p in range(3)])
        store.corpus.upsert_rankings([("run0", f"q{q}", f"q{q}p{p}", p, 3.0 - p) for q in range(2) for p in range(3)])
        store.corpus.upsert_judgments([("q0", "q0p0", 1), ("q1", "q1p2", 0)])
        store.banks.add_bank_version("bank", "v1", "test", None, [
            {"question_id": f"q{q}/{i}", "query_id": f"q{q}", "kind": "question", "text": f"Question {i}?"}
            for q in range(2) for i in ("b", "a")])
        store.grades.ensure_grade_set(SET)
        store.grades.upsert_grades(SET.id, [
            Grade(f"q{q}", f"q{q}p{p}", f"q{q}/{i}", "self-rating", "m", "v1", (p + q) % 4, "ok")
            for q in range(2) for p in range(3) for i in ("a", "b")], "2026-01-01T00:00:00+00:00")
        if reviewed:
            store.review.add_review_judgment("q0", "q0p1", 2, "tester", SET.id)
            store.batches.add_batch_job("batch-1", SET.id, SET.step, "file-1", 6, "in_progress")
            store.probes.save_probe_report(SET.id, {"attacks": []}, "2026-01-02T00:00:00+00:00")
    return store


def _reads(store: Store) -> dict:
    return {"dump": store.dump(), "counts": store.counts(), "grade_sets": store.grades.grade_sets(),
            "top": list(store.caches.top_grades(SET.id, SET.step)),
            "cover": store.caches.cover_grades(SET.id, SET.step) is not None or store.read_only,
            "items": store.banks.bank_items("question", "bank", "v1"), "ranked": store.corpus.ranked_lists(),
            "review": store.review.review_judgments(), "jobs": store.batches.open_batch_jobs(SET.id),
            "probe": store.probes.probe_report(SET.id)}


def _names(statements: tuple[str, ...]) -> set[str]:
    return {s.split(" IF NOT EXISTS ")[1].split()[0] for s in statements}


def test_a_new_store_holds_every_table_of_the_schema(tmp_path):
    store = Store.create_or_open(tmp_path / "s.db")
    assert store.schema.version() == SCHEMA_VERSION == 7
    assert _names(SCHEMA) <= store.schema.names() and len(_names(SCHEMA)) == len(SCHEMA)
    assert {"batch_jobs", "probe_sets", "review_audit", "cover_cache_update"} <= store.schema.names()
    store.close()


def test_a_schema_4_store_with_every_table_migrates_and_reads_the_same(tmp_path):
    path = tmp_path / "s.db"
    store = _store(path, reviewed=True)
    expected = _reads(store)
    store.close()
    raw_write(path, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    migrated = Store.open(path)
    assert migrated.migration_note is None and migrated.schema.version() == SCHEMA_VERSION
    assert _reads(migrated) == expected
    migrated.close()


def test_a_schema_4_store_without_the_later_tables_reads_the_same_read_only_and_migrated(tmp_path):
    path = tmp_path / "s.db"
    store = _store(path, reviewed=False)
    expected = _reads(store)
    names = {n for n in _names(ADDED_V5) if n in store.schema.names()}
    store.close()
    for kind in ("trigger", "index", "table"):  # as schema 4 left a store never opened writable since
        for (name,) in raw_rows(path, "SELECT name FROM sqlite_master WHERE type = ?", (kind,)):
            if name in names or name == "question_positions":
                raw_write(path, f'DROP {kind.upper()} "{name}"')
    raw_write(path, "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    reader = Store.open(path, read_only=True)
    assert reader.schema.version() == 4 and not names & reader.schema.names()
    assert {k: v for k, v in _reads(reader).items() if k != "items"} == {
        k: v for k, v in expected.items() if k != "items"}
    assert {q: [i for i, _, _ in items] for q, items in reader.banks.bank_items("question", "bank", "v1").items()} \
        == {"q0": ["q0/a", "q0/b"], "q1": ["q1/a", "q1/b"]}  # without the kept order: by id
    copy = reader.copy_to(tmp_path / "copy.db")  # a copy is a store like any opened one: migrated
    assert copy.schema.version() == SCHEMA_VERSION and names <= copy.schema.names()
    copy.close()
    reader.close()
    # another writer while the migration would run: the lock is named, not a read-only file
    with held_write_lock(path), pytest.raises(UsageError, match="another process is writing"):
        Store.open(path, lock_timeout=0.2)
    migrated = Store.open(path)
    assert migrated.migration_note is None and migrated.schema.version() == SCHEMA_VERSION
    assert names | _names((TABLES_V4["question_positions"],)) <= migrated.schema.names()
    got = _reads(migrated)
    assert {k: v for k, v in got.items() if k != "items"} == {k: v for k, v in expected.items() if k != "items"}
    migrated.close()


def test_the_store_is_a_small_facade_over_repositories(tmp_path):
    store = Store.create_or_open(tmp_path / "facade.db")
    try:
        public = sorted(a for a in dir(store) if not a.startswith("_"))
        assert len(public) <= 30, public
        for area in ("corpus", "banks", "grades", "tallies", "caches", "imports", "review", "batches", "probes"):
            assert type(getattr(store, area)).__module__.startswith("proctor.store.")
        assert not hasattr(store, "upsert_queries")  # the repositories' methods are not the facade's
    finally:
        store.close()


def test_a_schema_6_store_reads_the_same_read_only_and_keeps_graded_questions_once_migrated(tmp_path):
    path = tmp_path / "s.db"
    store = _store(path, reviewed=False)
    questions = list(store.tallies.graded_questions(SET.id, SET.step))  # kept with the labels in schema 7
    expected = _reads(store)
    store.close()
    raw_write(path, "UPDATE label_cache SET questions = NULL")
    raw_write(path, "ALTER TABLE label_cache DROP COLUMN questions")  # as schema 6 kept its labels
    raw_write(path, "UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    reader = Store.open(path, read_only=True)
    assert reader.schema.version() == 6 and "questions" not in reader.schema.columns("label_cache")
    assert list(reader.tallies.graded_questions(SET.id, SET.step)) == questions  # gathered from the grades
    assert reader.caches.kept_questions(SET.id, SET.step) is None and _reads(reader)["top"] == expected["top"]
    reader.close()
    migrated = Store.open(path)
    assert migrated.migration_note is None and migrated.schema.version() == SCHEMA_VERSION
    assert "questions" in migrated.schema.columns("label_cache")
    assert migrated.caches.kept_rows("label_cache") == 2  # the kept labels stay; their questions kept when read
    assert list(migrated.tallies.graded_questions(SET.id, SET.step)) == questions
    assert len(migrated.caches.kept_questions(SET.id, SET.step)) == 2 and _reads(migrated) == expected
    migrated.close()
