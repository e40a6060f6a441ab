"""Results kept where the data is, so that a leaderboard at TREC scale reads a few hundred thousand small rows
instead of aggregating millions (mixed into `Store`).

- `label_cache`: per grade set, step and query, a JSON list of `[passage, largest grade, usable grades, failed
  grades]` — what EXAM-Qrels at one question needs (`top_grades`), one short row per query to read.
- `ranked_cache`: per run and query, the passages in trec_eval order (tab-separated).

Validity is kept by triggers, whatever code writes: any insert, update or delete of a grade drops every cached
row of its grade set, any change to a ranking drops its run's cached lists, in the same transaction. A cache
is filled only inside the write lock (taken at once or not at all), from what the tables hold inside that
lock, and read by one statement (one snapshot): a reader never sees cached rows older than the data. A
read-only or busy store computes from the tables as before."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from operator import itemgetter

CACHE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS label_cache (grade_set_id TEXT NOT NULL, step TEXT NOT NULL, query_id TEXT NOT NULL,"
    " pairs TEXT NOT NULL, PRIMARY KEY (grade_set_id, step, query_id)) WITHOUT ROWID",
    *(f"CREATE TRIGGER IF NOT EXISTS label_cache_{event.lower()} AFTER {event} ON grades BEGIN"
      " DELETE FROM label_cache WHERE grade_set_id ="
      f" (SELECT grade_set_id FROM grade_series WHERE series = {row}.series); END"
      for event, row in (("INSERT", "NEW"), ("DELETE", "OLD"))),
    "CREATE TRIGGER IF NOT EXISTS label_cache_update AFTER UPDATE ON grades BEGIN DELETE FROM label_cache WHERE"
    " grade_set_id IN (SELECT grade_set_id FROM grade_series WHERE series IN (OLD.series, NEW.series)); END",
    "CREATE TABLE IF NOT EXISTS ranked_cache (run TEXT NOT NULL, query_id TEXT NOT NULL, passages TEXT NOT NULL,"
    " PRIMARY KEY (run, query_id)) WITHOUT ROWID",
    *(f"CREATE TRIGGER IF NOT EXISTS ranked_cache_{event.lower()} AFTER {event} ON rankings BEGIN"
      f" DELETE FROM ranked_cache WHERE run = {row}.run; END" for event, row in (("INSERT", "NEW"), ("DELETE", "OLD"))),
    "CREATE TRIGGER IF NOT EXISTS ranked_cache_update AFTER UPDATE ON rankings BEGIN"
    " DELETE FROM ranked_cache WHERE run IN (OLD.run, NEW.run); END",
)
"""Statements (each run on its own: triggers hold semicolons) that every writable store gets when opened."""

_TOP_ROWS = ("SELECT query_id, passage_id, MAX(grade) AS top, COUNT(grade) AS graded, COUNT(*) - COUNT(grade) AS failed"
             " FROM grades WHERE series = (SELECT series FROM grade_series WHERE grade_set_id = ? AND step = ?)"
             " GROUP BY query_id, passage_id")
_TOP = _TOP_ROWS + " ORDER BY query_id, passage_id"
_RANKED = "SELECT run, query_id, passage_id FROM rankings{where} ORDER BY run, query_id, score DESC, passage_id DESC"
_RUN_RANKED = "SELECT query_id, passage_id FROM rankings WHERE run = ? ORDER BY query_id, score DESC, passage_id DESC"
"""One run's rows of `_RANKED`."""
SEPARATOR = "\t"
"""Between the passage ids of a cached ranked list (ids never hold whitespace: run files split on it)."""


