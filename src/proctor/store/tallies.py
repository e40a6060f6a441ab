"""Counts kept rather than recounted, and grades aggregated where they are (`Store.tallies`).

`grade_set_counts` keeps `{step: {parse_status: n}}` per grade set. Triggers on `grades` drop a grade set's
row (found through the grade's `grade_series`) whenever one of its grades is inserted, updated or deleted,
whatever code writes it; the next reader recounts that grade set alone (one range of the primary key per step)
and keeps the result when it can take the write lock at once (inside that lock, so no writer can slip in
between the count and the keeping)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from proctor.store.grades import SERIES
from proctor.store.repository import Repository

Counts = dict[str, dict[str, int]]


class TallyRepository(Repository):
    """Kept counts of grades (`grade_set_counts`), and labels aggregated in SQL."""

    def grade_counts(self) -> dict[str, Counts]:
        """`{grade_set_id: {step: {parse_status: n}}}` of every grade set, recounting only stale ones."""
        ids = [row[0] for row in self.db.execute("SELECT grade_set_id FROM grade_sets")]
        try:
            rows = self.db.execute("SELECT grade_set_id, counts FROM grade_set_counts")
            kept = {gid: json.loads(c) for gid, c in rows}
        except sqlite3.OperationalError:  # a read-only store of an earlier release: count every time
            return {gid: self.recount(gid) for gid in ids}
        stale = [gid for gid in ids if gid not in kept]
        if stale:
            kept.update(self._recount_and_keep(stale))
        return {gid: kept[gid] for gid in ids}

    def recount(self, grade_set_id: str) -> Counts:
        """`{step: {parse_status: n}}` of one grade set, counted from its grades (not kept)."""
        out: Counts = {}
        for step, status, n in self.db.execute(
                "SELECT step, parse_status, COUNT(*) FROM grades JOIN grade_series USING (series)"
                " WHERE grade_set_id = ? GROUP BY step, parse_status", (grade_set_id,)):
            out.setdefault(step, {})[status] = n
        return out

    def _recount_and_keep(self, ids: list[str]) -> dict[str, Counts]:
        """Recount inside the write lock and keep the counts; without the lock at once, only recount."""
        own = self.db.in_transaction
        if not own:
            timeout = self.db.execute("PRAGMA busy_timeout").fetchone()[0]
            try:
                self.db.execute("PRAGMA busy_timeout = 0")
                self.db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:  # busy, or a read-only connection
                return {gid: self.recount(gid) for gid in ids}
            finally:
                self.db.execute(f"PRAGMA busy_timeout = {int(timeout)}")
        try:
            counts = {gid: self.recount(gid) for gid in ids}
            self.db.executemany("INSERT OR REPLACE INTO grade_set_counts VALUES (?, ?)",
                                ((gid, json.dumps(c, sort_keys=True)) for gid, c in counts.items()))
        except BaseException:
            if not own and self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        if not own:
            self.db.execute("COMMIT")
        return counts

    def kept_counts(self) -> dict[str, Counts]:
        """`{grade_set_id: counts}` as kept now (a grade set written to since its last count has none)."""
        try:
            rows = self.db.execute("SELECT grade_set_id, counts FROM grade_set_counts")
            return {gid: json.loads(c) for gid, c in rows}
        except sqlite3.OperationalError:  # a read-only store of an earlier release keeps none
            return {}

    def label_histogram(self, grade_set_id: str, step: str) -> Iterator[tuple[str, str, int | None, int]]:
        """(query, passage, grade, n) in (query, passage) order: how many of the pair's questions gave each grade
        (grade None: failed). At one question the largest grade suffices: `ResultCaches.top_grades`."""
        yield from self.db.execute(
            f"SELECT query_id, passage_id, grade, COUNT(*) FROM grades WHERE series = {SERIES}"
            " GROUP BY query_id, passage_id, grade ORDER BY query_id, passage_id, grade DESC", (grade_set_id, step))

    def graded_questions(self, grade_set_id: str, step: str) -> Iterator[tuple[str, str]]:
        """(query, question) of every question graded for the query in one step of a grade set, distinct, in
        (query, question) order. SQLite gathers each query's distinct question numbers (the primary key's
        order: no sort of every grade row, half the time at 64× DL19); Python names and sorts them (code
        points order as SQLite's UTF-8 bytes do). The label cache keeps the numbers per query (`kept_questions`,
        the same aggregate, kept valid by its triggers); without it they are gathered from the grades."""
        names = {str(item): name for item, name in self.db.execute("SELECT item, question_id FROM grade_items")}
        rows = self._store.caches.kept_questions(grade_set_id, step)
        if rows is None:
            rows = self.db.execute(f"SELECT query_id, group_concat(DISTINCT item) FROM grades WHERE series = {SERIES}"
                                   " GROUP BY query_id ORDER BY query_id", (grade_set_id, step)).fetchall()
        for qid, items in rows:  # items are the integers of `grade_items` (as the cover cache's filling reads them)
            questions = {names.get(item) for item in items.split(",")}
            questions.discard(None)  # a number without a name (never written so) joins nothing, as before
            for question_id in sorted(questions):
                yield qid, question_id

    def answered(self, grade_set_id: str, step: str, tau: int) -> Iterator[tuple[str, str, str]]:
        """(query, passage, question) graded >= `tau` in one step of a grade set."""
        return self.db.execute(
            "SELECT query_id, passage_id, question_id FROM grades JOIN grade_items USING (item)"
            f" WHERE series = {SERIES} AND grade >= ? ORDER BY query_id, passage_id, question_id",
            (grade_set_id, step, tau))
