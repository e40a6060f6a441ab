"""Grade sets derived from others (ensembles, mixed into `Store`): a fingerprint of a step's grades, so that a
derived set knows when a member changed, and the replacement of a derived step's grades in one go."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from proctor.store.grades import SERIES


class DerivedGrades:
    """What derived grade sets need from the grade tables."""

    db: sqlite3.Connection

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
        self.upsert_grade_rows(grade_set_id, rows)  # type: ignore[attr-defined]
