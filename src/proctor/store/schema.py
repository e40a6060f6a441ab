"""The store's one schema (version 7) and the numbered migrations of stores of schema 1 (release 0.1.0) to 6.

Schema 3 keeps grade rows compact: a grade names its (grade set, step) by a small integer (`grade_series`), its
question by one (`grade_items`) and the second it was written by one (`grade_batches`), so a row holds little
more than the query, the passage and the grade. Only `store/` reads these integers: every repository method
takes and returns the grade set ids, steps, question ids and timestamps themselves.

Schema 4 records where content came from: `import_log` has one entry per imported file (kind, path, digest, time,
counts, what `--replace` replaced), and the rows of queries, passages, rankings and judgments name the entry that
wrote them (`origin`). Grades made from a text that was since replaced are moved to `stale_grades`.

Schema 5 holds every table from the start: the kept counts and caches of grades and their triggers, the batch
jobs, the probe and the review tables (which stores of schema 4 made when opened or first needed). Its migration
only adds what is missing, so a read-only store of schema 4 is read as it is (its readers do without them).

Schema 6 keeps, beside each reviewer's verdict, digests of the query and passage texts it was given on
(`review_judgment_texts`): a verdict whose texts were since replaced is stale. The migration only adds the table;
a verdict recorded before it is judged by when its texts were imported (`store.review`), so a read-only store of
schema 5 is read as it is.

Schema 7 keeps, beside each query's labels in `label_cache`, the numbers of the questions graded for it
(`questions`), so that no leaderboard aggregates every grade row to find them. The migration only adds the
column (NULL in rows kept before: refilled when next read), so a read-only store of schema 6 is read as it is."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from proctor.records import grade_set_id

SCHEMA_VERSION = 7

TABLES_V4: dict[str, str] = {
    "meta": "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "queries": "CREATE TABLE IF NOT EXISTS queries (query_id TEXT PRIMARY KEY, text TEXT, origin INTEGER)",
    "passages": "CREATE TABLE IF NOT EXISTS passages (passage_id TEXT PRIMARY KEY, text TEXT, origin INTEGER)",
    "rankings": """CREATE TABLE IF NOT EXISTS rankings (
    run TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL,
    rank INTEGER NOT NULL, score REAL NOT NULL, origin INTEGER,
    PRIMARY KEY (run, query_id, passage_id)) WITHOUT ROWID""",
    "judgments": """CREATE TABLE IF NOT EXISTS judgments (
    query_id TEXT NOT NULL, passage_id TEXT NOT NULL, relevance INTEGER NOT NULL, origin INTEGER,
    PRIMARY KEY (query_id, passage_id)) WITHOUT ROWID""",
    "banks": """CREATE TABLE IF NOT EXISTS banks (
    bank_id TEXT NOT NULL, version TEXT NOT NULL, seq INTEGER NOT NULL, source TEXT, info TEXT,
    created TEXT NOT NULL, PRIMARY KEY (bank_id, version)) WITHOUT ROWID""",
    "questions": """CREATE TABLE IF NOT EXISTS questions (
    bank_id TEXT NOT NULL, version TEXT NOT NULL, question_id TEXT NOT NULL, query_id TEXT NOT NULL,
    facet_id TEXT, kind TEXT NOT NULL, text TEXT NOT NULL, answers TEXT, info TEXT,
    PRIMARY KEY (bank_id, version, question_id)) WITHOUT ROWID""",
    "questions_by_id": "CREATE INDEX IF NOT EXISTS questions_by_id ON questions (question_id)",
    "grade_sets": """CREATE TABLE IF NOT EXISTS grade_sets (
    grade_set_id TEXT PRIMARY KEY, method TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    bank_id TEXT, bank_version TEXT, params TEXT NOT NULL, label_step TEXT NOT NULL, info TEXT,
    created TEXT NOT NULL) WITHOUT ROWID""",
    "grade_series": """CREATE TABLE IF NOT EXISTS grade_series (
    series INTEGER PRIMARY KEY, grade_set_id TEXT NOT NULL, step TEXT NOT NULL, UNIQUE (grade_set_id, step))""",
    "grade_items": ("CREATE TABLE IF NOT EXISTS grade_items (item INTEGER PRIMARY KEY,"
                    " question_id TEXT NOT NULL UNIQUE)"),
    "grade_batches": ("CREATE TABLE IF NOT EXISTS grade_batches (batch INTEGER PRIMARY KEY,"
                      " created TEXT NOT NULL UNIQUE)"),
    "grades": """CREATE TABLE IF NOT EXISTS grades (
    series INTEGER NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, item INTEGER NOT NULL,
    raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT, correct INTEGER, extra TEXT,
    batch INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (series, query_id, passage_id, item)) WITHOUT ROWID""",
    "grading_locks": """CREATE TABLE IF NOT EXISTS grading_locks (
    grade_set_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, started TEXT NOT NULL) WITHOUT ROWID""",
    "llm_cache": """CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, reply TEXT NOT NULL, created TEXT NOT NULL
) WITHOUT ROWID""",
    "response_segments": """CREATE TABLE IF NOT EXISTS response_segments (
    passage_id TEXT PRIMARY KEY, run TEXT NOT NULL, query_id TEXT NOT NULL, position INTEGER NOT NULL,
    citations TEXT, truncated INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID""",
    "imports": """CREATE TABLE IF NOT EXISTS imports (
    kind TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL, imported_at TEXT NOT NULL,
    PRIMARY KEY (kind, sha256)) WITHOUT ROWID""",
    "import_log": """CREATE TABLE IF NOT EXISTS import_log (
    entry INTEGER PRIMARY KEY, kind TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
    imported_at TEXT NOT NULL, counts TEXT, replaced TEXT)""",
    "stale_grades": """CREATE TABLE IF NOT EXISTS stale_grades (
    series INTEGER NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, item INTEGER NOT NULL,
    raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT, correct INTEGER, extra TEXT,
    batch INTEGER NOT NULL, attempts INTEGER NOT NULL, why TEXT NOT NULL, staled_at TEXT NOT NULL)""",
    "question_positions": """CREATE TABLE IF NOT EXISTS question_positions (
    bank_id TEXT NOT NULL, version TEXT NOT NULL, question_id TEXT NOT NULL, position INTEGER NOT NULL,
    PRIMARY KEY (bank_id, version, question_id)) WITHOUT ROWID""",
}
"""The tables and indexes of schema 4 by name, in order (none holds a trigger: each is one statement).
`question_positions` keeps each bank version's order of its items; a store made before it has none, and its
banks' items go by id (`BankRepository.bank_items`)."""

GRADE_TABLES_V3 = ("grade_series", "grade_items", "grade_batches", "grades")
"""The grade tables schema 3 made of schema 2's one `grades` table."""

GRADES_V2 = """CREATE TABLE IF NOT EXISTS grades (
    grade_set_id TEXT NOT NULL, step TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL,
    question_id TEXT NOT NULL, raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT,
    correct INTEGER, extra TEXT, created TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (grade_set_id, step, query_id, passage_id, question_id)) WITHOUT ROWID"""
"""The grades table of schema 2: one row per grade with every name spelled out."""


def _script(statements: list[str]) -> str:
    return "".join(f"{statement};\n" for statement in statements)



SCHEMA_V2 = _script([GRADES_V2 if name == "grades" else sql for name, sql in TABLES_V4.items()
                     if name not in GRADE_TABLES_V3[:-1]])
"""The whole schema 2 as `migrate_v1` writes it (tests build schema-2 stores with it)."""

def _kept_per_grade_set(table: str) -> tuple[str, ...]:
    """The triggers that drop a grade set's rows of `table` whenever one of its grades changes."""
    return (*(f"CREATE TRIGGER IF NOT EXISTS {table}_{event.lower()} AFTER {event} ON grades BEGIN"
              f" DELETE FROM {table} WHERE grade_set_id ="
              f" (SELECT grade_set_id FROM grade_series WHERE series = {row}.series); END"
              for event, row in (("INSERT", "NEW"), ("DELETE", "OLD"))),
            f"CREATE TRIGGER IF NOT EXISTS {table}_update AFTER UPDATE ON grades BEGIN DELETE FROM {table} WHERE"
            " grade_set_id IN (SELECT grade_set_id FROM grade_series WHERE series IN (OLD.series, NEW.series)); END")


COUNTS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS grade_set_counts (grade_set_id TEXT PRIMARY KEY, counts TEXT NOT NULL) WITHOUT ROWID",
    *_kept_per_grade_set("grade_set_counts"),
)
"""The kept counts of grades (`TallyRepository`) and their triggers."""

