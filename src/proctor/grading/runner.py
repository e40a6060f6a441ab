"""The runner: resolves the grade set one `grade` command works on (bank version + method + model + prompt
version + reply-changing parameters), carries over what an earlier version of the same bank graded with the
same experiment, and runs the method's declared steps in order, carrying each step's results in memory."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from proctor.errors import UsageError
from proctor.grading.engine import Engine, GradeOptions, Summary
from proctor.grading.flagging import flag_pool
from proctor.grading.plan import Plan, items_of, make_plan
from proctor.grading.similarity import SimilarityEngine, bulk_capable
from proctor.llm.base import Backend
from proctor.llm.health import BackendUnavailable, check_endpoint
from proctor.methods import Method, get_method
from proctor.methods.aggregate import SUM_THRESHOLDS
from proctor.methods.base import CORRECT, FAILED
from proctor.methods.steps import Results, Step, declared_steps
from proctor.papers import FLAN_T5_EXAM
from proctor.records import Grade, GradeSet
from proctor.store import Store

AGGREGATED = "aggregated"


@dataclass
class MethodChoice:
    """Which method, with which parameters and templates (user templates replace the step they name)."""

    name: str
    aggregate: str = "prompt"
    thresholds: tuple[int, int, int] = SUM_THRESHOLDS
    templates: dict[str, Method] = field(default_factory=dict)
    verify: str = "edit-distance"

    def steps(self) -> list[Step]:
        """The declared steps of the method."""
        return declared_steps(self.name, aggregate=self.aggregate, thresholds=self.thresholds, verify=self.verify)

    def method_of(self, step: Step) -> Method:
        """The single-prompt method a step sends (a user template where one replaces it)."""
        assert step.prompt is not None
        return self.templates.get(step.prompt) or get_method(step.prompt)


def grade_set_for(store: Store, choice: MethodChoice, backend: Backend, options: GradeOptions) -> GradeSet:
    """The grade set this command grades into (not yet recorded)."""
    steps = choice.steps()
    methods = [choice.method_of(s) for s in steps if s.prompt]
    unknown = sorted(set(choice.templates) - {s.prompt for s in steps if s.prompt})
    if unknown:
        path = choice.templates[unknown[0]].template.extra.get("user_template")
        raise UsageError(f"{path}: name: step {unknown[0]!r} is one that method {choice.name} does not have "
                         f"(its steps: {', '.join(s.prompt for s in steps if s.prompt)})")
    needs_bank = any(m.items in ("question", "nugget") for m in methods)
    if options.bank and not needs_bank:
        raise UsageError(f"{{bank}}: method {choice.name} grades the query itself, not bank items", params=("bank",))
    bank = store.banks.bank_version(options.bank) if needs_bank else None
    if needs_bank and bank is None:
        raise UsageError(f"{store.path}: no bank in the store; method {choice.name} grades bank items "
                         "(import one with `proctor import bank FILE`)")
    if bank is not None and any(m.kind == "qa" for m in methods):
        _require_answer_keys(store, bank)
    params: dict[str, Any] = {"backend": backend.kind, **backend.params()}
    for step in steps:
        params.update(step.params)
    if choice.name in ("four-prompts",):
        params["aggregate"] = choice.aggregate
    if any(m.kind == "qa" for m in methods):
        params["verify"] = options.verify
    if options.guard is not None:
        params["guard"] = options.guard
    if options.prefilter is not None:
        params["prefilter"] = {"model": options.prefilter.model, "below": options.prefilter_below}
    label = choice.method_of(steps[-1]) if steps[-1].prompt else None
    declared = {"scale": [label.low, label.high]} if label and "scale" in label.template.extra else {}
    return GradeSet(choice.name, backend.model, prompt_version(choice), bank[0] if bank else None,
                    bank[1] if bank else None, params, steps[-1].name, declared)  # a user template's own scale


def prompt_version(choice: MethodChoice) -> str:
    """The prompt version of a grade set of `choice`: its steps' template versions, each once, joined by `+`."""
    versions: list[str] = []
    for step in choice.steps():
        version = choice.method_of(step).template.version if step.prompt else step.version
        if version not in versions:
            versions.append(version)
    return "+".join(versions)


