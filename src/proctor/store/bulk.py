"""Writing grades: the upsert of one grade row, and many grades at once (an import of millions of grades).

Each kept result of grades (`grade_set_counts`, `label_cache`, `cover_cache`) has triggers on `grades` that drop
a grade set's rows whenever one of its grades is inserted, updated or deleted. For one row that is right; for
millions in one transaction it is three lookups and deletes per row (a third of the write), each dropping
what the first one already dropped. Inside `GradeRepository.grade_import` those triggers are dropped, the
grades are written, and then the kept results of every grade set written to are deleted once and the triggers made again
from their own SQL — all inside the caller's transaction, so no other connection ever sees the store without
them, and a rollback (an error, a crash) brings them back with everything else. A trigger on `grades` this
module does not know (someone added their own) keeps every trigger in place: the write is slower, not wrong.

The grade rows are bound with the (grade set, step) and the writing time as numbers in the statement and the
question's number from a map kept while writing (each question looked up in `grade_items` once: a lookup per row
in SQL cost more than the tuple Python makes per row)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain, repeat
from operator import itemgetter

from proctor.store.repository import insert_new_first, insert_plain, insert_shared

KEPT_PER_GRADE_SET = ("grade_set_counts", "label_cache", "cover_cache")
"""Tables of results kept per grade set (column `grade_set_id`) and dropped by triggers when its grades change."""

PAIRS = "json_group_array(json_array(passage_id, top, graded, failed))"
"""A query's labels as `label_cache` keeps them: `[passage, largest grade, usable grades, failed grades]` in passage
order (`store.caches`)."""
QUESTIONS = "group_concat(DISTINCT item)"
"""A query's graded questions as `label_cache` keeps them: their numbers in the primary key's order."""
_QUERY_PAIRS = (f"SELECT {PAIRS} FROM (SELECT passage_id, MAX(grade) AS top, COUNT(grade) AS graded,"
                " COUNT(*) - COUNT(grade) AS failed FROM grades WHERE series = ? AND query_id = ? GROUP BY passage_id)")
_QUERY_QUESTIONS = f"SELECT {QUESTIONS} FROM grades WHERE series = ? AND query_id = ?"
_QUERY_STATUSES = "SELECT parse_status, COUNT(*) FROM grades WHERE series = ? AND query_id = ? GROUP BY parse_status"
def conflict_sql(*, attempt: bool) -> str:
    """The conflict clause of the upsert of a grade row. A grading `attempt` always replaces the stored grade and
    counts one more attempt; otherwise (an import) a stored grade is rewritten only when its content differs, and
    its attempts stay."""
    condition = "" if attempt else (
        " WHERE grades.raw_reply IS NOT excluded.raw_reply OR grades.grade IS NOT excluded.grade"
        " OR grades.parse_status IS NOT excluded.parse_status OR grades.answer IS NOT excluded.answer"
        " OR grades.correct IS NOT excluded.correct OR grades.extra IS NOT excluded.extra")
    return ("ON CONFLICT DO UPDATE SET raw_reply = excluded.raw_reply, grade = excluded.grade,"
            " parse_status = excluded.parse_status, answer = excluded.answer, correct = excluded.correct,"
            f" extra = excluded.extra, batch = excluded.batch, attempts = grades.attempts + {int(attempt)}" + condition)


def upsert_sql(values: str, *, attempt: bool) -> str:
    """The upsert of one grade row given as `values` (the 12 columns' SQL; `conflict_sql`)."""
    return f"INSERT INTO grades VALUES ({values}) {conflict_sql(attempt=attempt)}"


_KEPT_TRIGGER = re.compile(rf"({'|'.join(KEPT_PER_GRADE_SET)})_(insert|update|delete)")

_VALUES = "({series}, ?, ?, ?, ?, ?, ?, ?, ?, ?, {batch}, 1)"
"""An import's grade row of (query, passage, question's number, raw reply, grade, parse status, answer, correct,
extra): the series and the batch are formatted in as numbers."""
_CONFLICT = conflict_sql(attempt=False)
"""An import's upsert: a stored grade rewritten only when its content differs."""
_SHARED = "({series}, ?1, {{0}}, {{1}}, {{2}}, {{3}}, 'imported', {{2}}, {{4}}, NULL, {batch}, 1)"
"""`_VALUES` of rows of one query, parse status `imported`, the answer the raw reply and no extra (an exam_pp line's
grades): the query bound once a statement, five values a row (passage, question's number, raw reply, grade,
correct)."""
_ITEM = "SELECT item FROM grade_items WHERE question_id = ?"
_PASSAGE = itemgetter(0)
_IMPORTED = "imported"
"""The parse status `_SHARED` writes (an exam_pp file's grades have it: `io.exampp_rows.IMPORTED`)."""


class GradeImport:
    """Writes rows of grades inside `GradeRepository.grade_import`; remembers the series it changed."""

    def __init__(self, db: sqlite3.Connection, numbers: Callable[..., dict[tuple, int]], created: str) -> None:
        self.db, self._numbers, self.created = db, numbers, created
        self.changed: set[int] = set()
        self._batch: int | None = None
        self.new_batch = False
        """Whether this import numbered its writing time itself (dropped again when it wrote no grade)."""
        self.bookkeeping = 0
        """Rows written and deleted again (that number): changes of the store's counter that changed nothing."""
        self.fresh: dict[int, bool] = {}
        """Per series written: whether it held no grade before this import."""
        self.kept: dict[int, dict[str, tuple[str, str, list[tuple[str, int]]]]] = {}
        """Per fresh series, per query written: its labels, questions and counts per parse status, aggregated
        right after its rows were written (the pages are at hand; the import keeps them at its end)."""
        self._stale_mark = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM stale_grades").fetchone()[0]
        self._items: dict[str, int] = {}
        """`grade_items` numbers of the questions written so far (looked up once each, not per row)."""

    @property
    def batch(self) -> int | None:
        """The `grade_batches` entry of the grades written (None before the first)."""
        return self._batch

    def write(self, grade_set_id: str, step: str, rows: Sequence[tuple]) -> None:
        """Upsert (query, passage, question, raw reply, grade, parse status, answer, correct, extra as JSON) rows
        into a step of a grade set (the grade set is recorded already)."""
        if not rows:
            return
        number, numbers = self._series(grade_set_id, step, map(itemgetter(2), rows))
        before = self.db.total_changes
        narrow: list[list] = []

        def plain(flat: list, width: int) -> None:
            narrow[:] = _insert(self.db, numbers, flat, width)

        all_new = insert_new_first(self.db, "grades", _VALUES.format(**numbers), _CONFLICT,
                                   rows if isinstance(rows, list | tuple) else list(rows),
                                   mapped=(2, self._items.__getitem__), plain=plain)
        if self.db.total_changes != before:
            self.changed.add(number)
        if self.fresh[number]:
            self._aggregate(number, set(map(itemgetter(0), rows)), len(rows), narrow[0] if all_new and narrow else None)

    def write_blocks(self, grade_set_id: str, step: str, query_id: str, blocks: list[tuple]) -> None:
        """`write` of one query's grades given as blocks (passage, questions, answers, grades, verdicts; every grade
        parse status `imported`, its answer its raw reply, no extra: `io.exampp_rows.Block`), by `_SHARED` from
        columns put together in C (no tuple per grade); the upsert after a known key, as `insert_new_first`."""
        if not blocks:
            return
        lists = {id(block[1]): block[1] for block in blocks}  # the questions of a query's entries: one list or few
        number, numbers = self._series(grade_set_id, step, chain.from_iterable(lists.values()))
        narrow = self._columns(sorted(blocks, key=_PASSAGE))  # by passage: the key's order, fewer busy pages
        before = self.db.total_changes
        try:
            insert_shared(self.db, "grades", _SHARED.format(**numbers), [query_id], narrow, 5)
        except sqlite3.IntegrityError:  # a key the store holds: every row through the upsert (`insert_new_first`),
            flat = self._columns(blocks)  # in the file's order (what the guard names first)
            self.db.executemany(f"INSERT INTO grades VALUES {_VALUES.format(**numbers)} {_CONFLICT}",
                                [(query_id, flat[at], flat[at + 1], flat[at + 2], flat[at + 3], _IMPORTED,
                                  flat[at + 2], flat[at + 4], None) for at in range(0, len(flat), 5)])
            narrow = None
        if self.db.total_changes != before:
            self.changed.add(number)
        if self.fresh[number]:
            self._aggregate(number, {query_id}, sum(len(block[1]) for block in blocks), narrow)

    def _columns(self, blocks: list[tuple]) -> list:
        """The blocks' grades as `_SHARED` binds them, five values a row (the questions numbered), put together in C."""
        narrow: list = [None] * (5 * sum(len(block[1]) for block in blocks))
        narrow[0::5] = list(chain.from_iterable(repeat(block[0], len(block[1])) for block in blocks))
        narrow[1::5] = list(map(self._items.__getitem__, chain.from_iterable(block[1] for block in blocks)))
        for at in (2, 3, 4):
            narrow[at::5] = list(chain.from_iterable(block[at] for block in blocks))
        return narrow

    def _series(self, grade_set_id: str, step: str, questions: Iterable[str]) -> tuple[int, dict[str, int]]:
        """The series of (grade set, step), numbered when new, and the numbers a statement formats in (series,
        batch); the questions numbered (`grade_items`) when new."""
        series = self._numbers("grade_series", "series", ("grade_set_id", "step"), {(grade_set_id, step)})
        if self._batch is None:
            self.new_batch = self.db.execute("SELECT 1 FROM grade_batches WHERE created = ?",
                                             (self.created,)).fetchone() is None
            self._batch = self._numbers("grade_batches", "batch", ("created",), {(self.created,)})[(self.created,)]
        items = self._items
        new = sorted(set(questions) - items.keys())
        if new:  # numbered in this order when the store lacks them
            self.db.executemany("INSERT OR IGNORE INTO grade_items (question_id) VALUES (?)", [(q,) for q in new])
            items.update((q, self.db.execute(_ITEM, (q,)).fetchone()[0]) for q in new)
        number = series[(grade_set_id, step)]
        if number not in self.fresh:
            self.fresh[number] = self.db.execute("SELECT 1 FROM grades WHERE series = ? LIMIT 1",
                                                 (number,)).fetchone() is None
        return number, {"series": int(number), "batch": int(self._batch)}

    def _aggregate(self, number: int, queries: set[str], count: int, written: list | None) -> None:
        """Keep the labels, questions and counts per parse status of each of the `queries` whose `count` rows were just
        written into fresh series `number`, read from the pages just written. A query written here for the first
        time, alone in the rows (an exam_pp
        line's grade set), whose rows were all new (every (passage, question) once: `insert_new_first`) and
        `written` by `_SHARED` (its five values a row), has all its grades in the series in hand: its statuses are
        counted from them (all `imported`), its labels and questions made from them when every passage has the
        same questions in the same order and a grade for each (`_in_blocks`); otherwise they are read from the table
        (a query written again: the last aggregate counts; a grade given twice is one row)."""
        kept = self.kept.setdefault(number, {})
        if written is not None and len(queries) == 1 and not queries & kept.keys():
            [query_id] = queries
            pairs, questions = _in_blocks(written) or (None, None)
            key = (number, query_id)
            kept[query_id] = (pairs or self.db.execute(_QUERY_PAIRS, key).fetchone()[0],
                              questions or self.db.execute(_QUERY_QUESTIONS, key).fetchone()[0],
                              [(_IMPORTED, count)])
            return
        for query_id in queries:
            key = (number, query_id)
            kept[query_id] = (self.db.execute(_QUERY_PAIRS, key).fetchone()[0],
                              self.db.execute(_QUERY_QUESTIONS, key).fetchone()[0],
                              self.db.execute(_QUERY_STATUSES, key).fetchall())

    def keep(self) -> None:
        """At the end (after the kept results of the series written were dropped): keep the label cache of every
        fresh series that is its grade set's label step, and the counts of every grade set whose grades are all
        in fresh series — the rows a reader's filling would make, aggregated query by query as they were
        written. Nothing is kept when grades were set aside as stale meanwhile (they may be rows written here)."""
        stale = self.db.execute("SELECT COALESCE(MAX(rowid), 0) FROM stale_grades").fetchone()[0]
        if not self.kept or stale != self._stale_mark:
            return
        steps = {number: self.db.execute(
            "SELECT grade_set_id, step, CASE WHEN label_step != '' THEN label_step ELSE method END FROM grade_series"
            " JOIN grade_sets USING (grade_set_id) WHERE series = ?", (number,)).fetchone() for number in self.kept}
        self.db.executemany("INSERT OR REPLACE INTO label_cache (grade_set_id, step, query_id, pairs, questions)"
                            " VALUES (?, ?, ?, ?, ?)", [(gid, step, query_id, *self.kept[number][query_id][:2])
                                                 for number, (gid, step, label) in sorted(steps.items())
                                                 if step == label for query_id in sorted(self.kept[number])])
        for grade_set_id in sorted({gid for gid, _, _ in steps.values()}):
            series = self.db.execute("SELECT series, step FROM grade_series WHERE grade_set_id = ?",
                                     (grade_set_id,)).fetchall()
            if any(number not in self.kept and self.db.execute("SELECT 1 FROM grades WHERE series = ? LIMIT 1",
                                                               (number,)).fetchone() for number, _ in series):
                continue  # grades of a step this import did not write: counted from the table when read
            counts: dict[str, dict[str, int]] = {}
            for number, step in series:
                for _, _, statuses in self.kept.get(number, {}).values():
                    for status, n in statuses:
                        by_status = counts.setdefault(step, {})
                        by_status[status] = by_status.get(status, 0) + n
            self.db.execute("INSERT OR REPLACE INTO grade_set_counts VALUES (?, ?)",
                            (grade_set_id, json.dumps(counts, sort_keys=True)))


def _insert(db: sqlite3.Connection, numbers: dict[str, int], flat: list, width: int) -> list[list]:
    """The plain insert of grade rows (flattened, their questions numbered): by `_SHARED` when the rows are of one
    query, parse status `imported`, answer = raw reply and no extra (checked column by column in C: list slices
    compared and counted), else by `_VALUES`. Returns `[the five values a row _SHARED wrote]`, or `[]`."""
    count = len(flat) // width
    query = flat[0]
    if width == 9 and flat[0::9].count(query) == count and flat[5::9].count(_IMPORTED) == count \
            and flat[8::9].count(None) == count and flat[3::9] == flat[6::9]:
        narrow: list = [None] * (5 * count)
        for at, column in enumerate((1, 2, 3, 4, 7)):
            narrow[at::5] = flat[column::9]
        insert_shared(db, "grades", _SHARED.format(**numbers), [query], narrow, 5)
        return [narrow]
    insert_plain(db, "grades", _VALUES.format(**numbers), flat, width)
    return []


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""JSON as SQLite's `json_group_array(json_array(...))` writes it: no spaces, characters other than `"`, `\\` and
controls as they are (an id holds no control character)."""


def _in_blocks(written: list) -> tuple[str, str] | None:
    """(`PAIRS`, `QUESTIONS`) of one query's new grade rows as `_SHARED` wrote them (passage, question's number,
    raw reply, grade, correct), made in Python the way SQLite makes them from the table, when the rows are blocks
    of one passage each holding the same questions in the same order, every one with a grade (an exam_pp line:
    every passage graded on every question). A passage's label is then its largest grade, `len(block)` usable
    grades, none failed; the labels go in passage order (SQLite's `GROUP BY passage_id`: UTF-8 bytes, code point
    order); the questions in the primary key's order, the first passage's (all of them) by number. None for any
    other rows (read from the table instead)."""
    passages, items, grades = written[0::5], written[1::5], written[3::5]
    size = next((at for at, passage in enumerate(passages) if passage != passages[0]), len(passages))
    heads = passages[::size]
    if len(passages) % size or None in grades or items != items[:size] * len(heads) \
            or any(passages[at::size] != heads for at in range(1, size)) or len(set(heads)) != len(heads):
        return None
    tops = map(max, *(grades[at::size] for at in range(size))) if size > 1 else iter(grades)
    pairs = _COMPACT([[passage, top, size, 0] for passage, top in sorted(zip(heads, tops, strict=True))])
    return pairs, ",".join(map(str, sorted(set(items[:size]))))


def hold_triggers(db: sqlite3.Connection, table: str, known: re.Pattern[str]) -> list[tuple[str, str]]:
    """Drop the triggers on `table` when every one of them is `known` (a trigger this module does not know keeps
    them all in place: slower, not wrong); returns the (name, SQL) of those dropped, to be made again."""
    triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
                          " ORDER BY name", (table,)).fetchall()
    held = triggers if all(known.fullmatch(name) for name, _ in triggers) else []
    for name, _ in held:
        db.execute(f'DROP TRIGGER "{name}"')
    return held


@contextmanager
def hold_kept_triggers(db: sqlite3.Connection, writer: GradeImport) -> Iterator[None]:
    """Drop the kept results' triggers on `grades` while `writer` writes; at the end drop the kept results of
    every grade set written to at once and make the triggers again (see the module)."""
    held = hold_triggers(db, "grades", _KEPT_TRIGGER)
    done = False
    try:
        yield
        done = True
    finally:  # after an error too, unless the transaction is gone already (its rollback restored them)
        if db.in_transaction:
            _release(db, held, writer.changed)
            if done:
                writer.keep()
            if writer.new_batch and not writer.changed:  # an identical file again leaves no trace
                db.execute("DELETE FROM grade_batches WHERE batch = ?", (writer.batch,))
                writer.bookkeeping = 2


def _release(db: sqlite3.Connection, held: list[tuple[str, str]], changed: set[int]) -> None:
    """Drop the kept results of the series written to, then make the held triggers again."""
    tables = sorted({_KEPT_TRIGGER.fullmatch(name).group(1) for name, _ in held})  # type: ignore[union-attr]
    if changed:
        marks = ", ".join("?" * len(changed))
        for table in tables:
            db.execute(f"DELETE FROM {table} WHERE grade_set_id IN (SELECT grade_set_id FROM grade_series"
                       f" WHERE series IN ({marks}))", sorted(changed))
    for _, sql in held:
        db.execute(sql)
