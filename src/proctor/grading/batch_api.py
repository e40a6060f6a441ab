"""`--llm openai-batch:MODEL`: grading through the OpenAI Batch API (or any server with its files and
batches endpoints). Export the pending prompts as batch shards → upload → create a batch per shard (its id
committed to the store at once) → poll → download the output and error files → import them (the batch-file
import: same parsers, cache, grade set as `openai:MODEL`). An interrupted or detached `grade` polls the
batches it already submitted instead of paying twice; with `wait`, it polls until every batch is finished
and submits what is still pending (failed lines, the next step) until nothing is."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.grading.batch import export_batches, import_batches
from proctor.grading.engine import Summary
from proctor.records import GradeSet
from proctor.store import Store

PREFIX = "openai-batch:"
FINISHED = ("completed", "failed", "expired", "cancelled")


@dataclass
class BatchApiReport:
    """What one run did with the Batch API."""

    submitted: list[str] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """{batch id: {step, requests, status, imported}} of the jobs this run saw."""

    def open(self) -> list[str]:
        """Jobs not finished yet."""
        return [b for b, job in self.jobs.items() if not job["imported"]]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"submitted": self.submitted, "batches": self.jobs, "open": self.open()}


def as_openai(request: Any) -> Any:
    """The same grading request with `openai:MODEL`: the grade set and cache keys of synchronous requests."""
    model = request.backend.spec.removeprefix(PREFIX)
    return replace(request, backend=replace(request.backend, spec=f"openai:{model}"))


async def grade_with_batch_api(store: Store, request: Any, *, wait: bool, poll_seconds: float = 30.0
                               ) -> tuple[GradeSet | None, BatchApiReport, list[Summary]]:
    """Submit, poll and import until done (`wait`) or once (detached); the batch ids live in the store."""
    request = as_openai(request)
    backend = request.backend.build(request.method)
    report, summaries, grade_set = BatchApiReport(), [], None
    try:
        client = backend.client
        with tempfile.TemporaryDirectory(prefix="proctor-batch-") as tmp:
            while True:
                grade_set, jobs = await _submit_if_idle(store, request, client, Path(tmp), report)
                if not jobs:
                    break
                summaries += await _poll(store, request, client, jobs, grade_set.id, Path(tmp), report)
                if not wait:
                    break
                if report.open():
                    await asyncio.sleep(poll_seconds)
    finally:
        await backend.aclose()
    return grade_set, report, summaries


async def _submit_if_idle(store: Store, request: Any, client: Any, folder: Path, report: BatchApiReport
                          ) -> tuple[GradeSet, list[tuple[str, str, int, str]]]:
    """The grade set's open jobs; when it has none, the pending prompts submitted as new jobs — all under the
    grade set's grading lock, so that a second `grade` at the same time is refused instead of paying twice."""
    from proctor.grading.runner import grade_set_for, grading_lock

    backend = request.backend.build(request.method)
    try:
        grade_set = grade_set_for(store, request.choice(), backend, request.options)
    finally:
        await backend.aclose()
    with grading_lock(store, grade_set):
        return grade_set, await _submit(store, request, client, grade_set, folder, report)


async def _submit(store: Store, request: Any, client: Any, grade_set: GradeSet, folder: Path,
                  report: BatchApiReport) -> list[tuple[str, str, int, str]]:
    """(Grading lock held) the open jobs, or new jobs for the pending prompts."""
    jobs = store.batches.open_batch_jobs(grade_set.id)
    if jobs:
        return jobs
    _, exported, _ = await export_batches(store, request, folder / "in")
    for shard in exported.shards:
        with open(shard, "rb") as handle:
            uploaded = await _api(client.files.create(file=handle, purpose="batch"), "upload")
        batch = await _api(client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                                 completion_window="24h"), "create a batch")
        with store.transaction():  # committed before anything else happens: never submitted twice
            store.batches.add_batch_job(batch.id, grade_set.id, exported.step or "", uploaded.id,
                                _count_lines(Path(shard)), batch.status)
        report.submitted.append(batch.id)
    return store.batches.open_batch_jobs(grade_set.id)


async def _poll(store: Store, request: Any, client: Any, jobs: list[tuple[str, str, int, str]], grade_set: str,
                folder: Path, report: BatchApiReport) -> list[Summary]:
    """Each job's status once; finished jobs' output and error files downloaded and imported."""
    summaries: list[Summary] = []
    for batch_id, step, requests, _ in jobs:
        batch = await _api(client.batches.retrieve(batch_id), f"poll batch {batch_id}")
        report.jobs[batch_id] = {"step": step, "requests": requests, "status": batch.status, "imported": False}
        if batch.status not in FINISHED:
            with store.transaction():
                store.batches.update_batch_job(batch_id, batch.status)
            continue
        files = []
        for n, file_id in enumerate(f for f in (batch.output_file_id, batch.error_file_id) if f):
            content = await _api(client.files.content(file_id), f"download {file_id}")
            path = folder / f"{batch_id}-{n}.jsonl"
            path.write_bytes(content.content)
            files.append(path)
        if batch.status == "failed" and not files:
            with store.transaction():
                store.batches.update_batch_job(batch_id, batch.status, imported=True)
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            detail = "; ".join(str(getattr(e, "message", e)) for e in errors[:3]) or "no reason given"
            raise UsageError(f"openai-batch: batch {batch_id} failed: {detail}")
        if files:
            _, _, imported = await import_batches(store, request, files)
            summaries += imported
        with store.transaction():
            store.batches.update_batch_job(batch_id, batch.status, imported=True)
        report.jobs[batch_id]["imported"] = True
    return summaries


async def _api(call: Any, what: str) -> Any:
    """One Batch API call; a failure is one clear message."""
    import openai

    try:
        result = call
        if hasattr(result, "__await__"):
            result = await result
        return result
    except openai.OpenAIError as exc:
        raise UsageError(f"openai-batch: cannot {what}: {type(exc).__name__}: {str(exc)[:200]}") from None


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())
