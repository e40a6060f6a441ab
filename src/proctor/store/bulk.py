"""Writing many grades at once (mixed into `Store`): an import of millions of grades.

Each kept result of grades (`grade_set_counts`, `label_cache`, `cover_cache`) has triggers on `grades` that drop
a grade set's rows whenever one of its grades is inserted, updated or deleted. For one row that is right; for
millions in one transaction it is three lookups and deletes per row (a third of the write), each dropping
what the first one already dropped. Inside `Store.grade_import` those triggers are dropped, the grades are
written, and then the kept results of every grade set written to are deleted once and the triggers made again
from their own SQL — all inside the caller's transaction, so no other connection ever sees the store without
them, and a rollback (an error, a crash) brings them back with everything else. A trigger on `grades` this
module does not know (someone added their own) keeps every trigger in place: the write is slower, not wrong.

The grade rows are bound as they come: the (grade set, step) and the writing time are numbers in the
statement, the question's number is looked up by SQLite (`grade_items`), so Python makes no tuple per row."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from proctor.store.grades import KEPT_PER_GRADE_SET, upsert_sql

_KEPT_TRIGGER = re.compile(rf"({'|'.join(KEPT_PER_GRADE_SET)})_(insert|update|delete)")

_UPSERT = upsert_sql("{series}, ?, ?, (SELECT item FROM grade_items WHERE question_id = ?), ?, ?, ?, ?, ?, NULL,"
                     " {batch}, 1", attempt=False)
"""An import's upsert of (query, passage, question, raw reply, grade, parse status, answer, correct) rows: the
series and the batch are formatted in as numbers."""


class GradeImport:
    """Writes rows of grades inside `Store.grade_import`; remembers the series it changed."""

    def __init__(self, db: sqlite3.Connection, numbers, created: str) -> None:
        self.db, self._numbers, self.created = db, numbers, created
        self.changed: set[int] = set()
        self._batch: int | None = None
        self.new_batch = False
        """Whether this import numbered its writing time itself (dropped again when it wrote no grade)."""
        self.bookkeeping = 0
        """Rows written and deleted again (that number): changes of the store's counter that changed nothing."""

    @property
    def batch(self) -> int | None:
        """The `grade_batches` entry of the grades written (None before the first)."""
        return self._batch

    def write(self, grade_set_id: str, step: str, rows: Sequence[tuple]) -> None:
        """Upsert (query, passage, question, raw reply, grade, parse status, answer, correct) rows into a step of
        a grade set (the grade set is recorded already)."""
        if not rows:
            return
        series = self._numbers("grade_series", "series", ("grade_set_id", "step"), {(grade_set_id, step)})
        if self._batch is None:
            self.new_batch = self.db.execute("SELECT 1 FROM grade_batches WHERE created = ?",
                                             (self.created,)).fetchone() is None
            self._batch = self._numbers("grade_batches", "batch", ("created",), {(self.created,)})[(self.created,)]
        self.db.executemany("INSERT OR IGNORE INTO grade_items (question_id) VALUES (?)",
                            sorted({(row[2],) for row in rows}))
        number = series[(grade_set_id, step)]
        before = self.db.total_changes
        self.db.executemany(_UPSERT.format(series=int(number), batch=int(self._batch)), rows)
        if self.db.total_changes != before:
            self.changed.add(number)


class BulkGrades:
    """`Store.grade_import`."""

    db: sqlite3.Connection

    @contextmanager
    def grade_import(self, created: str) -> Iterator[GradeImport]:
        """A `GradeImport` writing grades (stamped `created`) with the kept results' triggers held until the end,
        when the kept results of every grade set written to are dropped at once (see the module). Must run
        inside a transaction."""
        if not self.db.in_transaction:
            raise RuntimeError("grade_import needs a transaction (Store.transaction or bulk_transaction)")
        triggers = self.db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'grades'"
                                   " ORDER BY name").fetchall()
        held = triggers if all(_KEPT_TRIGGER.fullmatch(name) for name, _ in triggers) else []
        for name, _ in held:
            self.db.execute(f'DROP TRIGGER "{name}"')
        writer = GradeImport(self.db, self._numbers, created)  # type: ignore[attr-defined]
        try:
            yield writer
        finally:  # after an error too, unless the transaction is gone already (its rollback restored them)
            if self.db.in_transaction:
                self._release(held, writer.changed)
                if writer.new_batch and not writer.changed:  # an identical file again leaves no trace
                    self.db.execute("DELETE FROM grade_batches WHERE batch = ?", (writer._batch,))
                    writer.bookkeeping = 2

    def _release(self, held: list[tuple[str, str]], changed: set[int]) -> None:
        """Drop the kept results of the series written to, then make the held triggers again."""
        tables = sorted({_KEPT_TRIGGER.fullmatch(name).group(1) for name, _ in held})  # type: ignore[union-attr]
        if changed:
            marks = ", ".join("?" * len(changed))
            for table in tables:
                self.db.execute(f"DELETE FROM {table} WHERE grade_set_id IN (SELECT grade_set_id FROM grade_series"
                                f" WHERE series IN ({marks}))", sorted(changed))
        for _, sql in held:
            self.db.execute(sql)
