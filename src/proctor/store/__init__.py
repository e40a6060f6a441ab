"""The SQLite store (one file, WAL): the only place with SQL. `Store` is a small facade (opening, migrating,
transactions) over one repository per area, all on its connection: `corpus` (queries, passages, runs,
judgments, responses), `banks`, `grades` (grade sets, grades, locks), `tallies` (kept counts, labels aggregated
in SQL), `caches` (label, ranked-list, EXAM-Cover and response caches), `imports` (import log, guard, stale
grades), `review`, `batches`, `probes`, and `schema` (what the file holds beside content). The one schema and
its numbered migrations are in `store.schema`.

Every import runs in one transaction (under a rollback journal when it can: `Store.bulk_transaction`), so a
failed or interrupted import leaves the store as it was; upserts write only rows whose content differs.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.options.store import StoreOptions
from proctor.records import Grade, GradeSet
from proctor.store.banks import BankRepository
from proctor.store.batches import BatchRepository
from proctor.store.caches import ResultCaches
from proctor.store.corpus import _DISTINCT_RUNS, CorpusRepository
from proctor.store.grades import FAILED, GRADES_AS_NAMED, GradeRepository
from proctor.store.inspection import SchemaRepository
from proctor.store.integrity import ImportRepository
from proctor.store.probes import ProbeRepository
from proctor.store.repository import dumps, now
from proctor.store.review import ReviewRepository
from proctor.store.schema import (
    ADDITIVE,
    SCHEMA,
    SCHEMA_VERSION,
    migrate_v1,
    migrate_v2,
    migrate_v3,
    migrate_v4,
    migrate_v5,
    migrate_v6,
)
from proctor.store.tallies import TallyRepository

BULK_CACHE_KB = 65536
"""SQLite's page cache during a bulk write (KiB): fewer spills of changed pages to the file mid-write."""

DEFAULT_LOCK_TIMEOUT: float = StoreOptions.lock_timeout
"""Seconds a writer waits for another writer's lock before giving up (`--lock-timeout`)."""

MIGRATIONS: tuple[tuple[int, str, Callable[[sqlite3.Connection], str | None]], ...] = (
    (1, "schema 1 (release 0.1.0)", lambda db: migrate_v1(db, now())),
    (2, "schema 2", migrate_v2),
    (3, "schema 3", lambda db: migrate_v3(db, now())),
    (4, "schema 4", migrate_v4),
    (5, "schema 5", migrate_v5),
    (6, "schema 6", migrate_v6),
)
"""(version, its name, the migration to the next version) in order: a store of an older schema takes each in
turn when first opened."""


class Store:
    """A Proctor store: one SQLite file. Use `Store.open` (read) or `Store.create_or_open` (write); its
    repositories read and write one area each."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection
        self.migration_note: str | None = None
        self.read_only = False
        self.origin: int | None = None
        """The import log entry the content upserts write as their rows' `origin` (set by an import)."""
        self.corpus = CorpusRepository(self)
        self.banks = BankRepository(self)
        self.grades = GradeRepository(self)
        self.tallies = TallyRepository(self)
        self.caches = ResultCaches(self)
        self.imports = ImportRepository(self)
        self.review = ReviewRepository(self)
        self.batches = BatchRepository(self)
        self.probes = ProbeRepository(self)
        self.schema = SchemaRepository(self)

    # -- opening -------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, read_only: bool = False) -> Store:
        """Open an existing store (migrating an older schema); a missing file is a usage error. A file this
        process cannot write (or `read_only`) is opened read-only, so read commands work on it."""
        path = Path(path)
        if path.is_dir():
            raise UsageError(f"{path}: is a folder, not a store file")
        if not path.is_file():
            raise UsageError(f"{path}: no such store (create one with `proctor import ... {{store}} {path}`)",
                             params=("store",))
        creating = Path(f"{path}-journal").exists()  # another process writes it, maybe making its schema now
        if _empty(path) and not creating:  # SQLite would write a header into it: a read leaves the file as it was
            raise _empty_file(path)
        if read_only or not _writable(path):
            store = cls(path, _connect_read_only(path))
            store.read_only = True
        else:
            store = cls(path, _connect(path, lock_timeout, wal=not creating))
            if creating:
                store._wait_for_its_creation(lock_timeout)
        store._check_schema()
        return store

    def _wait_for_its_creation(self, lock_timeout: float) -> None:
        """A store with a rollback journal beside it, whose writer may be making it now (an import's first moments):
        wait for that writer's lock (`lock_timeout`), as for any other write, instead of reading an empty file as no
        store; then switch to WAL. A file still empty after the wait (a journal left over, no writer) is refused as
        an empty file, as it was found."""
        try:
            if self.db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None:
                self.db.execute("BEGIN IMMEDIATE")  # granted once the writer has committed (or after lock_timeout)
                self.db.execute("ROLLBACK")
                if _empty(self.path):
                    self.close()
                    raise _empty_file(self.path)
            _wal_mode(self.db, lock_timeout)
        except sqlite3.OperationalError as exc:  # the writer held its lock past lock_timeout
            raise StoreError(self.path, exc) from None
        except sqlite3.DatabaseError:  # not SQLite: `_check_schema` says which store it is not
            pass

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
                for statement in SCHEMA:
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
        for old, which, migrate in MIGRATIONS:
            if version == old and self.read_only and old in ADDITIVE:
                version = SCHEMA_VERSION  # read as it is: its readers do without what the migration adds
            if version == old:
                try:
                    if self.read_only:
                        raise sqlite3.OperationalError("opened read-only")
                    with self._rollback_journal():  # the WAL would hold a copy of every rewritten grade
                        note = migrate(self.db)
                    notes += [note] if note else []
                except sqlite3.OperationalError as exc:
                    if not self.read_only:  # locked by another writer, disk full: StoreError says which
                        raise StoreError(self.path, exc) from None
                    raise UsageError(f"{self.path}: a store of {which} is migrated when first opened, but this one "
                                     f"cannot be written ({exc}); copy it somewhere writable") from None
                version = old + 1
        self.migration_note = "; ".join(notes) or None
        if version != SCHEMA_VERSION:
            raise UsageError(f"{self.path}: not a Proctor store of schema version {SCHEMA_VERSION}")

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
        """A copy of this store at `path` (SQLite's online backup), opened for writing and migrated like any
        store opened (`copy_of`)."""
        return Store.copy_of(self.path, path)

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

    def counts(self) -> dict[str, Any]:
        """The numbers `proctor info` prints."""
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        tallies = self.tallies.grade_counts()
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
            "unjudgeable": self.corpus.unjudgeable(),
            "stale_grades": self.imports.stale_counts(),
            "grade_sets": [s.as_dict() for s in self.grades.grade_sets()],
            "bank_versions": self.banks.versions(),
        }

    def dump(self) -> dict[str, list[tuple]]:
        """Every row of every content table, sorted (for tests of idempotence and atomicity)."""
        tables = ["queries", "passages", "rankings", "judgments", "banks", "questions", "grade_sets",
                  "grades", "response_segments", "imports", "stale_grades"]  # import_log: provenance
        def content(table: str) -> str:  # where a row came from (`origin`) is not content
            return ", ".join(r[1] for r in self.db.execute(f"PRAGMA table_info({table})") if r[1] != "origin")

        return {t: sorted(self.db.execute(GRADES_AS_NAMED if t == "grades" else f"SELECT {content(t)} FROM {t}"),
                          key=repr) for t in tables}