class ResultCaches:
    """The label and ranked-list caches."""

    db: sqlite3.Connection
    read_only: bool

    def ensure_caches(self) -> None:
        """Give the store the cache tables and their triggers (stores of earlier releases lack them)."""
        have = {row[0] for row in self.db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'label_cache%' OR name LIKE 'ranked_cache%'")}
        if len(have) < len(CACHE_SCHEMA):  # written only when missing: opening never waits for a writer
            for statement in CACHE_SCHEMA:
                self.db.execute(statement)

    def top_grades(self, grade_set_id: str, step: str) -> Iterator[tuple[str, str, int | None, int, int]]:
        """(query, passage, largest grade, usable grades, failed grades) in (query, passage) order."""
        cached = self._cached_top(grade_set_id, step)
        if not cached and self._fill(lambda: self._keep_top(grade_set_id, step)):
            cached = self._cached_top(grade_set_id, step)
        if not cached:  # nothing kept (no grades, read-only or busy store): aggregate the grades
            yield from self.db.execute(_TOP, (grade_set_id, step))
            return
        for qid, pairs in cached:
            rows = json.loads(pairs)
            rows.sort(key=itemgetter(0))  # already in order as SQLite aggregates; sorted to be sure (cheap then)
            for pid, top, graded, failed in rows:
                yield qid, pid, top, graded, failed

    def _cached_top(self, grade_set_id: str, step: str) -> list[tuple[str, str]]:
        """The kept rows, read by one statement (one snapshot); empty when none are kept."""
        try:
            return self.db.execute("SELECT query_id, pairs FROM label_cache WHERE grade_set_id = ? AND step = ?"
                                   " ORDER BY query_id", (grade_set_id, step)).fetchall()
        except sqlite3.OperationalError:  # a read-only store of an earlier release has no cache
            return []

    def _keep_top(self, grade_set_id: str, step: str) -> None:
        self.db.execute("DELETE FROM label_cache WHERE grade_set_id = ? AND step = ?", (grade_set_id, step))
        self.db.execute("INSERT INTO label_cache SELECT ?, ?, query_id, json_group_array(json_array(passage_id, top,"
                        f" graded, failed)) FROM ({_TOP_ROWS}) GROUP BY query_id",
                        (grade_set_id, step, grade_set_id, step))

    def cached_ranked_lists(self) -> dict[str, dict[str, list[str]]]:
        """`{run: {query_id: [passage_id, ...]}}` in trec_eval order, from the cache where it holds a run."""
        runs = set(self.runs())  # type: ignore[attr-defined]
        out = self._read_ranked()
        missing = runs - set(out)
        if missing and self._fill(lambda: self._keep_ranked(missing)):
            out = self._read_ranked()
            missing = runs - set(out)
        for run in sorted(missing):  # read-only or busy store
            out.update(self._rank(run))
        return {run: out[run] for run in sorted(out)}

    def _read_ranked(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        try:
            for run, qid, passages in self.db.execute(
                    "SELECT run, query_id, passages FROM ranked_cache ORDER BY run, query_id"):
                out.setdefault(run, {})[qid] = passages.split(SEPARATOR)
        except sqlite3.OperationalError:
            return {}
        return out

    def _rank(self, run: str) -> dict[str, dict[str, list[str]]]:
        """`{run: {query: ranked passages}}` of one run (two columns fetched: a third less time at 64× DL19)."""
        lists: dict[str, list[str]] = {}
        for qid, pid in self.db.execute(_RUN_RANKED, (run,)):
            lists.setdefault(qid, []).append(pid)
        return {run: lists} if lists else {}

    def _keep_ranked(self, runs: set[str]) -> None:
        for run in sorted(runs):
            lists = self._rank(run).get(run, {})
            if any(SEPARATOR in pid for ranked in lists.values() for pid in ranked):
                continue  # not representable: this run is always read from the rankings
            self.db.execute("DELETE FROM ranked_cache WHERE run = ?", (run,))
            self.db.executemany("INSERT INTO ranked_cache VALUES (?, ?, ?)",
                                ((run, qid, SEPARATOR.join(ranked)) for qid, ranked in lists.items()))

    def _fill(self, keep: Callable[[], None]) -> bool:
        """Run `keep` inside the write lock when it can be had at once; False when it cannot (or fails)."""
        if self.read_only or self.db.in_transaction:
            return False
        timeout = self.db.execute("PRAGMA busy_timeout").fetchone()[0]
        try:
            self.db.execute("PRAGMA busy_timeout = 0")
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # busy
            return False
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {int(timeout)}")
        try:
            keep()
            self.db.execute("COMMIT")
        except sqlite3.OperationalError:  # e.g. a full disk: compute without keeping
            self.db.execute("ROLLBACK")
            return False
        except BaseException:  # never leave the write lock held
            self.db.execute("ROLLBACK")
            raise
        return True