def _require_answer_keys(store: Store, bank: tuple[str, str]) -> None:
    """QA grades answers against answer keys (004 §3.1.1): without keys every well-formed answer would count."""
    items = [item for per_query in store.banks.bank_items("question", *bank).values() for item in per_query]
    lacking = sum(1 for _, _, answers in items if not answers)
    if lacking:
        raise UsageError(f"bank {bank[0]}@{bank[1]}: {lacking} of {len(items)} questions have no answer key; "
                         f"{{method}} qa grades answers against answer keys ({FLAN_T5_EXAM}, §3.1.1) — without one "
                         "every well-formed answer would count as correct. Add gold answers, or grade with self-rating",
                         params=("method",))


def carry_over(store: Store, target: GradeSet) -> int:
    """Copy the grades of unchanged questions from grade sets of the same experiment on other versions of
    the same bank; returns how many grades were copied."""
    if target.bank is None:
        return 0
    copied = 0
    for other in store.grades.grade_sets():
        if (other.id == target.id or other.bank != target.bank or other.method != target.method
                or other.model != target.model or other.prompt_version != target.prompt_version
                or other.params != target.params or other.bank_version is None):
            continue
        same = store.banks.same_questions((other.bank, other.bank_version), (target.bank, target.bank_version or ""))
        for step in {s.name for s in declared_steps(target.method, **_choice_args(target))}:
            copied += store.grades.carry_grades(target.id, other.id, step, same)
    return copied


def _choice_args(grade_set: GradeSet) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if "aggregate" in grade_set.params:
        args["aggregate"] = grade_set.params["aggregate"]
    if "thresholds" in grade_set.params:
        args["thresholds"] = tuple(grade_set.params["thresholds"])
    if "verify" in grade_set.params:
        args["verify"] = grade_set.params["verify"]
    return args


Narrow = Callable[[str, Method, Plan], "Plan | None"]
"""(step, method, plan) → the plan the engine runs for that step, or None to stop before it (batch files)."""


async def run_grade_set(store: Store, choice: MethodChoice, backend: Backend, options: GradeOptions,
                        grade_set: GradeSet | None = None, narrow: Narrow | None = None
                        ) -> tuple[GradeSet, list[Summary]]:
    """Grade one grade set: every declared step in order; one summary per step (the backend stays open).
    `narrow` may restrict or stop each step (batch export and import)."""
    grade_set = grade_set or grade_set_for(store, choice, backend, options)
    new = not store.grades.is_grade_set(grade_set.id)
    with store.transaction():
        store.grades.ensure_grade_set(grade_set)
        carried = carry_over(store, grade_set)
    try:
        with grading_lock(store, grade_set):
            summaries = await _run_steps(store, choice, backend, options, grade_set, narrow)
    except BackendUnavailable:
        if new:  # refused before anything was sent: the store stays as it was
            with store.transaction():
                store.grades.discard_if_empty(grade_set.id)
        raise
    if carried and summaries:
        summaries[0].by_status["carried over"] = carried
    return stored_grade_set(store, grade_set), summaries


def stored_grade_set(store: Store, grade_set: GradeSet) -> GradeSet:
    """The grade set as the store holds it now (its grades, failures and creation time after a run)."""
    return next((g for g in store.grades.grade_sets() if g.id == grade_set.id), grade_set)


_HELD: set[tuple[str, str]] = set()
"""(store path, grade set) locks this process holds: taking one again inside it (openai-batch's submit step
exports through `run_grade_set`) neither waits nor releases it early."""


