"""The SQLite store (one file, WAL): the only place with SQL. Schema and migrations in `schema`, banks and
their versions in `banks`, grade sets, grades and the response cache in `grades`.

Every import runs in one transaction (under a rollback journal when it can: `Store.bulk_transaction`), so a
failed or interrupted import leaves the store as it was; upserts write only rows whose content differs.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.records import Grade, GradeSet
from proctor.store.banks import BankTables
from proctor.store.batches import BatchTables
from proctor.store.bulk import BulkGrades
from proctor.store.cover_cache import CoverCache
from proctor.store.derived import DerivedGrades
from proctor.store.grades import FAILED, GRADES_AS_NAMED, GradeTables
from proctor.store.integrity import ImportLog
from proctor.store.probes import ProbeTables
from proctor.store.review import ReviewTables
from proctor.store.schema import SCHEMA, SCHEMA_VERSION, migrate_v1, migrate_v2, migrate_v3
from proctor.store.tallies import GradeTallies

BULK_CACHE_KB = 65536
"""SQLite's page cache during a bulk write (KiB): fewer spills of changed pages to the file mid-write."""

DEFAULT_LOCK_TIMEOUT = 60.0
"""Seconds a writer waits for another writer's lock before giving up (`--lock-timeout`)."""


def now() -> str:
    """The current UTC time as ISO 8601 (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store(BankTables, GradeTables, BulkGrades, BatchTables, ReviewTables, ProbeTables, GradeTallies, CoverCache,
            DerivedGrades, ImportLog):
    """A Proctor store: one SQLite file. Use `Store.open` (read) or `Store.create_or_open` (write)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection
        self.migration_note: str | None = None
        self.read_only = False
        self.origin: int | None = None
        """The import log entry the content upserts write as their rows' `origin` (set by an import)."""

    # -- opening -------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, read_only: bool = False) -> Store:
        """Open an existing store (migrating an older schema); a missing file is a usage error. A file this
        process cannot write (or `read_only`) is opened read-only, so read commands work on it."""
        path = Path(path)
        if path.is_dir():
            raise UsageError(f"{path}: is a folder, not a store file")
        if not path.is_file():
            raise UsageError(f"{path}: no such store (create one with `proctor import ... --store {path}`)")
        if read_only or not _writable(path):
            store = cls(path, _connect_read_only(path))
            store.read_only = True
        else:
            store = cls(path, _connect(path, lock_timeout))
        store._check_schema()
        return store

    @classmethod
    def create_or_open(cls, path: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Store:
        """Open a store for writing, creating it (and its schema) if it does not exist. Another SQLite file is
        refused, never given Proctor's tables."""
        path = Path(path)
        if path.is_dir():
            raise UsageError(f"{path}: is a folder, not a store file")
        if path.parent and not path.parent.exists():
            raise UsageError(f"{path}: folder {path.parent} does not exist")
        store = cls(path, _connect(path, lock_timeout))
        try:
            fresh = store.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
        except sqlite3.DatabaseError as exc:
            store.close()
            raise UsageError(f"{path}: not a Proctor store ({exc})") from None
        if fresh:
            with store.transaction():
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        store.db.execute(statement)
                store.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        store._check_schema()
        return store

    def _check_schema(self) -> None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{self.path}: not a Proctor store ({exc})") from None
        version = int(row[0]) if row is not None and str(row[0]).isdigit() else None
        notes = []
        for old, migrate, which in ((1, lambda: migrate_v1(self.db, now()), "schema 1 (release 0.1.0)"),
                                    (2, lambda: migrate_v2(self.db), "schema 2"),
                                    (3, lambda: migrate_v3(self.db, now()), "schema 3")):
            if version == old:
                try:
                    if self.read_only:
                        raise sqlite3.OperationalError("opened read-only")
                    with self._rollback_journal():  # the WAL would hold a copy of every rewritten grade
                        note = migrate()
                    notes += [note] if note else []
                except sqlite3.OperationalError as exc:
                    raise UsageError(f"{self.path}: a store of {which} is migrated when first opened, but this one "
                                     f"cannot be written ({exc}); copy it somewhere writable") from None
                version = old + 1
        self.migration_note = "; ".join(notes) or None
        if version != SCHEMA_VERSION:
            raise UsageError(f"{self.path}: not a Proctor store of schema version {SCHEMA_VERSION}")
        if not self.read_only:
            self.ensure_tallies()
            self.ensure_caches()
            self.ensure_cover_cache()

    @classmethod
    def copy_of(cls, source: str | Path, path: str | Path) -> Store:
        """A writable copy at `path` of the store at `source`, which is only read (the copy, not the source, is
        migrated when the source has an older schema)."""
        source = Path(source)
        if not source.is_file():
            raise UsageError(f"{source}: no such store")
        raw = _connect_read_only(source)
        try:
            copy = sqlite3.connect(path)
            try:
                raw.backup(copy)
            finally:
                copy.close()
        finally:
            raw.close()
        return cls.open(path)  # checks (and migrates) the copy

    def copy_to(self, path: str | Path) -> Store:
        """A copy of this store at `path` (SQLite's online backup), opened for writing."""
        copy = Store.create_or_open(path)
        self.db.backup(copy.db)
        return copy

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside happen together or not at all."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self.db.in_transaction:  # SQLite has already rolled back after some errors (a full disk)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def bulk_transaction(self) -> Iterator[None]:
        """`transaction` for a large write (an import). When no other connection has the store open it runs under
        a rollback journal: the journal holds only the pages the write changes (none of a new store's), where a
        WAL would hold every new page beside the store until the checkpoint copies them in (twice the disk).
        A crash leaves a hot journal that the next opening rolls back, so the write stays all-or-nothing.
        Readers wait for it (as writers always do); the store is back in WAL mode after."""
        with self._rollback_journal(), self.transaction():
            yield

    @contextmanager
    def _rollback_journal(self) -> Iterator[None]:
        """Run a large write under a rollback journal when no other connection has the store open."""
        switched = self._journal_mode("DELETE")
        if switched:  # FULL: under a rollback journal, NORMAL could let a power cut corrupt the file
            self.db.execute(f"PRAGMA cache_size = {-BULK_CACHE_KB}")
            self.db.execute("PRAGMA synchronous = FULL")
        try:
            yield
        finally:
            if switched:
                self.db.execute("PRAGMA cache_size = -2000")
                self.db.execute("PRAGMA synchronous = NORMAL")
                self._journal_mode("WAL")

    def _journal_mode(self, mode: str) -> bool:
        """Switch the journal mode without waiting (another connection keeps WAL); whether it is now `mode`."""
        timeout = self.db.execute("PRAGMA busy_timeout").fetchone()[0]
        try:
            self.db.execute("PRAGMA busy_timeout = 0")
            return self.db.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0].lower() == mode.lower()
        except sqlite3.OperationalError:  # locked: another connection has it open (the next opening sets WAL)
            return False
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {int(timeout)}")

    # -- content -------------------------------------------------------------------------------------
    def upsert_queries(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Add queries; a known query takes the new text when it differs (an import's guard refuses that)."""
        self.db.executemany(
            f"INSERT INTO queries VALUES (?, ?, {self._origin_sql()}) ON CONFLICT (query_id) DO UPDATE SET"
            " text = excluded.text, origin = excluded.origin"
            " WHERE excluded.text IS NOT NULL AND queries.text IS NOT excluded.text",
            rows,
        )

    def upsert_passages(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Add passages; a known passage takes the new text when it differs (an import's guard refuses that)."""
        self.db.executemany(
            f"INSERT INTO passages VALUES (?, ?, {self._origin_sql()}) ON CONFLICT (passage_id) DO UPDATE SET"
            " text = excluded.text, origin = excluded.origin"
            " WHERE excluded.text IS NOT NULL AND passages.text IS NOT excluded.text",
            rows,
        )

    def upsert_rankings(self, rows: Iterable[tuple[str, str, str, int, float]]) -> None:
        """Add (run, query, passage, rank, score) rows."""
        self.db.executemany(
            f"INSERT INTO rankings VALUES (?, ?, ?, ?, ?, {self._origin_sql()}) ON CONFLICT DO UPDATE SET"
            " rank = excluded.rank, score = excluded.score, origin = excluded.origin"
            " WHERE rankings.rank IS NOT excluded.rank OR rankings.score IS NOT excluded.score",
            rows,
        )

    def upsert_judgments(self, rows: Iterable[tuple[str, str, int]]) -> None:
        """Add (query, passage, relevance) human judgments; a new label replaces an old one (an import's guard
        refuses that)."""
        self.db.executemany(
            f"INSERT INTO judgments VALUES (?, ?, ?, {self._origin_sql()}) ON CONFLICT DO UPDATE SET"
            " relevance = excluded.relevance, origin = excluded.origin"
            " WHERE judgments.relevance IS NOT excluded.relevance",
            rows,
        )

    def _origin_sql(self) -> str:
        return "NULL" if self.origin is None else str(int(self.origin))

    def upsert_segments(self, rows: Iterable[tuple[str, str, str, int, list[str], bool]]) -> None:
        """Remember where a passage of a generated response came from and what it cites."""
        self.db.executemany(
            "INSERT INTO response_segments VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (passage_id) DO UPDATE SET"
            " run = excluded.run, query_id = excluded.query_id, position = excluded.position,"
            " citations = excluded.citations, truncated = excluded.truncated"
            " WHERE response_segments.citations IS NOT excluded.citations"
            " OR response_segments.position IS NOT excluded.position"
            " OR response_segments.truncated IS NOT excluded.truncated",
            ((pid, run, qid, pos, dumps(cites) if cites else None, int(cut))
             for pid, run, qid, pos, cites, cut in rows),
        )

    def segments(self) -> dict[str, dict[str, Any]]:
        """`{passage_id: {run, query_id, position, citations, truncated}}` of imported responses."""
        rows = self.db.execute(
            "SELECT passage_id, run, query_id, position, citations, truncated FROM response_segments")
        return {pid: {"run": run, "query_id": qid, "position": pos, "citations": json.loads(c) if c else [],
                      "truncated": bool(t)} for pid, run, qid, pos, c, t in rows}

    def query_ids(self) -> set[str]:
        """Ids of all known queries."""
        return {row[0] for row in self.db.execute("SELECT query_id FROM queries")}

    def queries(self) -> dict[str, str | None]:
        """`{query_id: text}`."""
        return dict(self.db.execute("SELECT query_id, text FROM queries ORDER BY query_id"))

    def passage_texts(self) -> dict[str, str | None]:
        """`{passage_id: text}`."""
        return dict(self.db.execute("SELECT passage_id, text FROM passages"))

    def runs(self) -> list[str]:
        """Names of the runs whose rankings are stored."""
        return [row[0] for row in self.db.execute(_DISTINCT_RUNS + " SELECT run FROM runs WHERE run IS NOT NULL")]

    def rankings(self) -> dict[str, dict[str, dict[str, float]]]:
        """`{run: {query_id: {passage_id: score}}}` (the form `proctor.io.runs` orders)."""
        out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        for run, qid, pid, score in self.db.execute("SELECT run, query_id, passage_id, score FROM rankings"):
            out[run][qid][pid] = score
        return {run: dict(per_query) for run, per_query in out.items()}

    def ranked_lists(self) -> dict[str, dict[str, list[str]]]:
        """`{run: {query_id: [passage_id, ...]}}` in trec_eval order (score descending, ties by passage id
        descending: what `proctor.io.runs.order` gives; SQLite compares UTF-8 bytes, which orders as code
        points do, and stores no NaN), sorted by SQLite and kept per run (`ResultCaches`)."""
        return self.cached_ranked_lists()

    def ranking_rows(self) -> list[tuple[str, str, str, int, float]]:
        """All (run, query, passage, rank, score) rows."""
        return list(self.db.execute("SELECT run, query_id, passage_id, rank, score FROM rankings"))

    def judgments(self) -> dict[str, dict[str, int]]:
        """`{query_id: {passage_id: relevance}}` of the imported human judgments."""
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for qid, pid, rel in self.db.execute("SELECT query_id, passage_id, relevance FROM judgments"):
            out[qid][pid] = rel
        return dict(out)

    def max_judgment(self) -> int | None:
        """The largest imported relevance judgment (None without judgments)."""
        return self.db.execute("SELECT MAX(relevance) FROM judgments").fetchone()[0]

    def counts(self) -> dict[str, Any]:
        """The numbers `proctor info` prints."""
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        tallies = self.grade_counts()
        return {
            "store": str(self.path),
            "queries": one("SELECT COUNT(*) FROM queries"),
            "passages": one("SELECT COUNT(*) FROM passages"),
            "runs": one(_DISTINCT_RUNS + " SELECT COUNT(run) FROM runs"),
            "generated_runs": one("SELECT COUNT(DISTINCT run) FROM response_segments"),
            "rankings": one("SELECT COUNT(*) FROM rankings"),
            "judgments": one("SELECT COUNT(*) FROM judgments"),
            "banks": one("SELECT COUNT(DISTINCT bank_id) FROM banks"),
            "questions": one("SELECT COUNT(DISTINCT question_id) FROM questions"),
            "grades": sum(n for steps in tallies.values() for per in steps.values() for n in per.values()),
            "failures": sum(per.get(FAILED, 0) for steps in tallies.values() for per in steps.values()),
            "unjudgeable": self.unjudgeable(),
            "stale_grades": self.stale_counts(),
            "grade_sets": [s.as_dict() for s in self.grade_sets()],
            "bank_versions": self.banks(),
        }

    def dump(self) -> dict[str, list[tuple]]:
        """Every row of every content table, sorted (for tests of idempotence and atomicity)."""
        tables = ["queries", "passages", "rankings", "judgments", "banks", "questions", "grade_sets",
                  "grades", "response_segments", "imports", "stale_grades"]  # import_log: provenance
        def content(table: str) -> str:  # where a row came from (`origin`) is not content
            return ", ".join(r[1] for r in self.db.execute(f"PRAGMA table_info({table})") if r[1] != "origin")

        return {t: sorted(self.db.execute(GRADES_AS_NAMED if t == "grades" else f"SELECT {content(t)} FROM {t}"),
                          key=repr) for t in tables}


_DISTINCT_RUNS = ("WITH RECURSIVE runs(run) AS (SELECT MIN(run) FROM rankings UNION ALL SELECT (SELECT MIN(run)"
                  " FROM rankings WHERE run > runs.run) FROM runs WHERE runs.run IS NOT NULL)")
"""The runs of `rankings` in order, one primary-key lookup each rather than a scan of every ranking."""


def _connect(path: Path, lock_timeout: float) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=lock_timeout)
        db.execute(f"PRAGMA busy_timeout = {int(lock_timeout * 1000)}")
        db.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as exc:
        raise StoreError(path, exc) from None
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; `immutable` where SQLite cannot create the WAL index next to the file."""
    for query in ("mode=ro", "immutable=1"):
        try:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, isolation_level=None)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.DatabaseError as exc:
            error = exc
    raise StoreError(path, error)


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


class StoreError(UsageError):
    """SQLite could not do what was asked: the message says why in the user's terms."""

    def __init__(self, path: Path | str, exc: Exception) -> None:
        text = str(exc)
        if "locked" in text or "busy" in text:
            why = ("another process is writing to the store and did not finish within --lock-timeout; "
                   "run the command again when it is done (or raise --lock-timeout)")
        elif "disk is full" in text or "database or disk is full" in text:
            why = ("the disk is full: everything committed so far is kept; free some space and run the same "
                   "command again to resume")
        elif "readonly" in text:
            why = "the store cannot be written (read-only file or folder)"
        elif "file is not a database" in text or "malformed" in text:
            why = "not a Proctor store"
        else:
            why = f"SQLite: {text}"
        super().__init__(f"{path}: {why} ({text})" if why != f"SQLite: {text}" else f"{path}: {why}")


def dumps(value: Any) -> str | None:
    """Canonical JSON of a value (None stays None)."""
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


__all__ = ["DEFAULT_LOCK_TIMEOUT", "FAILED", "Grade", "GradeSet", "Store", "StoreError", "dumps", "now"]
