"""The `batch_jobs` table (`Store.batches`): OpenAI Batch API jobs submitted for a grade set, so that an
interrupted or detached `grade` polls the jobs it already paid for instead of submitting them again."""

from __future__ import annotations

import sqlite3

from proctor.store.repository import Repository, now


class BatchRepository(Repository):
    """Batch jobs per grade set: submitted, polled, imported."""

    def add_batch_job(self, batch_id: str, grade_set_id: str, step: str, input_file_id: str, requests: int,
                      status: str) -> None:
        """Remember a submitted batch job."""
        stamp = now()
        self.db.execute("INSERT OR IGNORE INTO batch_jobs VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
                        (batch_id, grade_set_id, step, input_file_id, requests, status, stamp, stamp))

    def open_batch_jobs(self, grade_set_id: str) -> list[tuple[str, str, int, str]]:
        """(batch id, step, requests, last status) of the grade set's jobs not imported yet, oldest first."""
        try:
            return list(self.db.execute(
                "SELECT batch_id, step, requests, status FROM batch_jobs WHERE grade_set_id = ? AND imported = 0"
                " ORDER BY created, batch_id", (grade_set_id,)))
        except sqlite3.OperationalError:  # a read-only store of schema 4 from before the table existed
            return []

    def update_batch_job(self, batch_id: str, status: str, imported: bool = False) -> None:
        """Record a job's latest status (and that its results were imported)."""
        self.db.execute("UPDATE batch_jobs SET status = ?, imported = ?, updated = ? WHERE batch_id = ?",
                        (status, int(imported), now(), batch_id))
