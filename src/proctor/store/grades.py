"""Grade sets, their grades and grading locks (`Store.grades`). Every grade belongs to exactly one grade set; a
step of a multi-step method keeps its grades in the set under its own step name. Grade sets derived from others
(ensembles) read a step's fingerprint and replace a derived step's grades in one go.

A grade row names its (grade set, step) by `grade_series.series`, its question by `grade_items.item` and its
writing time by `grade_batches.batch` (schema 3): the statements here map them to and from the names."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from itertools import islice
from typing import Any

from proctor.records import Grade, GradeSet
from proctor.store.bulk import KEPT_PER_GRADE_SET, GradeImport, hold_kept_triggers, upsert_sql
from proctor.store.repository import Repository, dumps, insert_plain, now

FAILED = "failed"
"""The `parse_status` of a grade whose reply could not be turned into a grade."""

_SET_COLUMNS = "method, model, prompt_version, bank_id, bank_version, params, label_step, info, created"
SERIES = "(SELECT series FROM grade_series WHERE grade_set_id = ? AND step = ?)"
"""The series of (grade set, step), a constant inside a statement (NULL, matching no grade, when it has none)."""
SERIES_OF_SET = "(SELECT series FROM grade_series WHERE grade_set_id = ?)"
"""The series of every step of a grade set."""
QUESTION = "(SELECT question_id FROM grade_items WHERE grade_items.item = grades.item)"
"""A grade row's question id."""
GRADES_AS_NAMED = (
    "SELECT grade_set_id, step, query_id, passage_id, question_id, raw_reply, grade, parse_status, answer, correct,"
    " extra, created, attempts FROM grades JOIN grade_series USING (series) JOIN grade_items USING (item)"
    " JOIN grade_batches USING (batch)")
"""Grade rows with their names, as schema 2 stored them (`Store.dump`)."""
_CHUNK = 50000
"""Grade rows written per statement by `upsert_grade_rows` (their names mapped to numbers first)."""


