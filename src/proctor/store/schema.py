"""The store's schema (version 4) and the migrations of stores of schema 1 (release 0.1.0), 2 and 3.

Schema 3 keeps grade rows compact: a grade names its (grade set, step) by a small integer (`grade_series`), its
question by one (`grade_items`) and the second it was written by one (`grade_batches`), so a row holds little
more than the query, the passage and the grade. Only `store/` reads these integers: every method of `Store`
takes and returns the grade set ids, steps, question ids and timestamps themselves.

Schema 4 records where content came from: `import_log` has one entry per imported file (kind, path, digest, time,
counts, what `--replace` replaced), and the rows of queries, passages, rankings and judgments name the entry that
wrote them (`origin`). Grades made from a text that was since replaced are moved to `stale_grades`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from proctor.records import grade_set_id
from proctor.store.caches import CACHE_SCHEMA
from proctor.store.tallies import COUNTS_SCHEMA

SCHEMA_VERSION = 4

QUESTION_POSITIONS = """CREATE TABLE IF NOT EXISTS question_positions (
    bank_id TEXT NOT NULL, version TEXT NOT NULL, question_id TEXT NOT NULL, position INTEGER NOT NULL,
    PRIMARY KEY (bank_id, version, question_id)) WITHOUT ROWID"""
"""Each bank version's order of its items (as imported or created); a store made before it has none, and its
banks' items go by id (`BankTables.bank_items`)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queries (query_id TEXT PRIMARY KEY, text TEXT, origin INTEGER);
CREATE TABLE IF NOT EXISTS passages (passage_id TEXT PRIMARY KEY, text TEXT, origin INTEGER);
CREATE TABLE IF NOT EXISTS rankings (
    run TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL,
    rank INTEGER NOT NULL, score REAL NOT NULL, origin INTEGER,
    PRIMARY KEY (run, query_id, passage_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS judgments (
    query_id TEXT NOT NULL, passage_id TEXT NOT NULL, relevance INTEGER NOT NULL, origin INTEGER,
    PRIMARY KEY (query_id, passage_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS banks (
    bank_id TEXT NOT NULL, version TEXT NOT NULL, seq INTEGER NOT NULL, source TEXT, info TEXT,
    created TEXT NOT NULL, PRIMARY KEY (bank_id, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS questions (
    bank_id TEXT NOT NULL, version TEXT NOT NULL, question_id TEXT NOT NULL, query_id TEXT NOT NULL,
    facet_id TEXT, kind TEXT NOT NULL, text TEXT NOT NULL, answers TEXT, info TEXT,
    PRIMARY KEY (bank_id, version, question_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS questions_by_id ON questions (question_id);
CREATE TABLE IF NOT EXISTS grade_sets (
    grade_set_id TEXT PRIMARY KEY, method TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    bank_id TEXT, bank_version TEXT, params TEXT NOT NULL, label_step TEXT NOT NULL, info TEXT,
    created TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS grade_series (
    series INTEGER PRIMARY KEY, grade_set_id TEXT NOT NULL, step TEXT NOT NULL, UNIQUE (grade_set_id, step));
CREATE TABLE IF NOT EXISTS grade_items (item INTEGER PRIMARY KEY, question_id TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS grade_batches (batch INTEGER PRIMARY KEY, created TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS grades (
    series INTEGER NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, item INTEGER NOT NULL,
    raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT, correct INTEGER, extra TEXT,
    batch INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (series, query_id, passage_id, item)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS grading_locks (
    grade_set_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, started TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, reply TEXT NOT NULL, created TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS response_segments (
    passage_id TEXT PRIMARY KEY, run TEXT NOT NULL, query_id TEXT NOT NULL, position INTEGER NOT NULL,
    citations TEXT, truncated INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS imports (
    kind TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL, imported_at TEXT NOT NULL,
    PRIMARY KEY (kind, sha256)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS import_log (
    entry INTEGER PRIMARY KEY, kind TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
    imported_at TEXT NOT NULL, counts TEXT, replaced TEXT);
CREATE TABLE IF NOT EXISTS stale_grades (
    series INTEGER NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, item INTEGER NOT NULL,
    raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT, correct INTEGER, extra TEXT,
    batch INTEGER NOT NULL, attempts INTEGER NOT NULL, why TEXT NOT NULL, staled_at TEXT NOT NULL);
""" + QUESTION_POSITIONS + ";\n"

GRADES_V2 = """CREATE TABLE IF NOT EXISTS grades (
    grade_set_id TEXT NOT NULL, step TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL,
    question_id TEXT NOT NULL, raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT,
    correct INTEGER, extra TEXT, created TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (grade_set_id, step, query_id, passage_id, question_id)) WITHOUT ROWID;
"""
"""The grades table of schema 2: one row per grade with every name spelled out."""

GRADES_V3 = SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS grade_series"):
                   SCHEMA.index("CREATE TABLE IF NOT EXISTS grading_locks")]
"""The grade tables of schema 3."""

SCHEMA_V2 = SCHEMA.replace(GRADES_V3, GRADES_V2)
"""The whole schema 2 (what `migrate_v1` writes; tests build schema-2 stores with it)."""

INTERMEDIATE_V1 = ("criteria", "query-gen-query")
"""Schema-1 methods whose grades only fed a later step."""


def migrate_v1(db: sqlite3.Connection, created: str) -> str | None:
    """Rewrite a schema-1 store as schema 2 inside one transaction (`migrate_v2` then makes it schema 3);
    returns a one-line note.

    Banks become version 1 of themselves; every (method, model, prompt version) of the old grades becomes
    a grade set, attached to the bank whose questions it graded when exactly one bank holds them all. None when
    another process migrated it first."""
    if not _begin_at(db, 1):
        return None
    with _committed(db):
        for table in ("banks", "questions", "grades"):
            db.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
        db.execute("DROP INDEX IF EXISTS questions_by_query")
        for statement in SCHEMA_V2.split(";"):
            if statement.strip():
                db.execute(statement)  # not executescript: that would commit the open transaction
        db.execute("INSERT INTO banks SELECT bank_id, version, 1, source, info, ? FROM old_banks", (created,))
        db.execute("INSERT INTO questions SELECT q.bank_id, b.version, q.question_id, q.query_id, q.facet_id,"
                   " q.kind, q.text, q.answers, q.info FROM old_questions q JOIN old_banks b USING (bank_id)")
        configs = _old_configs(db)
        owners = dict(db.execute("SELECT question_id, bank_id FROM old_questions"))
        versions = dict(db.execute("SELECT bank_id, version FROM old_banks"))
        groups = list(db.execute("SELECT DISTINCT method, model, prompt_version FROM old_grades"))
        for method, model, version in groups:
            questions = {r[0] for r in db.execute(
                "SELECT DISTINCT question_id FROM old_grades WHERE method = ? AND model = ? AND prompt_version = ?",
                (method, model, version))}
            banks = {owners.get(q) for q in questions}
            bank = banks.pop() if len(banks) == 1 and "" not in questions else None
            info = {"migrated_from": "schema 1", **(configs.get((method, model, version)) or {})}
            if method in INTERMEDIATE_V1:
                info["intermediate"] = True
            params = {"migrated": True}
            gid = grade_set_id(method, model, version, bank, versions.get(bank) if bank else None, params)
            db.execute("INSERT INTO grade_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (gid, method, model, version, bank, versions.get(bank) if bank else None,
                        json.dumps(params), method, json.dumps(info, sort_keys=True), created))
            db.execute("INSERT INTO grades SELECT ?, method, query_id, passage_id, question_id, raw_reply, grade,"
                       " parse_status, answer, correct, extra, created, 1 FROM old_grades"
                       " WHERE method = ? AND model = ? AND prompt_version = ?", (gid, method, model, version))
        for table in ("old_grades", "old_questions", "old_banks", "grade_configs"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    return f"migrated the store from schema 1 to 2: {len(groups)} grade sets (see `proctor info`)"


def migrate_v2(db: sqlite3.Connection) -> str | None:
    """Rewrite a schema-2 store's grades in the compact rows of schema 3 inside one transaction; returns a
    one-line note (None when another process migrated it first). The kept counts and caches of grades are
    emptied (recomputed when next read) and the triggers on `grades` made anew."""
    if not _begin_at(db, 2):
        return None
    with _committed(db):
        triggers = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'grades'")
        for (name,) in triggers.fetchall():
            db.execute(f'DROP TRIGGER "{name}"')
        for table in ("grade_set_counts", "label_cache", "cover_cache"):  # kept results of grades: made again
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute("ALTER TABLE grades RENAME TO old_grades")
        for statement in GRADES_V3.split(";"):
            if statement.strip():
                db.execute(statement)
        for table, columns in (("grade_series", "grade_set_id, step"), ("grade_items", "question_id"),
                               ("grade_batches", "created")):  # numbered in text order: rows keep their order
            db.execute(f"INSERT INTO {table} ({columns}) SELECT DISTINCT {columns} FROM old_grades ORDER BY {columns}")
        moved = db.execute(
            "INSERT INTO grades SELECT s.series, g.query_id, g.passage_id, i.item, g.raw_reply, g.grade,"
            " g.parse_status, g.answer, g.correct, g.extra, b.batch, g.attempts FROM old_grades g"
            " CROSS JOIN grade_series s CROSS JOIN grade_items i CROSS JOIN grade_batches b"
            " WHERE s.grade_set_id = g.grade_set_id AND s.step = g.step AND i.question_id = g.question_id"
            " AND b.created = g.created").rowcount
        db.execute("DROP TABLE old_grades")
        for statement in (*COUNTS_SCHEMA, *CACHE_SCHEMA):
            db.execute(statement)
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    return f"migrated the store from schema 2 to 3: {moved} grades in compact rows"


ORIGIN_TABLES = ("queries", "passages", "rankings", "judgments")
"""Tables whose rows name the import that wrote them (`origin`, an `import_log` entry; NULL before schema 4)."""


def migrate_v3(db: sqlite3.Connection, staled_at: str) -> str | None:
    """Give a schema-3 store the columns and tables of schema 4 inside one transaction; returns a one-line note
    (None when another process migrated it first). Grades of passages that have no text (made from an empty
    passage before schema 4) are moved to `stale_grades`: a passage without text is never graded."""
    if not _begin_at(db, 3):
        return None
    with _committed(db):
        for table in ORIGIN_TABLES:
            columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if "origin" not in columns:  # stores migrated from schema 1 or 2 have it already
                db.execute(f"ALTER TABLE {table} ADD COLUMN origin INTEGER")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        textless = "passage_id IN (SELECT passage_id FROM passages WHERE text IS NULL)"
        moved = db.execute(f"INSERT INTO stale_grades SELECT *, 'no passage text', ? FROM grades WHERE {textless}",
                           (staled_at,)).rowcount
        db.execute(f"DELETE FROM grades WHERE {textless}")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    extra = f"; {moved} grades of passages without text set aside as stale" if moved else ""
    return f"migrated the store from schema 3 to 4 (import log, provenance){extra}"


@contextmanager
def _committed(db: sqlite3.Connection) -> Iterator[None]:
    """A migration's statements (after `_begin_at`): committed together, or rolled back on any error."""
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _begin_at(db: sqlite3.Connection, version: int) -> bool:
    """Take the write lock if the store is still of schema `version` (another process may have migrated it
    while this one waited for the lock); False, without the lock, when it is not."""
    db.execute("BEGIN IMMEDIATE")
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is not None and str(row[0]) == str(version):
        return True
    db.execute("ROLLBACK")
    return False


def _old_configs(db: sqlite3.Connection) -> dict[tuple[str, str, str], dict]:
    try:
        rows = db.execute("SELECT method, model, prompt_version, info FROM grade_configs").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {(m, x, v): json.loads(i) if i else {} for m, x, v, i in rows}
