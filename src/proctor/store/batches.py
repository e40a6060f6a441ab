"""The `batch_jobs` table: OpenAI Batch API jobs submitted for a grade set, so that an interrupted or
detached `grade` polls the jobs it already paid for instead of submitting them again. Created when first
needed (stores made before it existed keep working)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

BATCH_JOBS = """CREATE TABLE IF NOT EXISTS batch_jobs (
    batch_id TEXT PRIMARY KEY, grade_set_id TEXT NOT NULL, step TEXT NOT NULL, input_file_id TEXT NOT NULL,
    requests INTEGER NOT NULL, status TEXT NOT NULL, imported INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL,
    updated TEXT NOT NULL) WITHOUT ROWID"""


class BatchTables:
    """Batch jobs per grade set: submitted, polled, imported."""

    db: sqlite3.Connection

    def add_batch_job(self, batch_id: str, grade_set_id: str, step: str, input_file_id: str, requests: int,
                      status: str) -> None:
        """Remember a submitted batch job."""
        self.db.execute(BATCH_JOBS)
        stamp = _now()
        self.db.execute("INSERT OR IGNORE INTO batch_jobs VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
                        (batch_id, grade_set_id, step, input_file_id, requests, status, stamp, stamp))

    def open_batch_jobs(self, grade_set_id: str) -> list[tuple[str, str, int, str]]:
        """(batch id, step, requests, last status) of the grade set's jobs not imported yet, oldest first."""
        try:
            return list(self.db.execute(
                "SELECT batch_id, step, requests, status FROM batch_jobs WHERE grade_set_id = ? AND imported = 0"
                " ORDER BY created, batch_id", (grade_set_id,)))
        except sqlite3.OperationalError:  # a store from before the table existed
            return []

    def update_batch_job(self, batch_id: str, status: str, imported: bool = False) -> None:
        """Record a job's latest status (and that its results were imported)."""
        self.db.execute(BATCH_JOBS)
        self.db.execute("UPDATE batch_jobs SET status = ?, imported = ?, updated = ? WHERE batch_id = ?",
                        (status, int(imported), _now(), batch_id))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
