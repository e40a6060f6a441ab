"""What every repository of the store shares: the facade's connection and state, and the helpers that write a
stored value (canonical JSON, the current time)."""

from __future__ import annotations

import json
import sqlite3
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