CACHE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS label_cache (grade_set_id TEXT NOT NULL, step TEXT NOT NULL, query_id TEXT NOT NULL,"
    " pairs TEXT NOT NULL, questions TEXT, PRIMARY KEY (grade_set_id, step, query_id)) WITHOUT ROWID",
    *_kept_per_grade_set("label_cache"),
    "CREATE TABLE IF NOT EXISTS ranked_cache (run TEXT NOT NULL, query_id TEXT NOT NULL, passages TEXT NOT NULL,"
    " PRIMARY KEY (run, query_id)) WITHOUT ROWID",
    *(f"CREATE TRIGGER IF NOT EXISTS ranked_cache_{event.lower()} AFTER {event} ON rankings BEGIN"
      f" DELETE FROM ranked_cache WHERE run = {row}.run; END" for event, row in (("INSERT", "NEW"), ("DELETE", "OLD"))),
    "CREATE TRIGGER IF NOT EXISTS ranked_cache_update AFTER UPDATE ON rankings BEGIN"
    " DELETE FROM ranked_cache WHERE run IN (OLD.run, NEW.run); END",
)
"""The label and ranked-list caches (`store/caches.py`) and their triggers."""

COVER_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS cover_cache (grade_set_id TEXT NOT NULL, step TEXT NOT NULL, query_id TEXT NOT NULL,"
    " questions TEXT NOT NULL, passages TEXT NOT NULL, grades TEXT NOT NULL,"
    " PRIMARY KEY (grade_set_id, step, query_id)) WITHOUT ROWID",
    *_kept_per_grade_set("cover_cache"),
)
"""The EXAM-Cover cache (`store/cover_cache.py`) and its triggers."""

