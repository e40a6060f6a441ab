"""Results kept where the data is, so that a leaderboard at TREC scale reads a few hundred thousand small rows
instead of aggregating millions (`Store.caches`, with the EXAM-Cover cache of `cover_cache` and the LLM's
response cache).

- `label_cache`: per grade set, step and query, a JSON list of `[passage, largest grade, usable grades, failed
  grades]` — what EXAM-Qrels at one question needs (`top_grades`), one short row per query to read — and the
  numbers of the questions graded for the query (`kept_questions`, schema 7: what coverage counts a pair as
  graded against).
- `ranked_cache`: per run and query, the passages in trec_eval order (tab-separated).

Validity is kept by triggers, whatever code writes: any insert, update or delete of a grade drops every cached
row of its grade set, any change to a ranking drops its run's cached lists, in the same transaction. A cache
is filled only inside the write lock (taken at once or not at all), from what the tables hold inside that
lock, and read by one statement (one snapshot): a reader never sees cached rows older than the data (the
ranked lists a fill keeps are returned as read and ranked inside its lock, every run in one snapshot, not read
back). A read-only or busy store computes from the tables as before. An exam_pp import keeps the label and
ranked-list caches before it commits (`keep_for_leaderboards`), so the first leaderboard after it reads them."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

from proctor.store.bulk import KEPT_PER_GRADE_SET, PAIRS, QUESTIONS, hold_triggers
from proctor.store.cover_cache import CoverCache, CoverGrades
from proctor.store.grades import SERIES as _SERIES
from proctor.store.repository import Facade, Repository
from proctor.store.response_cache import get_replies, put_replies

_TOP_ROWS = ("SELECT query_id, passage_id, MAX(grade) AS top, COUNT(grade) AS graded, COUNT(*) - COUNT(grade) AS failed"
             " FROM grades WHERE series = (SELECT series FROM grade_series WHERE grade_set_id = ? AND step = ?)"
             " GROUP BY query_id, passage_id")
_TOP = _TOP_ROWS + " ORDER BY query_id, passage_id"
_RANKED = "SELECT run, query_id, passage_id FROM rankings{where} ORDER BY run, query_id, score DESC, passage_id DESC"
_RUN_RANKED = "SELECT query_id, passage_id FROM rankings WHERE run = ? ORDER BY query_id, score DESC, passage_id DESC"
"""One run's rows of `_RANKED`."""
KEPT_TABLES = ("label_cache", "ranked_cache", "cover_cache")
"""The caches (each dropped by triggers when what it was computed from changes)."""
_RANKED_TRIGGER = re.compile(r"ranked_cache_(insert|update|delete)")
"""The ranked-list cache's triggers on `rankings` (`store.schema.CACHE_SCHEMA`)."""
SEPARATOR = "\t"
"""Between the passage ids of a cached ranked list (ids never hold whitespace: run files split on it)."""