class GradeRepository(Repository):
    """The `grade_sets`, `grades` (with `grade_series`, `grade_items`, `grade_batches`) and `grading_locks`
    tables."""

    # -- grade sets ----------------------------------------------------------------------------------
    def ensure_grade_set(self, grade_set: GradeSet) -> str:
        """Record a grade set (once; later calls keep the first record's info); returns its id."""
        self.db.execute(
            f"INSERT OR IGNORE INTO grade_sets (grade_set_id, {_SET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (grade_set.id, grade_set.method, grade_set.model, grade_set.prompt_version, grade_set.bank,
             grade_set.bank_version, dumps(grade_set.params), grade_set.step, dumps(grade_set.info), now()))
        return grade_set.id

    def update_grade_set_info(self, grade_set_id: str, info: dict[str, Any]) -> None:
        """Merge `info` into a grade set's recorded information."""
        row = self.db.execute("SELECT info FROM grade_sets WHERE grade_set_id = ?", (grade_set_id,)).fetchone()
        merged = {**(json.loads(row[0]) if row and row[0] else {}), **info}
        self.db.execute("UPDATE grade_sets SET info = ? WHERE grade_set_id = ?", (dumps(merged), grade_set_id))

    def grade_sets(self) -> list[GradeSet]:
        """Every grade set with its numbers of grades and failures (of its label step)."""
        counts = self._store.tallies.grade_counts()
        sets = []
        for row in self.db.execute(f"SELECT grade_set_id, {_SET_COLUMNS} FROM grade_sets ORDER BY method, model, "
                                   "created, grade_set_id"):
            step = counts.get(row[0], {}).get(row[7] or row[1], {})  # label_step, else the method
            grade_set = _grade_set(row[1:], sum(step.values()), step.get(FAILED, 0))
            sets.append(grade_set if grade_set.id == row[0] else _Stored(row[0], grade_set))
        return sets

    def step_statuses(self, grade_set_id: str) -> dict[str, dict[str, int]]:
        """`{step: {parse_status: count}}` of one grade set."""
        return self._store.tallies.grade_counts().get(grade_set_id, {})

    def drop_grade_set(self, grade_set_id: str) -> int:
        """Delete a grade set with every grade of every step (the response cache stays); returns the grades."""
        grades = self.db.execute(f"DELETE FROM grades WHERE series IN {SERIES_OF_SET}", (grade_set_id,)).rowcount
        self.db.execute("DELETE FROM grade_series WHERE grade_set_id = ?", (grade_set_id,))  # after its grades
        self.db.execute("DELETE FROM grading_locks WHERE grade_set_id = ?", (grade_set_id,))
        self.db.execute("DELETE FROM grade_sets WHERE grade_set_id = ?", (grade_set_id,))
        for table in KEPT_PER_GRADE_SET:  # a set without grades fires no trigger: its kept rows go here
            self.db.execute(f"DELETE FROM {table} WHERE grade_set_id = ?", (grade_set_id,))
        return grades

    def is_grade_set(self, grade_set_id: str) -> bool:
        """Whether the store records this grade set."""
        sql = "SELECT 1 FROM grade_sets WHERE grade_set_id = ?"
        return self.db.execute(sql, (grade_set_id,)).fetchone() is not None

    def discard_if_empty(self, grade_set_id: str) -> bool:
        """Delete a grade set that holds nothing (no grade, no failure, of any step); True when it did."""
        if self.db.execute(f"SELECT 1 FROM grades WHERE series IN {SERIES_OF_SET} LIMIT 1", (grade_set_id,)).fetchone():
            return False
        self.drop_grade_set(grade_set_id)
        return True

    def forget_failed(self, grade_set_id: str) -> dict[str, int]:
        """Delete the failed grades of a grade set (so the next `grade` sends those pairs again, also those
        that failed `--max-attempts` times); returns `{step: failed grades deleted}`."""
        counts = dict(self.db.execute(
            "SELECT step, COUNT(*) FROM grades JOIN grade_series USING (series) WHERE grade_set_id = ?"
            " AND parse_status = ? GROUP BY step", (grade_set_id, FAILED)).fetchall())
        self.db.execute(f"DELETE FROM grades WHERE series IN {SERIES_OF_SET} AND parse_status = ?",
                        (grade_set_id, FAILED))
        return counts

    # -- grades --------------------------------------------------------------------------------------
    def upsert_grades(self, grade_set_id: str, grades: Iterable[Grade], created: str | None = None, *,
                      attempt: bool = False) -> None:
        """Add grades to a grade set (`Grade.method` is the step). Imports rewrite a stored grade only when its
        content differs; a grading `attempt` always replaces it and counts one more attempt at the pair."""
        self.upsert_grade_rows(grade_set_id, (
            (g.method, g.query_id, g.passage_id, g.question_id, g.raw_reply, g.grade, g.parse_status, g.answer,
             None if g.correct is None else int(g.correct), dumps(g.extra)) for g in grades), created, attempt=attempt)

    def upsert_grade_rows(self, grade_set_id: str, rows: Iterable[tuple], created: str | None = None, *,
                          attempt: bool = False) -> None:
        """`upsert_grades` of plain rows: (step, query, passage, question, raw reply, grade, parse status, answer,
        correct as 0/1/None, extra as JSON or None)."""
        created = created or now()
        sql = upsert_sql("?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1", attempt=attempt)
        rows = iter(rows)
        while chunk := list(islice(rows, _CHUNK)):
            series = {key[1]: n for key, n in self._numbers(
                "grade_series", "series", ("grade_set_id", "step"), {(grade_set_id, s) for s in {r[0] for r in chunk}})
                .items()}
            items = {key[0]: n for key, n in self._numbers(
                "grade_items", "item", ("question_id",), {(q,) for q in {r[3] for r in chunk}}).items()}
            batch = self._numbers("grade_batches", "batch", ("created",), {(created,)})[(created,)]
            self.db.executemany(sql, ((series[r[0]], r[1], r[2], items[r[3]], *r[4:], batch) for r in chunk))

    def upsert_attempt_rows(self, grade_set_id: str, rows: list[tuple]) -> None:
        """`upsert_grade_rows` of many rows of one grading attempt (a query of the embedding method's bulk path)
        through the bulk path: the kept results' triggers held while they are written, the grade set's kept
        results dropped once after (`store/bulk.py`). Must run inside a transaction."""
        if not rows:
            return
        with self.grade_import(now()) as writer:
            self.upsert_grade_rows(grade_set_id, rows, writer.created, attempt=True)
            steps = {(grade_set_id, step) for step in {row[0] for row in rows}}
            writer.changed.update(self._numbers("grade_series", "series", ("grade_set_id", "step"), steps).values())

    def add_query_grades(self, grade_set_id: str, step: str, query_id: str, status: str, columns: tuple[list, ...]
                         ) -> None:
        """One grading attempt's grades of one query, as `columns` (passages, questions, grades, extras as JSON), all
        with parse status `status` and no reply, answer or correctness: the rows `upsert_attempt_rows` writes for
        them (same numbering, same bytes), by plain inserts of `ROWS_PER_INSERT` rows a statement when the step
        holds no grade of the query yet (`insert_query_columns`), by the upsert otherwise (a retry). Must run
        inside a transaction."""
        passages, questions, grades, extras = columns
        if not passages:
            return
        created = now()
        with self.grade_import(created) as writer:
            series = self._numbers("grade_series", "series", ("grade_set_id", "step"), {(grade_set_id, step)})
            number = series[(grade_set_id, step)]
            writer.changed.add(number)
            if self.db.execute("SELECT 1 FROM grades WHERE series = ? AND query_id = ? LIMIT 1",
                               (number, query_id)).fetchone() is None:
                items = {key[0]: n for key, n in self._numbers(
                    "grade_items", "item", ("question_id",), {(q,) for q in set(questions)}).items()}
                batch = self._numbers("grade_batches", "batch", ("created",), {(created,)})[(created,)]
                with suppress(sqlite3.IntegrityError):  # a pair given twice: written by the upsert, as before
                    insert_query_columns(self.db, (number, query_id, status, batch),
                                         (passages, list(map(items.__getitem__, questions)), grades, extras))
                    return
            self.upsert_grade_rows(grade_set_id, [(step, query_id, p, q, None, g, status, None, None, e) for
                                                  p, q, g, e in zip(*columns, strict=True)], created, attempt=True)

    def _numbers(self, table: str, number: str, columns: tuple[str, ...], keys: set[tuple]) -> dict[tuple, int]:
        """`{key: number}` of the keys, numbering those `table` lacks."""
        names = ", ".join(columns)
        marks = ", ".join("?" * len(columns))
        self.db.executemany(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", sorted(keys))
        where = " AND ".join(f"{c} = ?" for c in columns)
        select = f"SELECT {number} FROM {table} WHERE {where}"
        return {key: self.db.execute(select, key).fetchone()[0] for key in keys}

    def exhausted(self, grade_set_id: str, step: str, max_attempts: int) -> set[tuple[str, str, str]]:
        """Failed pairs of a step that were tried `max_attempts` times or more (kept as failed, not retried)."""
        return set(self.db.execute(
            f"SELECT query_id, passage_id, {QUESTION} FROM grades WHERE series = {SERIES}"
            " AND parse_status = ? AND attempts >= ?", (grade_set_id, step, FAILED, max_attempts)))

    # -- grading locks -------------------------------------------------------------------------------
    def lock_grade_set(self, grade_set_id: str, pid: int, host: str, alive) -> tuple[int, str] | None:
        """Take the grading lock of a grade set; returns (pid, started) of a live holder instead (on this host,
        `alive(pid)` decides; a dead holder's lock is taken over)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute("SELECT pid, host, started FROM grading_locks WHERE grade_set_id = ?",
                                  (grade_set_id,)).fetchone()
            if row is not None and row[0] != pid and (row[1] != host or alive(row[0])):
                self.db.execute("ROLLBACK")
                return row[0], row[2]
            self.db.execute("INSERT OR REPLACE INTO grading_locks VALUES (?, ?, ?, ?)",
                            (grade_set_id, pid, host, now()))
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return None

    def unlock_grade_set(self, grade_set_id: str, pid: int) -> None:
        """Release a grading lock this process holds."""
        self.db.execute("DELETE FROM grading_locks WHERE grade_set_id = ? AND pid = ?", (grade_set_id, pid))

    def grade_rows(self, grade_set_id: str, step: str) -> Iterator[tuple[str, str, str, int | None]]:
        """(query, passage, question, grade) of one step of a grade set; failed grades have grade None."""
        return self.db.execute(
            "SELECT query_id, passage_id, question_id, grade FROM grades JOIN grade_items USING (item)"
            f" WHERE series = {SERIES} ORDER BY query_id, passage_id, question_id", (grade_set_id, step))

    def records(self, grade_set: GradeSet, step: str | None = None, query: str | None = None) -> Iterator[Grade]:
        """Full grade records of a grade set (of one step, or of all; of one query, or of all), `method` being the
        step."""
        sql = ("SELECT query_id, passage_id, question_id, step, grade, parse_status, raw_reply, answer, correct, extra"
               " FROM grades JOIN grade_series USING (series) JOIN grade_items USING (item) WHERE grade_set_id = ?")
        args: list[str] = [grade_set.id]
        if step is not None:
            sql += " AND step = ?"
            args.append(step)
        if query is not None:
            sql += " AND query_id = ?"
            args.append(query)
        for qid, pid, item, stp, grade, status, raw, answer, correct, extra in self.db.execute(
                sql + " ORDER BY query_id, passage_id, step, question_id", args):
            yield Grade(qid, pid, item, stp, grade_set.model, grade_set.prompt_version, grade, status, raw, answer,
                        None if correct is None else bool(correct), json.loads(extra) if extra else None)

    def stored_rows(self, grade_set_id: str, step: str) -> Iterator[tuple]:
        """(query, passage, question, raw reply, grade, parse status, answer, correct as 0/1/None, extra as stored
        JSON) of one step, in (query, passage, question) order: the grades exactly as stored, for an export."""
        yield from self.db.execute(
            "SELECT query_id, passage_id, question_id, raw_reply, grade, parse_status, answer, correct, extra FROM"
            f" grades JOIN grade_items USING (item) WHERE series = {SERIES} ORDER BY query_id, passage_id, question_id",
            (grade_set_id, step))

    def graded(self, grade_set_id: str, step: str) -> dict[tuple[str, str, str], tuple[int | None, str | None, str]]:
        """`{(query, passage, item): (grade, answer, status)}` of the pairs of a step that have a usable grade."""
        return {(q, p, i): (g, a, s) for q, p, i, g, a, s in self.db.execute(
            "SELECT query_id, passage_id, question_id, grade, answer, parse_status FROM grades JOIN grade_items"
            f" USING (item) WHERE series = {SERIES} AND parse_status != ? ORDER BY query_id, passage_id, question_id",
            (grade_set_id, step, FAILED))}

    def carry_grades(self, target: str, source: str, step: str, question_ids: Iterable[str]) -> int:
        """Copy the usable grades of unchanged questions from another grade set of the same experiment into
        `target` (pairs it already has are kept); returns how many were copied."""
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS carry_ids (question_id TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM carry_ids")
        self.db.executemany("INSERT OR IGNORE INTO carry_ids VALUES (?)", ((q,) for q in question_ids))
        self.db.execute("INSERT OR IGNORE INTO grade_series (grade_set_id, step) VALUES (?, ?)", (target, step))
        cursor = self.db.execute(  # rowcount: the rows inserted, not the kept counts the triggers drop
            f"INSERT OR IGNORE INTO grades SELECT {SERIES}, query_id, passage_id, item, raw_reply, grade,"
            " parse_status, answer, correct, json_set(COALESCE(extra, '{}'), '$.carried_from', ?), batch, attempts"
            f" FROM grades WHERE series = {SERIES} AND parse_status != ? AND item IN (SELECT item FROM grade_items"
            " WHERE question_id IN (SELECT question_id FROM carry_ids))", (target, step, source, source, step, FAILED))
        return cursor.rowcount

    @contextmanager
    def grade_import(self, created: str) -> Iterator[GradeImport]:
        """A `GradeImport` writing grades (stamped `created`) with the kept results' triggers held until the end,
        when the kept results of every grade set written to are dropped at once (`store/bulk.py`). Must run
        inside a transaction."""
        if not self.db.in_transaction:
            raise RuntimeError("grade_import needs a transaction (Store.transaction or bulk_transaction)")
        writer = GradeImport(self.db, self._numbers, created)
        with hold_kept_triggers(self.db, writer):
            yield writer

    # -- derived grade sets --------------------------------------------------------------------------
    def grade_fingerprint(self, grade_set_id: str, step: str) -> list[int]:
        """`[grades, usable grades, sum of grades, newest batch]` of one step: any added, removed, re-graded or
        newly failed grade changes it."""
        row = self.db.execute(f"SELECT COUNT(*), COUNT(grade), TOTAL(grade), MAX(batch) FROM grades WHERE series = "
                              f"{SERIES}", (grade_set_id, step)).fetchone()
        return [int(row[0]), int(row[1]), int(row[2]), int(row[3] or 0)]

    def replace_step_grades(self, grade_set_id: str, step: str, rows: Iterable[tuple]) -> None:
        """Delete every grade of one step of a grade set and write `rows` (as `upsert_grade_rows` takes them)
        instead; call inside a transaction."""
        self.db.execute(f"DELETE FROM grades WHERE series = {SERIES}", (grade_set_id, step))
        self.upsert_grade_rows(grade_set_id, rows)


_QUERY_ROW = "({series}, ?, ?, ?, NULL, ?, ?, NULL, NULL, ?, {batch}, 1)"
"""A new grade row of one query without reply, answer or correctness, one attempt: (query, passage, question's
number, grade, parse status, extra)."""


def insert_query_columns(db: sqlite3.Connection, fixed: tuple[int, str, str, int], columns: tuple[list, ...]) -> None:
    """Plain inserts of one query's new grade rows (`store.repository.insert_plain`): `fixed` (series, query,
    parse status, batch), `columns` (passages, questions' numbers, grades, extras). Every key must be new: one that
    is not raises `sqlite3.IntegrityError`, with nothing written (the statements run inside a savepoint)."""
    series, query_id, status, batch = fixed
    passages, items, grades, extras = columns
    count = len(passages)
    flat: list = [None] * (6 * count)
    for at, column in enumerate(([query_id] * count, passages, items, grades, [status] * count, extras)):
        flat[at::6] = column  # interleaved in C: no tuple per row
    db.execute("SAVEPOINT query_rows")
    try:
        insert_plain(db, "grades", _QUERY_ROW.format(series=int(series), batch=int(batch)), flat, 6)
    except BaseException:
        db.execute("ROLLBACK TO query_rows")
        raise
    finally:
        db.execute("RELEASE query_rows")


class _Stored(GradeSet):
    """A grade set whose stored id differs from the one its fields give (kept as stored)."""

    def __init__(self, stored_id: str, grade_set: GradeSet) -> None:
        super().__init__(**{f: getattr(grade_set, f) for f in grade_set.__dataclass_fields__})
        object.__setattr__(self, "_stored_id", stored_id)

    @property
    def id(self) -> str:
        return self._stored_id  # type: ignore[attr-defined]


def _grade_set(row: tuple, grades: int, failures: int) -> GradeSet:
    method, model, version, bank, bank_version, params, step, info, created = row
    return GradeSet(method, model, version, bank, bank_version, json.loads(params), step,
                    json.loads(info) if info else {}, grades, failures, created)