def _empty(path: Path) -> bool:
    """A 0-byte file with no write-ahead log beside it (a new store's first pages may still be in its log)."""
    wal = Path(f"{path}-wal")
    return path.stat().st_size == 0 and not (wal.is_file() and wal.stat().st_size > 0)


def _empty_file(path: Path) -> UsageError:
    """The refusal of a store file that holds nothing."""
    return UsageError(f"{path}: an empty file, not a Proctor store (an import makes one: `proctor import ... "
                      f"{{store}} {path}`)", params=("store",))


def _connect(path: Path, lock_timeout: float, *, wal: bool = True) -> sqlite3.Connection:
    """A connection that waits `lock_timeout` for other writers; in WAL mode unless `wal` is False (switching
    writes a header into an empty file)."""
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=lock_timeout)
        db.execute(f"PRAGMA busy_timeout = {int(lock_timeout * 1000)}")
        if wal:
            _wal_mode(db, lock_timeout)
    except sqlite3.DatabaseError as exc:
        raise StoreError(path, exc) from None
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def _wal_mode(db: sqlite3.Connection, lock_timeout: float) -> None:
    """Switch to WAL, waiting up to `lock_timeout` while another connection writes under a rollback journal (a
    bulk import): the switch needs the exclusive lock, and SQLite answers SQLITE_BUSY at once there instead of
    calling its busy handler (waiting could deadlock a connection that holds a read lock), so `busy_timeout`
    alone would give up in milliseconds."""
    deadline = time.monotonic() + lock_timeout
    pause = 0.01
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", sqlite3.SQLITE_BUSY) & 0xFF != sqlite3.SQLITE_BUSY or \
                    time.monotonic() >= deadline:
                raise
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.2)


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


FULL_DISK_BYTES = 1 << 20
"""Below this much free space on the store's file system, an I/O error of SQLite is taken as a full disk."""


def _out_of_space(path: Path | str, exc: Exception) -> bool:
    """SQLite reports a full disk as SQLITE_FULL only where a write of the file itself comes short; growing the
    WAL index or syncing fails as SQLITE_IOERR ('disk I/O error'): that too, on a file system with (almost) no
    space left, is a full disk."""
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL:
        return True
    if not str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_IOERR") and "disk I/O error" not in str(exc):
        return False
    try:
        stats = os.statvfs(Path(path).resolve().parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < FULL_DISK_BYTES


class StoreError(UsageError):
    """SQLite could not do what was asked: the message says why in the user's terms."""

    def __init__(self, path: Path | str, exc: Exception) -> None:
        text = str(exc)
        if "locked" in text or "busy" in text:
            why = ("another process is writing to the store and did not finish within {lock_timeout}; "
                   "run the command again when it is done (or raise {lock_timeout})")
        elif "disk is full" in text or _out_of_space(path, exc):
            why = ("the disk is full: everything committed so far is kept; free some space and run the same "
                   "command again to resume")
        elif "readonly" in text:
            why = "the store cannot be written (read-only file or folder)"
        elif "file is not a database" in text or "malformed" in text:
            why = "not a Proctor store"
        else:
            why = f"SQLite: {text}"
        super().__init__(f"{path}: {why} ({text})" if why != f"SQLite: {text}" else f"{path}: {why}",
                         params=("lock_timeout",) if "{lock_timeout}" in why else ())


__all__ = ["DEFAULT_LOCK_TIMEOUT", "FAILED", "Grade", "GradeSet", "Store", "StoreError", "dumps", "now"]
