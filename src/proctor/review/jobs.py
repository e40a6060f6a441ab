""""Grade what is new" as a background job: a grade set for the newest bank version beside the old one,
carrying over the grades of unchanged questions and grading the rest with the backend configured when the
server started. The job runs in its own thread with its own store connection and event loop; progress is
read from the store (grades of the new set against the pairs it needs); cancelling keeps every grade
committed so far, and starting the same job again grades only what is still missing (like `proctor grade`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.api import Store, commands
from proctor.errors import ProctorError, UsageError
from proctor.records import GradeSet

_ids = itertools.count(1)


def new_grade_set(old: GradeSet, bank: str, version: str, backend: str | None = None) -> GradeSet:
    """The grade set of bank version `version` graded the way `old` was (its info names the backend that
    grades what is new, as `old`'s parameters may name the one that graded the rest)."""
    return GradeSet(old.method, old.model, old.prompt_version, bank, version, old.params, old.step,
                    {"derived_from": old.id, "review": True, "new_pairs_graded_with": backend})


@dataclass
class GradeJob:
    """One run of "grade what is new"."""

    old: GradeSet
    new: GradeSet
    total: int
    id: int = field(default_factory=lambda: next(_ids))
    state: str = "starting"
    error: str | None = None
    summary: dict[str, Any] | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _task: asyncio.Task | None = None
    _cancel: bool = False

    def as_dict(self, done: int) -> dict[str, Any]:
        """What the job page shows."""
        return {"id": self.id, "state": self.state, "error": self.error, "old": self.old.id, "new": self.new.id,
                "bank": self.new.bank_label, "done": min(done, self.total), "total": self.total,
                "summary": self.summary}

    def cancel(self) -> None:
        """Stop grading; what is graded stays."""
        self._cancel = True
        if self._loop is not None and self._task is not None:
            with contextlib.suppress(RuntimeError):  # the job ended as it was cancelled: its loop is closed, nothing
                self._loop.call_soon_threadsafe(self._task.cancel)  # is left to stop (a 500 page before)


class Jobs:
    """The server's grading jobs (one running at a time)."""

    def __init__(self, store_path: Path, config: commands.BackendConfig | None) -> None:
        self.store_path, self.config = store_path, config
        self.jobs: dict[int, GradeJob] = {}
        self.lock = threading.Lock()

    def running(self) -> GradeJob | None:
        """The job in progress, if any."""
        return next((j for j in self.jobs.values() if j.state in ("starting", "running")), None)

    def start(self, store: Store, old: GradeSet, pool: dict[str, list[str]]) -> GradeJob:
        """Start grading the newest version of `old`'s bank; refused without a backend or while one runs."""
        if self.config is None or self.config.spec is None:
            raise UsageError("this server was started without {llm}: it cannot grade (restart it with {llm} SPEC)",
                             params=("llm",))
        commands.refuse_regrading(old)
        if old.bank is None:
            raise UsageError(f"grade set {old.id} grades no bank")
        latest = store.banks.bank_version(old.bank)
        assert latest is not None
        if latest[1] == old.bank_version:
            raise UsageError(f"grade set {old.id} already grades the newest version of bank {old.bank}: publish a "
                             "draft first")
        with self.lock:
            if self.running():
                raise UsageError("a grading job is running: wait for it or cancel it")
            job = GradeJob(old, new_grade_set(old, *latest, self.config.spec),
                           commands.expected_pairs(store, *latest, pool))
            self.jobs[job.id] = job
        threading.Thread(target=self._run, args=(job,), daemon=True, name=f"grade-job-{job.id}").start()
        return job

    def _run(self, job: GradeJob) -> None:
        store = commands.review_store(self.store_path)
        try:
            assert self.config is not None
            grading = commands.grade_new_version(store, job.old, job.new, self.config)  # the backend checked first
            job._loop = asyncio.new_event_loop()
            job._task = job._loop.create_task(grading)
            job.state = "running"
            if job._cancel:
                job._task.cancel()
            summaries = job._loop.run_until_complete(job._task)
            last = summaries[-1]
            job.summary = {"graded_now": last.graded, "failures": last.failures, "cached": last.cached,
                           "carried_over": summaries[0].by_status.get("carried over", 0)}
            job.state = "done"
        except asyncio.CancelledError:
            job.state = "cancelled"
        except ProctorError as exc:
            job.state, job.error = "failed", exc.as_options() if isinstance(exc, UsageError) else str(exc)
        except Exception as exc:  # shown on the job page; the grades committed so far stay
            job.state, job.error = "failed", f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        finally:
            if job._loop is not None:
                job._loop.close()
            store.close()