BATCH_SCHEMA = ("""CREATE TABLE IF NOT EXISTS batch_jobs (
    batch_id TEXT PRIMARY KEY, grade_set_id TEXT NOT NULL, step TEXT NOT NULL, input_file_id TEXT NOT NULL,
    requests INTEGER NOT NULL, status TEXT NOT NULL, imported INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL,
    updated TEXT NOT NULL) WITHOUT ROWID""",)
"""OpenAI Batch API jobs per grade set (`store/batches.py`)."""

PROBE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS probe_sets (
    probe_set_id TEXT PRIMARY KEY, probe_of TEXT NOT NULL, variant TEXT NOT NULL, guard TEXT,
    prompt_version TEXT NOT NULL, params TEXT NOT NULL, created TEXT NOT NULL) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS probe_passages (
    probe_set_id TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, text TEXT NOT NULL,
    state TEXT NOT NULL, reason TEXT, PRIMARY KEY (probe_set_id, query_id, passage_id)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS probe_grades (
    probe_set_id TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, question_id TEXT NOT NULL,
    grade INTEGER, parse_status TEXT NOT NULL, raw_reply TEXT,
    PRIMARY KEY (probe_set_id, query_id, passage_id, question_id)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS pool_flags (
    grade_set_id TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL, reason TEXT NOT NULL,
    created TEXT NOT NULL, PRIMARY KEY (grade_set_id, query_id, passage_id)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS probe_reports (
    probe_of TEXT PRIMARY KEY, report TEXT NOT NULL, created TEXT NOT NULL) WITHOUT ROWID""",
)
"""Robustness probes and pool flags (`store/probes.py`)."""

REVIEW_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS review_drafts (
    draft_id INTEGER PRIMARY KEY AUTOINCREMENT, bank_id TEXT NOT NULL, base_version TEXT NOT NULL,
    status TEXT NOT NULL, created TEXT NOT NULL, created_by TEXT NOT NULL, published_version TEXT,
    published TEXT)""",
    """CREATE TABLE IF NOT EXISTS review_draft_questions (
    draft_id INTEGER NOT NULL, question_id TEXT NOT NULL, query_id TEXT NOT NULL, facet_id TEXT,
    kind TEXT NOT NULL, text TEXT NOT NULL, answers TEXT, state TEXT NOT NULL, spurious INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (draft_id, question_id)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS review_audit (
    audit_id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, reviewer TEXT NOT NULL, action TEXT NOT NULL,
    bank_id TEXT, draft_id INTEGER, query_id TEXT, question_id TEXT, before TEXT, after TEXT)""",
    "CREATE INDEX IF NOT EXISTS review_audit_by_question ON review_audit (bank_id, question_id)",
    """CREATE TABLE IF NOT EXISTS review_judgments (
    judgment_id INTEGER PRIMARY KEY AUTOINCREMENT, query_id TEXT NOT NULL, passage_id TEXT NOT NULL,
    relevance INTEGER NOT NULL, reviewer TEXT NOT NULL, at TEXT NOT NULL, grade_set_id TEXT)""",
    "CREATE INDEX IF NOT EXISTS review_judgments_by_query ON review_judgments (query_id, passage_id)",
)
"""Reviewers' drafts, audit trail and judgments (`store/review.py`)."""

ADDED_V5 = (*COUNTS_SCHEMA, *CACHE_SCHEMA, *COVER_SCHEMA, *BATCH_SCHEMA, *PROBE_SCHEMA, *REVIEW_SCHEMA)
"""What schema 5 adds to schema 4 (each statement on its own: triggers hold semicolons)."""

ADDED_V6 = ("""CREATE TABLE IF NOT EXISTS review_judgment_texts (
    judgment_id INTEGER PRIMARY KEY, query_digest TEXT NOT NULL, passage_digest TEXT NOT NULL)""",)
"""What schema 6 adds to schema 5: the digests of the texts each reviewer verdict was given on."""

SCHEMA = (*TABLES_V4.values(), *ADDED_V5, *ADDED_V6)
"""Every statement of the current schema, in order: what a new store is made of."""

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
        for name in GRADE_TABLES_V3:
            db.execute(TABLES_V4[name])
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
        for statement in TABLES_V4.values():
            db.execute(statement)
        textless = "passage_id IN (SELECT passage_id FROM passages WHERE text IS NULL)"
        moved = db.execute(f"INSERT INTO stale_grades SELECT *, 'no passage text', ? FROM grades WHERE {textless}",
                           (staled_at,)).rowcount
        db.execute(f"DELETE FROM grades WHERE {textless}")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    extra = f"; {moved} grades of passages without text set aside as stale" if moved else ""
    return f"migrated the store from schema 3 to 4 (import log, provenance){extra}"


def migrate_v4(db: sqlite3.Connection) -> None:
    """Give a schema-4 store the tables and triggers of schema 5 it lacks inside one transaction (schema 4 made
    them when opened or first needed; nothing else changes, so no note)."""
    if not _begin_at(db, 4):
        return
    with _committed(db):
        for statement in (TABLES_V4["question_positions"], *ADDED_V5):  # a store made before the order lacks it
            db.execute(statement)
        db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")


def migrate_v6(db: sqlite3.Connection) -> None:
    """Give a schema-6 store's label cache the column of schema 7 inside one transaction (its kept rows have none:
    NULL, refilled when next read; nothing else changes, so no note)."""
    if not _begin_at(db, 6):
        return
    with _committed(db):
        if "questions" not in {row[1] for row in db.execute("PRAGMA table_info(label_cache)")}:
            db.execute("ALTER TABLE label_cache ADD COLUMN questions TEXT")
        db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")


def migrate_v5(db: sqlite3.Connection) -> None:
    """Give a schema-5 store the table of schema 6 inside one transaction (verdicts recorded before it have no
    digests: `store.review` judges them by when their texts were imported; nothing else changes, so no note)."""
    if not _begin_at(db, 5):
        return
    with _committed(db):
        for statement in ADDED_V6:
            db.execute(statement)
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")


ADDITIVE = frozenset({4, 5, 6})
"""Schema versions whose migration only adds tables their readers do without: a read-only store of one of them
is read as it is."""


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
