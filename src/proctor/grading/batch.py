"""Grading through batch files: `export_batches` writes the pending prompts of a grade set's next step as
OpenAI batch JSONL shards; `import_batches` reads result files (OpenAI's or vLLM's format) and grades
through the same engine as in-process grading — same parsers, cache, grade set and commits — with a backend
that answers from the files. Importing the same file again changes nothing; errored lines are recorded as
failures and exported again by the next export (until `--max-attempts`)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.grading.engine import Summary
from proctor.grading.plan import Plan
from proctor.grading.prompting import render
from proctor.grading.recorded import load_recorded
from proctor.grading.runner import grade_set_for, run_grade_set
from proctor.llm.base import Reply
from proctor.llm.batchfile import FileReplies, custom_id, grade_set_of, read_results, request_line
from proctor.methods import Method
from proctor.records import GradeSet
from proctor.store import Store

IMPORT_KIND = "batch-results"
MAX_REQUESTS = 50_000
"""The OpenAI Batch API's limit per input file."""
MAX_BYTES = 190_000_000
"""Under the OpenAI Batch API's 200 MB per input file."""


@dataclass
class ExportReport:
    """What one export wrote."""

    grade_set: str
    step: str | None = None
    requests: int = 0
    shards: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"grade_set": self.grade_set, "step": self.step, "requests": self.requests, "shards": self.shards}


@dataclass
class ImportReport:
    """What one import read."""

    files: int = 0
    skipped_files: list[str] = field(default_factory=list)
    """Files imported before (by content): not read again."""
    results: int = 0
    other_grade_sets: int = 0
    unmatched: int = 0
    """Results of this grade set for no pending pair (graded already, or a prompt that changed since)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"files": self.files, "skipped_files": self.skipped_files, "results": self.results,
                "other_grade_sets": self.other_grade_sets, "unmatched_results": self.unmatched}


async def export_batches(store: Store, request: Any, folder: Path, *, max_requests: int = MAX_REQUESTS,
                         max_bytes: int = MAX_BYTES) -> tuple[GradeSet, ExportReport, list[Summary]]:
    """Write the pending prompts of the first step that has any (earlier steps complete) as batch shards."""
    from proctor.llm.openai_backend import chat_body

    backend = _build(request)
    try:
        if backend.kind != "openai":
            raise UsageError("{batch_export} writes chat-completions requests: it needs {llm} openai:MODEL",
                             params=("batch_export", "llm"))
        grade_set = grade_set_for(store, request.choice(), backend, request.options)
        report = ExportReport(grade_set.id)

        def write(step: str, method: Method, plan: Plan) -> Plan | None:
            lines = []
            for item in plan.work(store):
                rendered, _ = render(method, step, item, backend)
                lines.append(request_line(custom_id(grade_set.id, rendered),
                                          chat_body(backend.model, rendered, backend.options)))
            if not lines:
                return plan
            report.step, report.requests = step, len(lines)
            report.shards = _write_shards(folder, f"{grade_set.id}-{step}", lines, max_requests, max_bytes)
            return None

        _, summaries = await run_grade_set(store, request.choice(), backend, request.options, grade_set, write)
        return grade_set, report, summaries
    finally:
        await backend.aclose()


async def import_batches(store: Store, request: Any, files: list[Path]
                         ) -> tuple[GradeSet, ImportReport, list[Summary]]:
    """Grade the pairs the result files answer (the same engine as in-process grading)."""
    backend = _build(request)
    try:
        grade_set = grade_set_for(store, request.choice(), backend, request.options)
        report = ImportReport()
        replies, digests = _read(store, files, grade_set.id, bool(backend.params().get("probabilities")), report)
        answering = FileReplies(backend, grade_set.id, replies)
        matched: set[str] = set()

        def narrow(step: str, method: Method, plan: Plan) -> Plan | None:
            only = set()
            for item in plan.work(store):
                identifier = custom_id(grade_set.id, render(method, step, item, backend)[0])
                if identifier in replies:
                    only.add((item.query_id, item.passage_id, item.question_id))
                    matched.add(identifier)
            return replace(plan, only=only)

        options = replace(request.options, progress=False if request.options.progress is None else
                          request.options.progress)
        _, summaries = await run_grade_set(store, request.choice(), answering, options, grade_set, narrow)
        report.unmatched = len(set(replies) - matched)
        with store.transaction():
            for path, digest in digests:
                store.imports.record_import(IMPORT_KIND, digest, str(path))
        return grade_set, report, summaries
    finally:
        await backend.aclose()


def _build(request: Any):
    backend = request.backend.build(request.method, recorded=load_recorded)
    if request.prefilter:
        raise UsageError("{prefilter} does not go with {batch_export}/{batch_import} (grade in-process instead)",
                         params=("prefilter", "batch_export", "batch_import"))
    return backend


def _read(store: Store, files: list[Path], grade_set: str, probabilities: bool, report: ImportReport
          ) -> tuple[dict[str, Reply], list[tuple[Path, str]]]:
    """The replies of this grade set in files not imported before; a success wins over an error."""
    replies: dict[str, Reply] = {}
    digests = []
    for path in files:
        digest = _sha256(path)
        if store.imports.was_imported(IMPORT_KIND, digest):
            report.skipped_files.append(str(path))
            continue
        report.files += 1
        digests.append((path, digest))
        for identifier, reply in read_results(path, probabilities):
            report.results += 1
            if grade_set_of(identifier) != grade_set:
                report.other_grade_sets += 1
            elif identifier not in replies or replies[identifier].error is not None:
                replies[identifier] = reply
    return replies, digests


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest()


def _write_shards(folder: Path, prefix: str, lines: list[bytes], max_requests: int, max_bytes: int) -> list[str]:
    """Shards of at most `max_requests` lines and `max_bytes` bytes, written whole (temporary files renamed);
    shards an earlier export of the same step left are replaced."""
    shards: list[list[bytes]] = [[]]
    size = 0
    for line in lines:
        if len(line) > max_bytes:
            raise UsageError(f"{{batch_max_bytes}} {max_bytes}: one request alone has {len(line)} bytes",
                             params=("batch_max_bytes",))
        if len(shards[-1]) >= max_requests or size + len(line) > max_bytes:
            shards.append([])
            size = 0
        shards[-1].append(line)
        size += len(line)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        names = []
        for n, shard in enumerate(shards, 1):
            tmp = folder / f".{prefix}-{n:05d}.jsonl.tmp"
            tmp.write_bytes(b"".join(shard))
            names.append(tmp)
        for old in folder.glob(f"{prefix}-*.jsonl"):
            old.unlink()
        done = []
        for n, tmp in enumerate(names, 1):
            final = folder / f"{prefix}-{n:05d}.jsonl"
            os.replace(tmp, final)
            done.append(str(final))
    except OSError as exc:
        raise UsageError(f"{{batch_export}} {folder}: cannot write: {exc.strerror or exc}",
                         params=("batch_export",)) from None
    return done
