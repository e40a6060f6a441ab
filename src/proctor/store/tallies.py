"""Counts kept rather than recounted, and grades aggregated where they are (mixed into `Store`).

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

COUNTS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS grade_set_counts (grade_set_id TEXT PRIMARY KEY, counts TEXT NOT NULL) WITHOUT ROWID",
    *(f"CREATE TRIGGER IF NOT EXISTS grade_set_counts_{event.lower()} AFTER {event} ON grades BEGIN"
      " DELETE FROM grade_set_counts WHERE grade_set_id ="
      f" (SELECT grade_set_id FROM grade_series WHERE series = {row}.series); END"
      for event, row in (("INSERT", "NEW"), ("DELETE", "OLD"))),
    "CREATE TRIGGER IF NOT EXISTS grade_set_counts_update AFTER UPDATE ON grades BEGIN"
    " DELETE FROM grade_set_counts WHERE grade_set_id IN"
    " (SELECT grade_set_id FROM grade_series WHERE series IN (OLD.series, NEW.series)); END",
)
"""Statements (each run on its own: triggers hold semicolons) that every writable store gets when opened."""

Counts = dict[str, dict[str, int]]


class GradeTallies:
    """Kept counts of grades, and labels aggregated in SQL."""

    db: sqlite3.Connection

    def ensure_tallies(self) -> None:
        """Give the store the kept-counts table and its triggers (stores of earlier releases lack them)."""
        have = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'grade_set_counts%'")}
        if len(have) < len(COUNTS_SCHEMA):  # written only when missing: opening never waits for a writer
            for statement in COUNTS_SCHEMA:
                self.db.execute(statement)

    def grade_counts(self) -> dict[str, Counts]:
        """`{grade_set_id: {step: {parse_status: n}}}` of every grade set, recounting only stale ones."""
        ids = [row[0] for row in self.db.execute("SELECT grade_set_id FROM grade_sets")]
        try:
            rows = self.db.execute("SELECT grade_set_id, counts FROM grade_set_counts")
            kept = {gid: json.loads(c) for gid, c in rows}
        except sqlite3.OperationalError:  # a read-only store of an earlier release: count every time
            return {gid: self._recount(gid) for gid in ids}
        stale = [gid for gid in ids if gid not in kept]
        if stale:
            kept.update(self._recount_and_keep(stale))
        return {gid: kept[gid] for gid in ids}

    def _recount(self, grade_set_id: str) -> Counts:
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
                return {gid: self._recount(gid) for gid in ids}
            finally:
                self.db.execute(f"PRAGMA busy_timeout = {int(timeout)}")
        try:
            counts = {gid: self._recount(gid) for gid in ids}
            self.db.executemany("INSERT OR REPLACE INTO grade_set_counts VALUES (?, ?)",
                                ((gid, json.dumps(c, sort_keys=True)) for gid, c in counts.items()))
        except BaseException:
            if not own and self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        if not own:
            self.db.execute("COMMIT")
        return counts

    def label_histogram(self, grade_set_id: str, step: str) -> Iterator[tuple[str, str, int | None, int]]:
        """(query, passage, grade, n) in (query, passage) order: how many of the pair's questions gave each grade
        (grade None: failed). At one question the largest grade suffices: `ResultCaches.top_grades`."""
        yield from self.db.execute(
            f"SELECT query_id, passage_id, grade, COUNT(*) FROM grades WHERE series = {SERIES}"
            " GROUP BY query_id, passage_id, grade ORDER BY query_id, passage_id, grade DESC", (grade_set_id, step))

    def graded_questions(self, grade_set_id: str, step: str) -> Iterator[tuple[str, str]]:
        """(query, question) of every question graded for the query in one step of a grade set, distinct."""
        return self.db.execute(
            f"SELECT query_id, question_id FROM (SELECT DISTINCT query_id, item FROM grades WHERE series = {SERIES})"
            " JOIN grade_items USING (item) ORDER BY query_id, question_id", (grade_set_id, step))

    def answered(self, grade_set_id: str, step: str, tau: int) -> Iterator[tuple[str, str, str]]:
        """(query, passage, question) graded >= `tau` in one step of a grade set."""
        return self.db.execute(
            "SELECT query_id, passage_id, question_id FROM grades JOIN grade_items USING (item)"
            f" WHERE series = {SERIES} AND grade >= ? ORDER BY query_id, passage_id, question_id",
            (grade_set_id, step, tau))

    def query_counts(self, bank: str | None = None, version: str | None = None) -> dict[str, int | None]:
        """How many queries the store holds, how many have human judgments, and how many topics the bank
        version has (None without a bank): counted by SQLite on its keys, no row read into Python."""
        queries = self.db.execute("SELECT COUNT(*) FROM queries").fetchone()[0]
        judged = self.db.execute("SELECT COUNT(*) FROM (SELECT DISTINCT query_id FROM judgments)").fetchone()[0]
        in_bank = None
        if bank is not None:
            in_bank = self.db.execute("SELECT COUNT(DISTINCT query_id) FROM questions WHERE bank_id = ?"
                                      " AND version = ?", (bank, version)).fetchone()[0]
        return {"in_store": queries, "with_judgments": judged, "in_bank": in_bank}
