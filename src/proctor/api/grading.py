"""Grading through the door: `grade`, the request it runs (checked here, before any work, with every check the
command line makes), the pairs it would still send, and the batch modes (shards for any batch runner, their
result files, the OpenAI Batch API). `proctor grade` is `grade_job` + `run_grade_job`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from proctor.api.choices import check_choice
from proctor.api.results import JSON, format_of, json_text
from proctor.errors import UsageError
from proctor.methods import ANSWER_METHODS, METHOD_NAMES
from proctor.methods.aggregate import SUM_THRESHOLDS
from proctor.options.backend import BackendOptions
from proctor.options.numeric import check_numbers
from proctor.records import GradeSet
from proctor.store import Store

if TYPE_CHECKING:  # the grading engine loads when something is graded
    from proctor.grading import GradeRequest
    from proctor.grading.batch import ExportReport, ImportReport
    from proctor.grading.batch_api import BatchApiReport
    from proctor.grading.engine import Summary

Aggregate = Literal["prompt", "sum", "naive-bayes"]
"""four-prompts: how the criterion grades become a label."""
Verify = Literal["edit-distance", "llm"]
"""qa: how extracted answers are checked against the answer key."""
Engine = Literal["local", "ray"]
Guard = Literal["detect", "harden"]
GradeMode = Literal["grade", "batch-export", "batch-import", "batch-api"]
"""What a `GradeJob` does: grade now, write batch shards, grade from batch result files, or use the OpenAI Batch
API (`--llm openai-batch:MODEL`)."""

BATCH_MAX_REQUESTS = 50_000
BATCH_MAX_BYTES = 190_000_000
_CHOICES: dict[str, Any] = {"aggregate": Aggregate, "verify": Verify, "engine": Engine, "guard": Guard}


class Graded(NamedTuple):
    """What `grade` returns: the grade set and one summary per step (unpacks as `grade_set, summaries`);
    `render("text")` is what `proctor grade` says on standard error, `render("json")` what it prints."""

    grade_set: GradeSet
    summaries: list[Summary]
    formats = ("text", "json")

    def to_json(self) -> JSON:
        """The last step's summary with the grade set, the exit status (3: every pair graded now failed) and the
        failures of all steps (every step's summary under `steps` when there are several)."""
        return json.loads(self.render("json"))

    def render(self, fmt: str | None = None) -> str:
        """`text`: the grade set and one line per step (failure reasons below it); `json`."""
        return GradeOutcome("grade", self.grade_set, tuple(self.summaries)).render(fmt)

    @property
    def exit_status(self) -> int:
        """3 when every pair graded now failed, else 0."""
        graded = sum(s.graded for s in self.summaries)
        return 3 if graded and sum(s.failures for s in self.summaries) == graded else 0


@dataclass(frozen=True)
class GradeJob:
    """A checked `proctor grade`: the request, and whether it grades now or through batch files."""

    request: GradeRequest
    mode: GradeMode = "grade"
    batch_export: Path | None = None
    batch_import: tuple[Path, ...] = ()
    batch_wait: bool = False
    batch_poll: float = 30.0
    batch_max_requests: int = BATCH_MAX_REQUESTS
    batch_max_bytes: int = BATCH_MAX_BYTES


@dataclass(frozen=True)
class GradeOutcome:
    """What a `GradeJob` did: the grade set (none when the Batch API had nothing to do), one summary per step
    graded, and the batch report of the batch modes (`ExportReport`, `ImportReport`, `BatchApiReport`);
    `render("text")` is what `proctor grade` says on standard error, `render("json")` what it prints."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    mode: GradeMode
    grade_set: GradeSet | None
    summaries: tuple[Summary, ...] = ()
    report: ExportReport | ImportReport | BatchApiReport | None = None
    batch_export: Path | None = None
    """The folder the shards were written to (`batch-export`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "summaries", tuple(self.summaries))

    @property
    def exit_status(self) -> int:
        """3 when every pair graded now failed, else 0."""
        return Graded(self.grade_set, list(self.summaries)).exit_status if self.grade_set else 0  # type: ignore[arg-type]

    def to_json(self) -> JSON:
        """What `proctor grade --format json` prints: the batch report with the grade set (and the steps of the
        Batch API), or the grading summary (`Graded.to_json`)."""
        from proctor.api.grade_text import outcome_json

        return outcome_json(self)

    def render(self, fmt: str | None = None) -> str:
        """`text` (what `proctor grade` says on standard error: `said()`, one line each) or `json`."""
        if format_of(self, fmt) == "json":  # type: ignore[arg-type]
            return json_text(self.to_json())
        return "".join(line + "\n" for line in self.said())

    def said(self) -> list[str]:
        """The sentences of `render("text")`: the grade set, one per step graded (its failure reasons and
        servers below it), the batches (Batch API) or the shards written."""
        from proctor.api.grade_text import outcome_lines

        return outcome_lines(self)

    def notes(self) -> list[str]:
        """What a reader should know in every format: a batch import's files and results."""
        from proctor.api.grade_text import import_lines

        return import_lines(self.report.as_dict()) if self.mode == "batch-import" else []  # type: ignore[union-attr]


def grade(store: Store, method: str, llm: str | None = None, **options: Any) -> Graded:
    """Grade one grade set; `options` are those of `grade_request`. Returns the grade set and one summary per
    step. Inside a running event loop (Jupyter) it grades on a thread of its own."""
    from proctor.grading import grade as grade_async

    request = grade_request(method, llm, **options)
    return Graded(*_run(store, lambda own: grade_async(own, request)))


def ungraded(store: Store, method: str, llm: str | None = None, **options: Any) -> list[tuple[str, str, str]]:
    """The (query, passage, item) pairs `grade` (same arguments) would still send to the LLM; sends nothing."""
    from proctor.grading import ungraded as pending

    return pending(store, grade_request(method, llm, **options))


def grade_request(method: str, llm: str | None = None, *, backend: BackendOptions | None = None,
                  aggregate: Aggregate = "prompt", thresholds: Sequence[int] | str = SUM_THRESHOLDS,
                  templates: Sequence[str | Path] = (), prefilter: str | None = None, **options: Any
                  ) -> GradeRequest:
    """The `GradeRequest` that `grade` runs, checked before any work: `method` (one of `METHOD_NAMES` or
    `ANSWER_METHODS`), `llm` (a backend spec; default `embed:minilm` for `embedding`), `backend` (a
    `BackendConfig`, whose spec `llm` replaces) and/or its fields, `aggregate` and `thresholds` (four-prompts),
    `templates` (YAML files), `prefilter` with `prefilter_below`, and the `GradeOptions` fields (`depth`, `bank`,
    `verify`, `guard`, `engine`, ...)."""

    from proctor.grading import GradeOptions, GradeRequest
    from proctor.llm.config import BackendConfig

    spec, limits = _check_request(method, llm, thresholds, aggregate, options, prefilter)
    loose = {k: options.pop(k) for k in list(options) if k in BackendConfig.__dataclass_fields__ and k != "spec"}
    config = BackendConfig.of(backend, spec, **loose)
    return GradeRequest(method, config, GradeOptions(**options), aggregate=aggregate, thresholds=limits,
                        templates=tuple(map(str, templates)), prefilter=prefilter)


def _check_request(method: str, llm: str | None, thresholds: Sequence[int] | str, aggregate: str,
                   options: dict[str, Any], prefilter: str | None) -> tuple[str, tuple[int, ...]]:
    """The refusals of `grade_request` (the backend spec it grades with, the four-prompts thresholds)."""
    if method not in METHOD_NAMES + ANSWER_METHODS:
        raise UsageError(f"{{method}} {method!r}: unknown method; choose one of "
                         f"{', '.join(METHOD_NAMES + ANSWER_METHODS)}", params=("method",))
    for name, value in (("aggregate", aggregate), *((k, options[k]) for k in _CHOICES if k in options)):
        check_choice(name, value, _CHOICES[name])
    limits = _thresholds(thresholds)
    spec = llm or ("embed:minilm" if method == "embedding" else None)
    if spec is None:
        raise UsageError("{llm} SPEC is required, e.g. openai:MODEL, hf:PATH, replay:FILE, embed:minilm",
                         params=("llm",))
    if (method == "embedding") != spec.startswith("embed:"):
        raise UsageError("{method} embedding goes with {llm} embed:..., and embed backends only with it",
                         params=("method", "llm"))
    verify = options.get("verify", "edit-distance")
    if verify == "llm" and method != "qa":
        raise UsageError("{verify} llm applies to {method} qa only", params=("verify", "method"))
    if spec.startswith("hf-qa:") and (method != "qa" or verify == "llm"):
        raise UsageError("{llm} hf-qa:PATH extracts answer spans: it grades {method} qa, verified against the "
                         "answer key ({verify} edit-distance), not {verify} llm or other methods",
                         params=("llm", "method", "verify"))
    if bool(prefilter) != (options.get("prefilter_below") is not None):
        raise UsageError("{prefilter} SPEC and {prefilter_below} S go together",
                         params=("prefilter", "prefilter_below"))
    return spec, limits


def _thresholds(value: Sequence[int] | str) -> tuple[int, ...]:
    """Three decreasing integers (`10,7,5` or `(10, 7, 5)`), else a UsageError."""
    try:
        limits = tuple(int(t) for t in (value.split(",") if isinstance(value, str) else value))
    except (TypeError, ValueError):
        limits = ()
    if len(limits) != 3 or not limits[0] >= limits[1] >= limits[2]:
        raise UsageError("{thresholds} takes three decreasing integers, e.g. 10,7,5", params=("thresholds",))
    return limits


def grade_job(method: str, llm: str | None = None, *, batch_export: str | Path | None = None,
              batch_import: Sequence[str | Path] = (), batch_wait: bool = False, batch_poll: float = 30.0,
              batch_max_requests: int = BATCH_MAX_REQUESTS, batch_max_bytes: int = BATCH_MAX_BYTES,
              **options: Any) -> GradeJob:
    """`proctor grade`, checked before the store is opened: the request (`options` as for `grade_request`) and
    its mode: `batch_export` (a folder: write the pending prompts as OpenAI batch shards of at most
    `batch_max_requests` requests and `batch_max_bytes` bytes), `batch_import` (result files to grade from),
    `llm="openai-batch:MODEL"` (the OpenAI Batch API: submit, poll every `batch_poll` seconds while
    `batch_wait`), else grade now."""
    request = grade_request(method, llm, **options)
    check_numbers({"batch_poll": batch_poll, "batch_max_requests": batch_max_requests,
                   "batch_max_bytes": batch_max_bytes})
    if batch_export and batch_import:
        raise UsageError("{batch_export} and {batch_import}: one at a time", params=("batch_export", "batch_import"))
    mode: GradeMode = "grade"
    if batch_export:
        mode = "batch-export"
    elif request.backend.spec and request.backend.spec.startswith("openai-batch:"):
        if batch_import:
            raise UsageError("{llm} openai-batch:MODEL imports its own results: no {batch_import}",
                             params=("llm", "batch_import"))
        mode = "batch-api"
    elif batch_import:
        mode = "batch-import"
    return GradeJob(request, mode, Path(batch_export) if batch_export else None, tuple(map(Path, batch_import)),
                    batch_wait, batch_poll, batch_max_requests, batch_max_bytes)


def run_grade_job(store: Store, job: GradeJob) -> GradeOutcome:
    """Carry out a `GradeJob` on a (writable) store."""
    return _run(store, lambda own: _carry_out(own, job))


async def _carry_out(store: Store, job: GradeJob) -> GradeOutcome:
    request = job.request
    if job.mode == "batch-export":
        from proctor.grading.batch import export_batches

        grade_set, report, summaries = await export_batches(store, request, job.batch_export,  # type: ignore[arg-type]
                                                            max_requests=job.batch_max_requests,
                                                            max_bytes=job.batch_max_bytes)
        return GradeOutcome(job.mode, grade_set, summaries, report, job.batch_export)
    if job.mode == "batch-api":
        from proctor.grading.batch_api import grade_with_batch_api

        api_set, api_report, summaries = await grade_with_batch_api(store, request, wait=job.batch_wait,
                                                                    poll_seconds=job.batch_poll)
        return GradeOutcome(job.mode, api_set, summaries, api_report)
    if job.mode == "batch-import":
        from proctor.grading.batch import import_batches

        grade_set, imported, summaries = await import_batches(store, request, list(job.batch_import))
        return GradeOutcome(job.mode, grade_set, summaries, imported)
    from proctor.grading import grade as grade_async

    grade_set, summaries = await grade_async(store, request)
    return GradeOutcome(job.mode, grade_set, summaries)


def _run(store: Store, work: Callable[[Store], Coroutine[Any, Any, Any]]) -> Any:
    """Run `work(store)` to its end: here, or, inside a running event loop (Jupyter), on a thread of its own with
    its own loop and its own connection to the same store (SQLite connections stay in the thread that made
    them)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work(store))
    from concurrent.futures import ThreadPoolExecutor

    def own_thread() -> Any:
        own = Store.open(store.path)
        try:
            return asyncio.run(work(own))
        finally:
            own.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(own_thread).result()

