"""Phase 2: grade every passage of the judgment pool for every question of its query, into one grade set.

`grade(store, GradeRequest(...))` is the Python API the CLI calls: it builds the backends from one
configuration, resolves the grade set and runs the method's declared steps."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from proctor.errors import UsageError
from proctor.grading.answers import ANSWER_METHODS, run_answer_method
from proctor.grading.engine import GradeOptions, Summary
from proctor.grading.guards import harden
from proctor.grading.recorded import load_recorded
from proctor.grading.runner import MethodChoice, grade_set_for, run_grade_set
from proctor.llm.config import BackendConfig
from proctor.methods import user_method
from proctor.methods.aggregate import SUM_THRESHOLDS
from proctor.options.grading import GradingOptions
from proctor.records import GradeSet
from proctor.store import Store
from proctor.store.response_cache import ResponseCache


@dataclass(frozen=True)
class GradeRequest:
    """One `grade`: the method and its parameters, the backend configuration, what to grade."""

    method: str
    backend: BackendConfig
    options: GradeOptions = field(default_factory=GradeOptions)
    aggregate: str = GradingOptions.aggregate
    thresholds: tuple[int, ...] = SUM_THRESHOLDS
    templates: tuple[str, ...] = ()
    prefilter: str | None = None

    def choice(self) -> MethodChoice:
        """The method with its parameters and user templates (each validated)."""
        templates = {}
        for path in self.templates:
            method = user_method(path)
            templates[method.name] = method
        choice = MethodChoice(self.method, self.aggregate, tuple(self.thresholds), templates,  # type: ignore[arg-type]
                              self.options.verify)
        if self.options.guard == "harden":  # every prompt step fences the passage (a prompt version of ours)
            choice.templates.update({s.prompt: harden(choice.method_of(s)) for s in choice.steps() if s.prompt})
        return choice


async def grade(store: Store, request: GradeRequest, grade_set: GradeSet | None = None
                ) -> tuple[GradeSet, list[Summary]]:
    """Grade one grade set (resolved from the request unless given); one summary per step."""
    if request.method in ANSWER_METHODS:
        return await grade_answers(store, request)
    choice = request.choice()
    backend = request.backend.build(request.method, recorded=load_recorded)
    prefilter = (request.backend.build("embedding", spec=request.prefilter, recorded=load_recorded)
                 if request.prefilter else None)
    options = replace(request.options, prefilter=prefilter, backend_config=request.backend, method_name=request.method)
    try:
        with replies_of(request) as cached:
            grade_set, summaries = await run_grade_set(store, choice, backend, replace(options, **cached), grade_set)
        servers = backend.stats() if hasattr(backend, "stats") else []
        if summaries and len(servers) > 1:
            summaries[-1].servers = servers
        return grade_set, summaries
    finally:
        await backend.aclose()
        if prefilter is not None:
            await prefilter.aclose()


@contextmanager
def replies_of(request: GradeRequest) -> Iterator[dict[str, Any]]:
    """The `GradeOptions` of the request's response cache: its folder's cache, open meanwhile (`cache_dir`),
    and whether to ask again (`cache_refresh`)."""
    config = request.backend
    if not config.cache_dir:
        yield {"refresh_cache": config.cache_refresh}
        return
    with ResponseCache.in_folder(config.cache_dir) as cache:
        yield {"reply_cache": cache, "refresh_cache": config.cache_refresh}


async def grade_answers(store: Store, request: GradeRequest) -> tuple[GradeSet, list[Summary]]:
    """A response-level method (`nugget-assign`, `citation-support`) with a text-generating backend."""
    if request.backend.spec.split(":")[0] not in ("openai", "hf", "llamacpp"):
        raise UsageError(f"{{method}} {request.method} needs a text-generating backend: openai:MODEL, hf:PATH or "
                         "llamacpp:PATH", params=("method",))
    if request.templates or request.prefilter:
        raise UsageError(f"{{method}} {request.method} takes no {{template}} or {{prefilter}}",
                         params=("method", "template", "prefilter"))
    if request.method == "citation-support" and request.options.bank:
        raise UsageError("{bank}: citation-support judges cited sentences against their passages, not bank items",
                         params=("bank",))
    backend = request.backend.build(request.method)
    try:
        with replies_of(request) as cached:
            return await run_answer_method(store, request.method, backend, replace(request.options, **cached))
    finally:
        await backend.aclose()


__all__ = ["GradeOptions", "GradeRequest", "MethodChoice", "Summary", "grade", "grade_set_for", "run_grade_set"]


def ungraded(store: Store, request: GradeRequest) -> list[tuple[str, str, str]]:
    """The (query, passage, item) pairs of the request's first step that have no usable grade in the store:
    what a run would have to ask the LLM (nothing is sent)."""
    from proctor.grading.plan import items_of, make_plan
    from proctor.grading.runner import _bank

    if request.method in ANSWER_METHODS:
        return []
    choice = request.choice()
    backend = request.backend.build(request.method, recorded=load_recorded)
    grade_set = grade_set_for(store, choice, backend, request.options)
    step = next(s for s in choice.steps() if s.prompt is not None)
    method = choice.method_of(step)
    plan = make_plan(store, items_of(store, method, _bank(grade_set)), store.grades.graded(grade_set.id, step.name),
                     replace(request.options, max_queries=None, max_passages=None),
                     needs_answer_key="{gold}" in method.template.template)
    return [(w.query_id, w.passage_id, w.question_id) for w in plan.work(store)]
