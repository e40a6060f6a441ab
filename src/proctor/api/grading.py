"""Grading through the door: `grade`, the request it runs (checked here, before any work, with every check the
command line makes), the pairs it would still send, and the batch modes (shards for any batch runner, their
result files, the OpenAI Batch API). `proctor grade` is `grade_job` + `run_grade_job`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from proctor.api.choices import check_choice
from proctor.api.results import JSON, format_of, json_text
from proctor.errors import UsageError
from proctor.methods import ANSWER_METHODS, METHOD_NAMES
from proctor.options.backend import BackendOptions
from proctor.options.grading import BatchOptions, EngineOptions, GradingOptions, ResponseCacheOptions
from proctor.options.model import names
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

_CHOICES: dict[str, Any] = {"aggregate": Aggregate, "verify": Verify, "engine": Engine, "guard": Guard}
_RENAMED = {"template": "templates", "sum_thresholds": "thresholds"}
"""Grading options whose keyword in `grade_request` is another (the plural the request holds)."""
_NOT_REQUESTED = ("name", "method", "pairs_per_second")
"""Grading options that name or describe a grader in an experiment, not what one grading run does."""


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
    """A checked `proctor grade`: the request, and whether it grades now or through batch files (`batch`)."""

    request: GradeRequest
    mode: GradeMode = "grade"
    batch: BatchOptions = BatchOptions()


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


def grade(store: Store, method: str, llm: str | None = None, *, grading: GradingOptions | None = None,
          backend: BackendOptions | None = None, **options: Any) -> Graded:
    """Grade one grade set with `method`: `grading` (`GradingOptions`) and `backend` (`BackendOptions`), any of
    whose fields (and those of `EngineOptions` and `ResponseCacheOptions`) may also be given by name in `options`
    (as `grade_request` takes them). Returns the grade set and one summary per step. Inside a running event loop
    (Jupyter) it grades on a thread of its own."""
    from proctor.grading import grade as grade_async

    request = grade_request(method, llm, grading=grading, backend=backend, **options)
    return Graded(*_run(store, lambda own: grade_async(own, request)))


def ungraded(store: Store, method: str, llm: str | None = None, **options: Any) -> list[tuple[str, str, str]]:
    """The (query, passage, item) pairs `grade` (same arguments) would still send to the LLM; sends nothing."""
    from proctor.grading import ungraded as pending

    return pending(store, grade_request(method, llm, **options))


def grade_request(method: str, llm: str | None = None, *, grading: GradingOptions | None = None,
                  backend: BackendOptions | None = None, execution: EngineOptions | None = None,
                  cache: ResponseCacheOptions | None = None, **options: Any) -> GradeRequest:
    """The `GradeRequest` that `grade` runs, checked before any work: `method` (one of `METHOD_NAMES` or
    `ANSWER_METHODS`), `llm` (a backend spec, else `grading.llm`; default `embed:minilm` for `embedding`), the
    option models `grading`, `backend` (a `BackendConfig`, whose spec `llm` replaces), `execution` (the
    `EngineOptions`) and `cache`, and
    any of their fields by name in `options` (given ones win; `templates` and `thresholds` may be named as
    the fields `template` and `sum_thresholds` too)."""
    from proctor.grading import GradeOptions, GradeRequest
    from proctor.llm.config import BackendConfig

    options = {**_fields(grading, execution, cache), **{_RENAMED.get(k, k): v for k, v in options.items()}}
    llm = llm or options.pop("llm", None)
    options.pop("llm", None)
    aggregate = options.pop("aggregate", GradingOptions.aggregate)
    thresholds = options.pop("thresholds", GradingOptions.sum_thresholds)
    templates, prefilter = options.pop("templates", None) or (), options.pop("prefilter", None)
    spec, limits = _check_request(method, llm, thresholds, aggregate, options, prefilter)
    loose = {k: options.pop(k) for k in list(options) if k in BackendConfig.__dataclass_fields__ and k != "spec"}
    config = BackendConfig.of(backend, spec, **loose)
    return GradeRequest(method, config, GradeOptions(**options), aggregate=aggregate, thresholds=limits,
                        templates=tuple(map(str, templates)), prefilter=prefilter)


def _fields(grading: GradingOptions | None, execution: EngineOptions | None,
            cache: ResponseCacheOptions | None) -> dict[str, Any]:
    """The keywords of `grade_request` the option models given say (the grading options that name a grader in
    an experiment aside); a model not given says nothing."""
    found: dict[str, Any] = {}
    if grading is not None:
        found |= {_RENAMED.get(k, k): v for k, v in asdict(grading).items() if k not in _NOT_REQUESTED}
    for model in (execution, cache):
        found |= asdict(model) if model is not None else {}
    return found


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
    verify = options.get("verify", GradingOptions.verify)
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


def grade_job(method: str, llm: str | None = None, *, batch: BatchOptions | None = None, **options: Any
              ) -> GradeJob:
    """`proctor grade`, checked before the store is opened: the request (`options` as for `grade_request`) and
    its mode (`batch`, a `BatchOptions`, or its fields by name in `options`): `batch_export` (a folder: write the
    pending prompts as OpenAI batch shards of at most `batch_max_requests` requests and `batch_max_bytes` bytes),
    `batch_import` (result files to grade from), `llm="openai-batch:MODEL"` (the OpenAI Batch API: submit, poll
    every `batch_poll` seconds while `batch_wait`), else grade now."""
    given = {k: options.pop(k) for k in list(options) if k in names(BatchOptions)}
    batch = replace(batch or BatchOptions(), **given)
    batch = replace(batch, batch_export=Path(batch.batch_export) if batch.batch_export else None,
                    batch_import=tuple(map(Path, batch.batch_import or ())))
    request = grade_request(method, llm, **options)
    check_numbers({k: v for k, v in asdict(batch).items() if k.startswith("batch_max") or k == "batch_poll"})
    if batch.batch_export and batch.batch_import:
        raise UsageError("{batch_export} and {batch_import}: one at a time", params=("batch_export", "batch_import"))
    mode: GradeMode = "grade"
    if batch.batch_export:
        mode = "batch-export"
    elif request.backend.spec and request.backend.spec.startswith("openai-batch:"):
        if batch.batch_import:
            raise UsageError("{llm} openai-batch:MODEL imports its own results: no {batch_import}",
                             params=("llm", "batch_import"))
        mode = "batch-api"
    elif batch.batch_import:
        mode = "batch-import"
    return GradeJob(request, mode, batch)


def run_grade_job(store: Store, job: GradeJob) -> GradeOutcome:
    """Carry out a `GradeJob` on a (writable) store."""
    return _run(store, lambda own: _carry_out(own, job))


async def _carry_out(store: Store, job: GradeJob) -> GradeOutcome:
    request = job.request
    if job.mode == "batch-export":
        from proctor.grading.batch import export_batches

        batch = job.batch
        grade_set, report, summaries = await export_batches(store, request, batch.batch_export,  # type: ignore[arg-type]
                                                            max_requests=batch.batch_max_requests,
                                                            max_bytes=batch.batch_max_bytes)
        return GradeOutcome(job.mode, grade_set, summaries, report, batch.batch_export)
    if job.mode == "batch-api":
        from proctor.grading.batch_api import grade_with_batch_api

        api_set, api_report, summaries = await grade_with_batch_api(store, request, wait=job.batch.batch_wait,
                                                                    poll_seconds=job.batch.batch_poll)
        return GradeOutcome(job.mode, api_set, summaries, api_report)
    if job.mode == "batch-import":
        from proctor.grading.batch import import_batches

        grade_set, imported, summaries = await import_batches(store, request, list(job.batch.batch_import))
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