@contextmanager
def grading_lock(store: Store, grade_set: GradeSet) -> Iterator[None]:
    """One process grades a grade set at a time: a second one is refused while the first is alive (a lock
    left by a killed process is taken over), so no prompt is sent twice."""
    held = (str(store.path), grade_set.id)
    if held in _HELD:
        yield
        return
    pid, host = os.getpid(), socket.gethostname()
    holder = store.grades.lock_grade_set(grade_set.id, pid, host, _alive)
    if holder is not None:
        raise UsageError(f"grade set {grade_set.id} is being graded by pid {holder[0]} (since {holder[1]}); wait for "
                         "it to finish (or stop it), then run this command again to grade what is left")
    _HELD.add(held)
    try:
        yield
    finally:
        _HELD.discard(held)
        store.grades.unlock_grade_set(grade_set.id, pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _run_steps(store: Store, choice: MethodChoice, backend: Backend, options: GradeOptions,
                     grade_set: GradeSet, narrow: Narrow | None = None) -> list[Summary]:
    results: Results = {}
    summaries: list[Summary] = []
    checked = False
    flagged: set[tuple[str, str]] = set()
    if options.guard == "detect":
        first = next(s for s in choice.steps() if s.prompt)
        flagged = flag_pool(store, grade_set.id, choice.method_of(first), _bank(grade_set), options.depth)
    for step in choice.steps():
        if step.prompt is None:
            summaries.append(_aggregate(store, grade_set, step, results))
            continue
        method = choice.method_of(step)
        done = store.grades.graded(grade_set.id, step.name)
        exhausted = store.grades.exhausted(grade_set.id, step.name, options.max_attempts)
        loading = begin_load(backend, options) if not (done or exhausted or narrow) else None
        plan = make_plan(store, items_of(store, method, _bank(grade_set)), done, options,
                         variables=step.uses(results) if step.uses else None, exhausted=exhausted,
                         needs_answer_key="{gold}" in method.template.template, flagged=flagged)
        if narrow is not None and (plan := narrow(step.name, method, plan)) is None:
            break
        if not checked and plan.pairs - plan.already - plan.given_up > 0 and options.reply_cache is None:
            await check_endpoint(backend)  # before pre-filtering and before any pair is sent (else: `Engine`)
            checked = True
        engine_class: Any = Engine
        if options.engine == "ray":
            from proctor.grading.ray_engine import RayEngine

            engine_class = RayEngine
        elif bulk_capable(method, backend, plan, options):
            engine_class = SimilarityEngine
        plan.by_length = getattr(backend, "sorts_by_length", False) and options.engine == "local"
        engine = engine_class(store, method, backend, plan, grade_set=grade_set.id, step=step.name, options=options)
        engine.checked = checked or engine.checked  # the endpoint is checked once per run, not once per step
        engine.early_load = loading
        summary = await engine.arun()
        checked = engine.checked
        results[step.name] = {**results.get(step.name, {}), **engine.results}
        if flagged and not summaries:
            summary.by_status["flagged"] = len(flagged)
        summaries.append(summary)
        if summary.interrupted:
            break
    return summaries


def begin_load(backend: Backend, options: GradeOptions) -> asyncio.Future | None:
    """The backend's local model (`load`: imports, device, weights) loading on a worker thread from now, so that
    its start-up overlaps the planning of a fresh step; None for a backend without one, one loaded already, or the
    Ray engine (its workers load their own). Its seconds are still reported apart (`Summary.load_seconds`); an
    error is raised where the engine awaits it."""
    load = getattr(backend, "load", None)
    if load is None or options.engine != "local" or getattr(backend, "loaded", False):
        return None
    loading = asyncio.get_running_loop().run_in_executor(None, load)
    loading.add_done_callback(lambda done: done.cancelled() or done.exception())  # never "never retrieved"
    return loading


def _bank(grade_set: GradeSet) -> tuple[str, str] | None:
    return (grade_set.bank, grade_set.bank_version or "") if grade_set.bank else None


def _aggregate(store: Store, grade_set: GradeSet, step: Step, results: Results) -> Summary:
    """An aggregation step: labels computed from earlier steps' results, committed in one transaction."""
    assert step.aggregate is not None
    judgments = store.corpus.judgments() if step.needs_judgments else {}
    if step.needs_judgments and not judgments:
        raise UsageError(f"{store.path}: {step.name} needs human judgments to train on (import qrels)")
    rows = step.aggregate(results, judgments)
    qa = grade_set.method == "qa"
    grades = [Grade(r.query_id, r.passage_id, r.item, step.name, grade_set.model, step.version, r.grade, r.status,
                    raw_reply=None, answer=r.answer,
                    correct=(r.status == CORRECT) if qa and r.grade is not None else None, extra=r.extra)
              for r in rows]
    with store.transaction():
        store.grades.upsert_grades(grade_set.id, grades)
    results[step.name] = {(g.query_id, g.passage_id, g.question_id): (g.grade, g.answer, g.parse_status)
                          for g in grades if g.parse_status != FAILED}
    summary = Summary(step.name, grade_set.model, grade_set.id, pairs=len(rows), graded=len(rows))
    for g in grades:
        summary.by_status[g.parse_status] += 1
        if g.parse_status == FAILED:
            summary.failures += 1
            summary.errors[(g.extra or {}).get("reason", "failed")] += 1
    return summary
