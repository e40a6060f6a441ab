"""Robustness probes (`Store.probes`): probe grade sets, the attacked passages they graded, their grades,
and the reports. Kept apart from `grade_sets` and `grades`, so a probe never enters a leaderboard, a grade
set resolution or the counts of a grade set; each probe grade set names the grade set it probes.

A read-only store of schema 4 may lack the tables (made on first use then): it reads as holding no probe."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from proctor.store.repository import Repository

FLAGGED = "flagged"
"""A probed pair the `detect` guard flagged: no grade, listed and counted."""


class ProbeRepository(Repository):
    """The `probe_*` and `pool_flags` tables."""

    def _has_probes(self) -> bool:
        row = self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'probe_reports'")
        return row.fetchone() is not None

    def save_probe_set(self, probe_set_id: str, probe_of: str, variant: str, guard: str | None, prompt_version: str,
                       params: dict[str, Any], created: str,
                       passages: Iterable[tuple[str, str, str, str, str | None]],
                       grades: Iterable[tuple[str, str, str, int | None, str, str | None]]) -> None:
        """Write one probe grade set (replacing an earlier run of the same probe): its passages
        `(query, passage, text, state, reason)` and grades `(query, passage, item, grade, status, reply)`."""
        for table in ("probe_grades", "probe_passages", "probe_sets"):
            self.db.execute(f"DELETE FROM {table} WHERE probe_set_id = ?", (probe_set_id,))
        self.db.execute("INSERT INTO probe_sets VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (probe_set_id, probe_of, variant, guard, prompt_version, json.dumps(params, sort_keys=True),
                         created))
        self.db.executemany("INSERT INTO probe_passages VALUES (?, ?, ?, ?, ?, ?)",
                            [(probe_set_id, *row) for row in passages])
        self.db.executemany("INSERT INTO probe_grades VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [(probe_set_id, *row) for row in grades])

    def failures(self, probe_set_id: str) -> int | None:
        """How many grades of a stored probe grade set failed (None: no such probe grade set)."""
        if not self._has_probes() or self.db.execute("SELECT 1 FROM probe_sets WHERE probe_set_id = ?",
                                                     (probe_set_id,)).fetchone() is None:
            return None
        return self.db.execute("SELECT COUNT(*) FROM probe_grades WHERE probe_set_id = ? AND parse_status = 'failed'",
                               (probe_set_id,)).fetchone()[0]

    def save_probe_report(self, probe_of: str, report: dict[str, Any], created: str) -> None:
        """Keep the latest probe report of a grade set (what `analyze` and the review app show)."""
        self.db.execute("INSERT OR REPLACE INTO probe_reports VALUES (?, ?, ?)",
                        (probe_of, json.dumps(report, sort_keys=True), created))

    def probe_report(self, probe_of: str) -> dict[str, Any] | None:
        """The latest probe report of a grade set, or None."""
        if not self._has_probes():
            return None
        row = self.db.execute("SELECT report FROM probe_reports WHERE probe_of = ?", (probe_of,)).fetchone()
        return json.loads(row[0]) if row else None

    def flagged_pairs(self, probe_of: str | None = None) -> list[dict[str, Any]]:
        """Every pair a `detect` guard flagged (of one probed grade set, or all): probe grade set, the grade set
        it probes, attack, query, passage, reason and the flagged text."""
        if not self._has_probes():
            return []
        sql = ("SELECT s.probe_set_id, s.probe_of, s.variant, p.query_id, p.passage_id, p.reason, p.text"
               " FROM probe_passages p JOIN probe_sets s USING (probe_set_id) WHERE p.state = ?")
        args: tuple = (FLAGGED,)
        if probe_of is not None:
            sql += " AND s.probe_of = ?"
            args += (probe_of,)
        keys = ("probe_set", "grade_set", "attack", "query_id", "passage_id", "reason", "text")
        return [dict(zip(keys, row, strict=True)) for row in self.db.execute(sql + " ORDER BY 2, 3, 4, 5", args)]

    def save_pool_flags(self, grade_set_id: str, rows: Iterable[tuple[str, str, str]], created: str) -> None:
        """Record the pool pairs `(query, passage, reason)` that `grade --guard detect` flagged for a grade set
        (the flags of its earlier runs replaced: a passage whose text changed may no longer be flagged)."""
        self.db.execute("DELETE FROM pool_flags WHERE grade_set_id = ?", (grade_set_id,))
        self.db.executemany("INSERT INTO pool_flags VALUES (?, ?, ?, ?, ?)",
                            [(grade_set_id, q, p, reason, created) for q, p, reason in rows])

    def pool_flags(self, grade_set_id: str | None = None) -> list[dict[str, Any]]:
        """The pool pairs `grade --guard detect` flagged (of one grade set, or all): grade set, query, passage,
        reason; they have no grade."""
        if not self._has_probes():
            return []
        sql, args = "SELECT grade_set_id, query_id, passage_id, reason FROM pool_flags", ()
        if grade_set_id is not None:
            sql, args = sql + " WHERE grade_set_id = ?", (grade_set_id,)
        keys = ("grade_set", "query_id", "passage_id", "reason")
        return [dict(zip(keys, row, strict=True)) for row in self.db.execute(sql + " ORDER BY 1, 2, 3", args)]

    def probe_sets(self) -> list[tuple[str, str, str | None]]:
        """(probed grade set, variant, guard) of every probe grade set, sorted."""
        if not self._has_probes():
            return []
        return sorted(self.db.execute("SELECT probe_of, variant, guard FROM probe_sets"), key=repr)

    def probe_set_count(self) -> int:
        """How many probe grade sets the store holds."""
        if not self._has_probes():
            return 0
        return self.db.execute("SELECT COUNT(*) FROM probe_sets").fetchone()[0]