class ResultCaches(Repository):
    """Every kept result: the label and ranked-list caches, the EXAM-Cover cache (`cover`, filled the same way)
    and the LLM's response cache (`llm_cache`)."""

    def __init__(self, store: Facade) -> None:
        super().__init__(store)
        self.cover = CoverCache(store, self._fill)

    def cover_grades(self, grade_set_id: str, step: str) -> CoverGrades | None:
        """What EXAM-Cover needs of one step, per query (`CoverCache.grades`); None when not kept."""
        return self.cover.grades(grade_set_id, step)

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
        """Keep each query's labels and the numbers of its graded questions (a range of the primary key each)."""
        self.db.execute("DELETE FROM label_cache WHERE grade_set_id = ? AND step = ?", (grade_set_id, step))
        self.db.execute(f"INSERT INTO label_cache (grade_set_id, step, query_id, pairs) SELECT ?, ?, query_id, {PAIRS}"
                        f" FROM ({_TOP_ROWS}) GROUP BY query_id", (grade_set_id, step, grade_set_id, step))
        self.db.execute(f"UPDATE label_cache SET questions = (SELECT {QUESTIONS} FROM grades"
                        f" WHERE series = {_SERIES} AND query_id = label_cache.query_id)"
                        " WHERE grade_set_id = ? AND step = ?", (grade_set_id, step, grade_set_id, step))

    def kept_questions(self, grade_set_id: str, step: str) -> list[tuple[str, str]] | None:
        """(query, the numbers of its graded questions, comma-separated) of one step, in query order, from the
        label cache (filled first when it keeps none, as `top_grades` fills it); None when not kept (read-only
        or busy store, rows kept before schema 7, no grades)."""
        read = ("SELECT query_id, questions FROM label_cache WHERE grade_set_id = ? AND step = ? ORDER BY query_id")
        try:
            rows = self.db.execute(read, (grade_set_id, step)).fetchall()
            if (not rows or any(q is None for _, q in rows)) and self._fill(lambda: self._keep_top(grade_set_id, step)):
                rows = self.db.execute(read, (grade_set_id, step)).fetchall()
        except sqlite3.OperationalError:  # a read-only store of an earlier release has no cache or no column
            return None
        return rows if rows and all(q is not None for _, q in rows) else None

    def keep_for_leaderboards(self) -> None:
        """Inside the caller's write transaction (an exam_pp import's: it holds the write lock, and the grades it
        wrote are in SQLite's page cache): keep the labels and graded questions of every grade set's label step
        that keeps none, and the ranked lists of every run that has none, so that the first leaderboard after
        an import reads kept rows (made by the statements a reader's filling runs; a step without grades keeps
        nothing)."""
        steps = self.db.execute("SELECT grade_set_id, CASE WHEN label_step != '' THEN label_step ELSE method END"
                                " FROM grade_sets ORDER BY grade_set_id").fetchall()
        for grade_set_id, step in steps:
            if self.db.execute("SELECT 1 FROM label_cache WHERE grade_set_id = ? AND step = ? LIMIT 1",
                               (grade_set_id, step)).fetchone() is None:
                self._keep_top(grade_set_id, step)
        kept = {run for (run,) in self.db.execute("SELECT DISTINCT run FROM ranked_cache")}
        self._keep_runs(sorted(set(self._store.corpus.runs()) - kept))

    @contextmanager
    def ranked_triggers_held(self, written: set[str]) -> Iterator[None]:
        """Inside the caller's write transaction: drop the ranked-list cache's triggers on `rankings` while an import
        writes rankings (one trigger run per ranking row, a third of the write), and at the end drop the kept lists
        of every run in `written` (the runs whose rankings the caller changed) and make the triggers again from
        their own SQL — what the triggers would have done, once. A rollback brings them back with the rest."""
        held = hold_triggers(self.db, "rankings", _RANKED_TRIGGER)
        try:
            yield
        finally:  # after an error too, unless the transaction is gone already (its rollback restored them)
            if held and self.db.in_transaction:
                self.db.executemany("DELETE FROM ranked_cache WHERE run = ?", [(run,) for run in sorted(written)])
                for _, sql in held:
                    self.db.execute(sql)

    def keep_ranked_lists(self, lists: dict[str, dict[str, list[str]]]) -> None:
        """Keep `{run: {query: passages in trec_eval order}}` as the ranked-list cache of those runs (inside the
        caller's write transaction; the caller ranked every ranking the store holds of them, as `_rank` would:
        an import of runs new to the store)."""
        for run in sorted(lists):
            self._keep_lists(run, lists[run])

    def cached_ranked_lists(self) -> dict[str, dict[str, list[str]]]:
        """`{run: {query_id: [passage_id, ...]}}` in trec_eval order, from the cache where it holds a run."""
        runs = set(self._store.corpus.runs())
        out = self._read_ranked()
        missing = runs - set(out)
        if missing:  # inside the write lock: the kept runs read again and the missing ones ranked and kept
            filled: dict[str, dict[str, list[str]]] = {}
            if self._fill(lambda: filled.update(self._keep_ranked())):
                out = filled
                missing = runs - set(out)
        for run in sorted(missing):  # read-only or busy store, or a run the cache cannot hold
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

    def _keep_ranked(self) -> dict[str, dict[str, list[str]]]:
        """Every run's lists (inside the write lock): the kept ones read, the others ranked and kept (each
        list joined once, its passages split back only where a passage id holds the separator)."""
        out = self._read_ranked()
        out.update(self._keep_runs(sorted(set(self._store.corpus.runs()) - set(out))))
        return out

    def _keep_runs(self, runs: list[str]) -> dict[str, dict[str, list[str]]]:
        """Rank and keep the lists of `runs`; returns those it ranked (a run without rankings has none)."""
        out = {}
        for run in runs:
            lists = self._rank(run).get(run, {})
            if self._keep_lists(run, lists) and lists:
                out[run] = lists
        return out

    def _keep_lists(self, run: str, lists: dict[str, list[str]]) -> bool:
        """Keep one run's lists (each joined once); False when a passage id holds the separator (not
        representable: this run is always read from the rankings)."""
        joined = [(run, qid, SEPARATOR.join(ranked)) for qid, ranked in lists.items()]
        if any(row[2].count(SEPARATOR) != len(lists[row[1]]) - 1 for row in joined):
            return False
        self.db.execute("DELETE FROM ranked_cache WHERE run = ?", (run,))
        self.db.executemany("INSERT INTO ranked_cache VALUES (?, ?, ?)", joined)
        return True

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

    # -- what is kept ------------------------------------------------------------------------------------
    def kept_rows(self, table: str, grade_set_id: str | None = None) -> int:
        """How many rows a cache (`label_cache`, `ranked_cache`, `cover_cache`) keeps (of one grade set)."""
        if table not in KEPT_TABLES:
            raise ValueError(f"not a cache: {table}")
        sql, args = f"SELECT COUNT(*) FROM {table}", ()
        if grade_set_id is not None:
            sql, args = sql + " WHERE grade_set_id = ?", (grade_set_id,)
        return self.db.execute(sql, args).fetchone()[0]

    def kept_grade_sets(self, table: str) -> set[str]:
        """The grade sets a kept result of grades (`grade_set_counts`, `label_cache`, `cover_cache`) holds rows
        of: a grade set written to since it was kept has none."""
        if table not in KEPT_PER_GRADE_SET:
            raise ValueError(f"not kept per grade set: {table}")
        return {row[0] for row in self.db.execute(f"SELECT DISTINCT grade_set_id FROM {table}")}

    # -- response cache ------------------------------------------------------------------------------
    def cache_get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Cached replies (as stored dicts, with their `time`) for the keys that have one."""
        return get_replies(self.db, keys) if keys else {}

    def cache_put(self, rows: Iterable[tuple[str, str, str, dict[str, Any]]], *, replace: bool = False) -> None:
        """Remember (key, backend, model, reply) rows (inside the caller's transaction); a key already cached
        keeps its reply unless `replace`."""
        put_replies(self.db, rows, replace=replace)

    def cache_count(self) -> int:
        """Cached replies."""
        return self.db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]
