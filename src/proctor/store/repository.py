"""What every repository of the store shares: the facade's connection and state, and the helpers that write a
stored value (canonical JSON, the current time)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
from typing import Any, Protocol


def now() -> str:
    """The current UTC time as ISO 8601 (seconds), as every table stores its times."""
    return datetime.now(UTC).isoformat(timespec="seconds")


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
"""`json.dumps(value, sort_keys=True, ensure_ascii=False)` without building an encoder per call (what `json.dumps`
does for any but its default arguments: a grade's `extra`, once per grade)."""


def dumps(value: Any) -> str | None:
    """Canonical JSON of a value (None stays None)."""
    return None if value is None else _CANONICAL(value)


def loads(value: str | None) -> Any:
    """The value of stored JSON (None stays None)."""
    return None if value is None else json.loads(value)


ROWS_PER_INSERT = 50
"""Rows one plain insert of `insert_new_first` writes (a statement of that many `VALUES` rows: fewer statement
steps and resets per row; about a sixth less time a row than a statement per row)."""


def insert_new_first(db: sqlite3.Connection, table: str, values: str, conflict: str, rows: Iterable[tuple], *,
                     mapped: tuple[int, Callable[[Any], Any]] | None = None,
                     plain: Callable[[list, int], None] | None = None, upsert_order: list | None = None) -> bool:
    """Upsert `rows` into `table` (`INSERT INTO table VALUES values conflict`, `values` one row's SQL), taking a
    plain insert of the same values first when `rows` is a list or tuple; `mapped` (column, function): that
    column of every row is written as the function of it (a list only); `plain(flat, width)`: the plain insert of
    the rows' values (flattened, mapped), when it is not `insert_plain` (it may write them by another statement
    that stores the same values, e.g. `insert_shared`); `upsert_order`: the same rows in the order the upsert
    takes them when the plain insert fails (`rows` may come in another order, e.g. the key's, which makes fewer
    B-tree pages busy; the upsert keeps the caller's order: what the guard names first). True when the plain
    inserts wrote every row: each was a key the table did not hold, given once.

    An upsert whose DO UPDATE path has triggers (an import's guard: `store.integrity`) makes SQLite keep a
    statement journal for every row, though a new key never takes that path; the plain insert, `ROWS_PER_INSERT`
    rows a statement, does not (at TREC scale about a fifth of an import's writes). A key the table holds already
    stops the plain insert with an `IntegrityError` (the statements before it are written, nothing of the failing
    one); the whole batch is then written again by the upsert, whose `WHERE` leaves a row with the same values as
    it is: the rows the insert wrote are not written twice, and the rest go through the upsert as without this.
    `conflict` must therefore change nothing (and fire no trigger) for a row identical to the stored one. The
    connection's change count moves exactly when the upsert alone would move it (by as many rows, unless an INSERT
    trigger of the table made changes in a statement that then failed: SQLite counts those too). Anything else (a
    generator, such as rows an import's guard tracks line by line: it can be read only once) goes straight to the
    upsert; rows of different widths are an error, as they are for the upsert."""
    upsert = f"INSERT INTO {table} VALUES {values} {conflict}"
    if not isinstance(rows, list | tuple):
        db.executemany(upsert, rows)
        return False
    if not rows:
        return True
    width = len(rows[0])
    if len(set(map(len, rows))) != 1:
        raise ValueError(f"rows for {table} of different widths: {sorted(set(map(len, rows)))}")
    # one list of every value: statements of many rows take slices of it
    flat = list(chain.from_iterable(rows)) if mapped is None else _mapped(rows, width, mapped)
    try:
        if plain is None:
            insert_plain(db, table, values, flat, width)
        else:
            plain(flat, width)
    except sqlite3.IntegrityError:
        if upsert_order is not None:  # the caller's order
            flat = list(chain.from_iterable(upsert_order)) if mapped is None else _mapped(upsert_order, width, mapped)
        db.executemany(upsert, zip(*[iter(flat)] * width, strict=True))
        return False
    return True


def _mapped(rows: list, width: int, mapped: tuple[int, Callable[[Any], Any]]) -> list:
    """The values of `rows` flattened, column `mapped[0]` as the function `mapped[1]` of it."""
    flat = list(chain.from_iterable(rows))
    flat[mapped[0]::width] = map(mapped[1], flat[mapped[0]::width])
    return flat


def insert_plain(db: sqlite3.Connection, table: str, values: str, flat: list, width: int) -> None:
    """Plain inserts into `table` of the rows of `width` values in `flat` (`values`: one row's SQL):
    `ROWS_PER_INSERT` a statement, the rest one by one."""
    one = f"INSERT INTO {table} VALUES {values}"
    step = width * ROWS_PER_INSERT
    whole = len(flat) - len(flat) % step
    if whole:
        db.executemany(f"{one}{f', {values}' * (ROWS_PER_INSERT - 1)}",
                       [flat[at:at + step] for at in range(0, whole, step)])
    if whole < len(flat):
        db.executemany(one, [flat[at:at + width] for at in range(whole, len(flat), width)])


def insert_shared(db: sqlite3.Connection, table: str, row: str, shared: list, flat: list, width: int) -> None:
    """`insert_plain` of rows whose values in common are bound once a statement: `shared` as `?1`, `?2`, ...; the
    row's own `width` values in `flat` as `?{0}`, `?{1}`, ... of `row` (its SQL, a `str.format` template: a value may
    be named twice, e.g. a column that holds another's value). Fewer values bound a row, the same rows stored."""
    step = width * ROWS_PER_INSERT
    whole = len(flat) - len(flat) % step
    if whole:
        db.executemany(_shared_insert(table, row, len(shared), width, ROWS_PER_INSERT),
                       [shared + flat[at:at + step] for at in range(0, whole, step)])
    if whole < len(flat):
        db.executemany(_shared_insert(table, row, len(shared), width, 1),
                       [shared + flat[at:at + width] for at in range(whole, len(flat), width)])


@lru_cache(maxsize=64)
def _shared_insert(table: str, row: str, shared: int, width: int, count: int) -> str:
    """The statement of `insert_shared` for `count` rows."""
    return f"INSERT INTO {table} VALUES " + ", ".join(
        row.format(*(f"?{shared + 1 + k * width + j}" for j in range(width))) for k in range(count))


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
