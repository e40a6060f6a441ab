"""The LLM's response cache as SQL, for the store's own `llm_cache` table and for a response cache of its own:
one SQLite file (`proctor-llm-cache.db`) in a folder shared by runs and stores (the TREC AutoJudge `CACHE_DIR`,
`--cache-dir`). The file is Proctor's (its `application_id` says so, its `user_version` is its schema), in WAL
mode with a busy timeout, so several processes read and write it at once; every write is one short
transaction of its own. Rows are (key, backend, model, reply JSON, time): what `proctor.llm.cache` keys and
keeps. Failures are never written (the callers write only usable replies)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.store.repository import now
from proctor.store.schema import TABLES_V4

FILE_NAME = "proctor-llm-cache.db"
"""The response cache's file inside its folder."""
APPLICATION_ID = 0x50524F43
"""`PRAGMA application_id` of a Proctor response cache ("PROC")."""
VERSION = 1
"""`PRAGMA user_version`: the response cache file's schema."""
LOCK_TIMEOUT = 120.0
"""Seconds a writer waits while another process writes the same cache."""

Row = tuple[str, str, str, dict[str, Any]]
"""(key, backend, model, reply as `Reply.to_cache` gives it)."""


def get_replies(db: sqlite3.Connection, keys: list[str]) -> dict[str, dict[str, Any]]:
    """The cached replies (as stored dicts) of the keys that have one, each with its `time` recorded."""
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for key, blob, created in db.execute(f"SELECT key, reply, created FROM llm_cache WHERE key IN ({marks})",
                                             chunk):
            out[key] = {"time": created, **json.loads(blob)}
    return out


def put_replies(db: sqlite3.Connection, rows: Iterable[Row], *, replace: bool = False) -> None:
    """Remember rows (a reply's own `time`, else now); a key already cached keeps its reply unless `replace`."""
    created = now()
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    db.executemany(f"{verb} INTO llm_cache VALUES (?, ?, ?, ?, ?)",
                   ((key, backend, model, json.dumps({k: v for k, v in reply.items() if k != "time"}),
                     reply.get("time") or created) for key, backend, model, reply in rows))


class ResponseCache:
    """A response cache of its own: `FOLDER/proctor-llm-cache.db`, shared by every run and store that names
    the folder. `cache_get_many` / `cache_put` as the store's own cache (`Store.caches`)."""

    def __init__(self, path: Path, db: sqlite3.Connection) -> None:
        self.path, self.db = path, db

    @classmethod
    def in_folder(cls, folder: str | Path) -> ResponseCache:
        """Open (creating the folder and the file when missing) the response cache of `folder`."""
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"response cache {folder}: not a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"response cache {folder}: cannot create the folder ({e.strerror})") from None
        path = folder / FILE_NAME
        try:
            db = sqlite3.connect(path, isolation_level=None, timeout=LOCK_TIMEOUT)
            db.execute(f"PRAGMA busy_timeout = {int(LOCK_TIMEOUT * 1000)}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # as the store: WAL keeps the file whole
            _prepare(db, path)
        except sqlite3.DatabaseError as e:
            raise UsageError(f"response cache {path}: {_why(e)}") from None
        return cls(path, db)

    def cache_get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Cached replies (as stored dicts, with their `time`) for the keys that have one."""
        return get_replies(self.db, keys) if keys else {}

    def cache_put(self, rows: Iterable[Row], *, replace: bool = False) -> None:
        """Remember rows in one transaction of their own (waiting for another writer up to `LOCK_TIMEOUT`)."""
        rows = list(rows)
        if not rows:
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
            put_replies(self.db, rows, replace=replace)
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise UsageError(f"response cache {self.path}: {_why(e)}") from None

    def cache_count(self) -> int:
        """Cached replies."""
        return self.db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _prepare(db: sqlite3.Connection, path: Path) -> None:
    """A new file gets the table and Proctor's marks; an existing one must carry them."""
    db.execute("BEGIN IMMEDIATE")
    try:
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if not tables and not app:
            db.execute(TABLES_V4["llm_cache"])
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {VERSION}")
        elif app != APPLICATION_ID or version != VERSION:
            what = "another program's SQLite file" if app != APPLICATION_ID else f"cache schema {version}"
            raise UsageError(f"response cache {path}: {what}, not a Proctor response cache of schema {VERSION}; "
                             "name another folder")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _why(e: sqlite3.DatabaseError) -> str:
    """SQLite's complaint in the user's terms."""
    text = str(e)
    if "locked" in text or "busy" in text:
        return f"another process kept it locked for more than {LOCK_TIMEOUT:g} s; run again when it is done"
    if "not a database" in text:
        return "not an SQLite file; name another folder"
    return text
