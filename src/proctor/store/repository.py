"""What every repository of the store shares: the facade's connection and state, and the helpers that write a
stored value (canonical JSON, the current time)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Protocol


def now() -> str:
    """The current UTC time as ISO 8601 (seconds), as every table stores its times."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def dumps(value: Any) -> str | None:
    """Canonical JSON of a value (None stays None)."""
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def loads(value: str | None) -> Any:
    """The value of stored JSON (None stays None)."""
    return None if value is None else json.loads(value)


def insert_new_first(db: sqlite3.Connection, insert: str, upsert: str, rows: Iterable[tuple]) -> None:
    """Write `rows` with `upsert`, taking a plain `insert` of the same values first when `rows` is a list or tuple.

    An upsert whose DO UPDATE path has triggers (an import's guard: `store.integrity`) makes SQLite keep a
    statement journal for every row, though a new key never takes that path; the plain `insert` keeps none (at
    TREC scale about a fifth of an import's writes). A key the table holds already stops the plain `insert` with
    an `IntegrityError` (the rows before it are written, nothing of the failing one); the whole batch is then
    written again with `upsert`, whose `WHERE` leaves a row with the same values as it is: the rows the insert
    wrote are not written twice, and the rest go through the upsert as without this. `upsert` must therefore
    change nothing (and fire no trigger) for a row identical to the stored one. Anything else (a generator, such
    as rows an import's guard tracks line by line: it can be read only once) goes straight to `upsert`."""
    if isinstance(rows, list | tuple):
        try:
            db.executemany(insert, rows)
            return
        except sqlite3.IntegrityError:
            pass
    db.executemany(upsert, rows)


class Facade(Protocol):
    """What a repository reads of the `Store` it belongs to (the store's own modules import no `Store`)."""

    db: sqlite3.Connection
    read_only: bool
    origin: int | None
    corpus: Any
    tallies: Any
    caches: Any


class Repository:
    """One area's tables of a `Store`: reads and writes through the store's connection (inside its transaction,
    with its `origin` and `read_only`)."""

    def __init__(self, store: Facade) -> None:
        self._store = store

    @property
    def db(self) -> sqlite3.Connection:
        """The store's connection."""
        return self._store.db

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only."""
        return self._store.read_only
