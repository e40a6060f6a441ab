"""Queries, passages, runs (rankings and generated responses) and human judgments (`Store.corpus`): what is
imported and evaluated. Every content upsert names the import log entry that wrote the row (`origin`)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from proctor.store.repository import Repository, dumps, insert_new_first


class CorpusRepository(Repository):
    """The `queries`, `passages`, `rankings`, `response_segments` and `judgments` tables."""

    def upsert_queries(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Add queries; a known query takes the new text when it differs (an import's guard refuses that)."""
        self._write("queries", 2, "ON CONFLICT (query_id) DO UPDATE SET text = excluded.text,"
                    " origin = excluded.origin WHERE excluded.text IS NOT NULL AND queries.text IS NOT excluded.text",
                    rows)

    def upsert_passages(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Add passages; a known passage takes the new text when it differs (an import's guard refuses that)."""
        self._write("passages", 2, "ON CONFLICT (passage_id) DO UPDATE SET text = excluded.text,"
                    " origin = excluded.origin WHERE excluded.text IS NOT NULL AND passages.text IS NOT excluded.text",
                    rows)

    def upsert_rankings(self, rows: Iterable[tuple[str, str, str, int, float]], *,
                        sorted_rows: list[tuple[str, str, str, int, float]] | None = None) -> None:
        """Add (run, query, passage, rank, score) rows (`sorted_rows`: the same rows grouped by run and query, in
        which order new keys are inserted: `insert_new_first`)."""
        self._write("rankings", 5, "ON CONFLICT DO UPDATE SET rank = excluded.rank,"
                    " score = excluded.score, origin = excluded.origin"
                    " WHERE rankings.rank IS NOT excluded.rank OR rankings.score IS NOT excluded.score",
                    rows, sorted_rows)

    def upsert_judgments(self, rows: Iterable[tuple[str, str, int]]) -> None:
        """Add (query, passage, relevance) human judgments; a new label replaces an old one (an import's guard
        refuses that)."""
        self._write("judgments", 3, "ON CONFLICT DO UPDATE SET relevance = excluded.relevance,"
                    " origin = excluded.origin WHERE judgments.relevance IS NOT excluded.relevance", rows)

    def _write(self, table: str, given: int, conflict: str, rows: Iterable[tuple], sorted_rows: list | None = None
               ) -> None:
        """Upsert rows of `given` values and the import's origin into `table` (`conflict`: the upsert's clause),
        new keys by a plain insert first when the rows are a list (`insert_new_first`: every upsert here leaves
        an identical row as it is), in the order of `sorted_rows` when given."""
        values = f"({'?, ' * given}{self._origin_sql()})"
        if sorted_rows is None or not isinstance(rows, list | tuple):
            insert_new_first(self.db, table, values, conflict, rows)
        else:
            insert_new_first(self.db, table, values, conflict, sorted_rows, upsert_order=list(rows))

    def _origin_sql(self) -> str:
        """The `origin` the content upserts write: the import log entry of the import under way (`Store.origin`)."""
        origin = self._store.origin
        return "NULL" if origin is None else str(int(origin))

    def upsert_segments(self, rows: Iterable[tuple[str, str, str, int, list[str], bool]]) -> None:
        """Remember where a passage of a generated response came from and what it cites."""
        self.db.executemany(
            "INSERT INTO response_segments VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (passage_id) DO UPDATE SET"
            " run = excluded.run, query_id = excluded.query_id, position = excluded.position,"
            " citations = excluded.citations, truncated = excluded.truncated"
            " WHERE response_segments.citations IS NOT excluded.citations"
            " OR response_segments.position IS NOT excluded.position"
            " OR response_segments.truncated IS NOT excluded.truncated",
            ((pid, run, qid, pos, dumps(cites) if cites else None, int(cut))
             for pid, run, qid, pos, cites, cut in rows),
        )

    def segments(self) -> dict[str, dict[str, Any]]:
        """`{passage_id: {run, query_id, position, citations, truncated}}` of imported responses."""
        rows = self.db.execute(
            "SELECT passage_id, run, query_id, position, citations, truncated FROM response_segments")
        return {pid: {"run": run, "query_id": qid, "position": pos, "citations": json.loads(c) if c else [],
                      "truncated": bool(t)} for pid, run, qid, pos, c, t in rows}

    def query_ids(self) -> set[str]:
        """Ids of all known queries."""
        return {row[0] for row in self.db.execute("SELECT query_id FROM queries")}

    def queries(self) -> dict[str, str | None]:
        """`{query_id: text}`."""
        return dict(self.db.execute("SELECT query_id, text FROM queries ORDER BY query_id"))

    def passage_texts(self) -> dict[str, str | None]:
        """`{passage_id: text}`."""
        return dict(self.db.execute("SELECT passage_id, text FROM passages"))

    def runs(self) -> list[str]:
        """Names of the runs whose rankings are stored."""
        return [row[0] for row in self.db.execute(_DISTINCT_RUNS + " SELECT run FROM runs WHERE run IS NOT NULL")]

    def rankings(self) -> dict[str, dict[str, dict[str, float]]]:
        """`{run: {query_id: {passage_id: score}}}` (the form `proctor.io.runs` orders)."""
        out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        for run, qid, pid, score in self.db.execute("SELECT run, query_id, passage_id, score FROM rankings"):
            out[run][qid][pid] = score
        return {run: dict(per_query) for run, per_query in out.items()}

    def ranked_lists(self) -> dict[str, dict[str, list[str]]]:
        """`{run: {query_id: [passage_id, ...]}}` in trec_eval order (score descending, ties by passage id
        descending: what `proctor.io.runs.order` gives; SQLite compares UTF-8 bytes, which orders as code
        points do, and stores no NaN), sorted by SQLite and kept per run (`Store.caches`)."""
        return self._store.caches.cached_ranked_lists()

    def ranking_rows(self) -> list[tuple[str, str, str, int, float]]:
        """All (run, query, passage, rank, score) rows."""
        return list(self.db.execute("SELECT run, query_id, passage_id, rank, score FROM rankings"))

    def judgments(self) -> dict[str, dict[str, int]]:
        """`{query_id: {passage_id: relevance}}` of the imported human judgments."""
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for qid, pid, rel in self.db.execute("SELECT query_id, passage_id, relevance FROM judgments"):
            out[qid][pid] = rel
        return dict(out)

    def max_judgment(self) -> int | None:
        """The largest imported relevance judgment (None without judgments)."""
        return self.db.execute("SELECT MAX(relevance) FROM judgments").fetchone()[0]

    def passage_texts_of(self, ids: list[str]) -> dict[str, str | None]:
        """`{passage_id: text}` of the named passages."""
        out: dict[str, str | None] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT passage_id, text FROM passages WHERE passage_id IN ({marks})", chunk))
        return out

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

    def delete_run_rankings(self, runs: Iterable[str]) -> int:
        """Remove every ranking of these runs (`--replace` of a run); returns how many went."""
        return sum(self.db.execute("DELETE FROM rankings WHERE run = ?", (run,)).rowcount for run in runs)

    def fill_query_texts(self, rows: Iterable[tuple[str, str | None]]) -> int:
        """Add queries, giving a text only to those without one (a known text is kept); returns how many of the
        given texts differ from a stored one."""
        rows = list(rows)
        stored = self.queries()
        self.db.executemany(f"INSERT INTO queries VALUES (?, ?, {self._origin_sql()}) ON CONFLICT (query_id) DO"
                            " UPDATE SET text = excluded.text, origin = excluded.origin WHERE queries.text IS NULL",
                            rows)
        return sum(1 for qid, text in set(rows) if text is not None and stored.get(qid) not in (None, text))

    def delete_response(self, run: str, query_id: str) -> None:
        """Remove one generated response (its rankings and segments; `--replace`)."""
        for table in ("rankings", "response_segments"):
            self.db.execute(f"DELETE FROM {table} WHERE run = ? AND query_id = ?", (run, query_id))

    def run_rankings(self, run: str) -> dict[tuple[str, str], tuple[int, float, int | None]]:
        """`{(query, passage): (rank, score, origin)}` of one run's stored rankings."""
        return {(q, p): (r, s, o) for q, p, r, s, o in self.db.execute(
            "SELECT query_id, passage_id, rank, score, origin FROM rankings WHERE run = ?", (run,))}

    def unjudgeable(self) -> int:
        """How many ranked (query, passage) pairs of the stored runs name a passage without text (the textless
        passages found first, so that the rankings are read only when there are some, and then without a lookup in
        `passages` per ranking)."""
        if self.db.execute("SELECT 1 FROM passages WHERE text IS NULL LIMIT 1").fetchone() is None:
            return 0
        return self.db.execute("SELECT COUNT(*) FROM (SELECT DISTINCT query_id, passage_id FROM rankings WHERE"
                               " passage_id IN (SELECT passage_id FROM passages WHERE text IS NULL))").fetchone()[0]

    def unjudgeable_in(self, ranked: dict[str, dict[str, list[str]]], *, stored: bool) -> int:
        """How many (query, passage) pairs of ranked lists name a passage the store has no text for (`stored`:
        the lists are the store's own, whose passages it all knows; else a passage it lacks counts too)."""
        textless = self.textless_passages()
        if not stored:
            ids = sorted({pid for per in ranked.values() for lst in per.values() for pid in lst})
            known: set[str] = set()
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                known.update(row[0] for row in self.db.execute(
                    f"SELECT passage_id FROM passages WHERE passage_id IN ({', '.join('?' * len(chunk))})", chunk))
            textless |= set(ids) - known
        if not textless:
            return 0
        return len({(qid, pid) for per in ranked.values() for qid, lst in per.items() for pid in lst
                    if pid in textless})

    def textless_passages(self) -> set[str]:
        """Ids of the passages the store holds no text for (never graded: unjudgeable)."""
        return {row[0] for row in self.db.execute("SELECT passage_id FROM passages WHERE text IS NULL")}


_DISTINCT_RUNS = ("WITH RECURSIVE runs(run) AS (SELECT MIN(run) FROM rankings UNION ALL SELECT (SELECT MIN(run)"
                  " FROM rankings WHERE run > runs.run) FROM runs WHERE runs.run IS NOT NULL)")
"""The runs of `rankings` in order, one primary-key lookup each rather than a scan of every ranking."""
