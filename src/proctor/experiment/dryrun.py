"""`proctor run --dry-run`: the plan before any LLM call. The inputs are imported into a temporary copy of
the store (the real one is never written), and every grader's pool is planned exactly as the grading step
plans it, so the pairs to send are the pairs the real run then grades.

Token estimates: the prompt of every pair to send is rendered as the backend would get it; its tokens
(with the system message, if any) are counted with the model's own tokenizer when the backend has one
locally (hf:), else estimated as ceil(characters / 4) (the usual rule of thumb for English text with
GPT-style tokenizers). Completion tokens are estimated as the template's `max_tokens` per prompt (an
upper bound). Replay and embedding backends send no prompts to an LLM: their tokens and cost are 0.

Time estimates: pairs to grade / the grader's throughput — measured (the last run of the same grade set in
this experiment's run.json: pairs graded / seconds grading), else configured (`pairs_per_second` in its
`[[grade]]` table), else none (the output says how to get one). No model is loaded: backends load their
model on first use, and a dry run uses none."""

from __future__ import annotations

import asyncio
import math
import tempfile
from pathlib import Path
from typing import Any

from proctor.experiment.manifest import read_manifest
from proctor.experiment.plan import Plan
from proctor.experiment.runner import import_sources, prepare, step_names
from proctor.experiment.schema import Grader
from proctor.options.numeric import check_numbers
from proctor.store import Store

NO_LLM = ("replay", "embed")
CHARS_PER_TOKEN = 4


def dry_run(path: str | Path, *, only: str | None = None, price_in: float | None = None,
            price_out: float | None = None, max_queries: int | None = None,
            max_passages: int | None = None) -> dict[str, Any]:
    """The plan of an experiment with per-grader pair counts and token and cost estimates (writes nothing)."""
    check_numbers({"price_in": price_in, "price_out": price_out})
    with tempfile.TemporaryDirectory(prefix="proctor-dry-run-") as folder:
        return _dry_run(Path(folder), path, only, price_in, price_out, max_queries, max_passages)


def _dry_run(folder: Path, path: str | Path, only: str | None, price_in: float | None, price_out: float | None,
             max_queries: int | None, max_passages: int | None) -> dict[str, Any]:
    plan = prepare(path, max_queries=max_queries, max_passages=max_passages, inputs=folder / "inputs")
    experiment = plan.experiment
    selected = step_names(plan, only)
    previous = read_manifest(experiment.out) if experiment.store.exists() else {}
    steps = [{"step": s.name, "would_run": previous.get("steps", {}).get(s.name, {}).get("digest") != s.digest,
              "commands": s.commands} for s in plan.steps if s.name in selected]
    graders = []
    store = _working_copy(plan, folder / "store.db")
    try:
        for grader in experiment.graders:
            if f"grade:{grader.name}" in selected:
                estimate = _estimate(store, grader, price_in, price_out)
                last = previous.get("steps", {}).get(f"grade:{grader.name}")
                estimate["time"] = estimated_time(estimate, grader, last, experiment.out)
                graders.append(estimate)
    finally:
        store.close()
    return {"experiment": str(experiment.path), "store": str(experiment.store), "out": str(experiment.out),
            "steps": steps, "graders": graders, "seconds_estimate": _total_seconds(graders),
            "token_estimate": __doc__.split("Token estimates: ")[1].split("\n\nTime estimates: ")[0].strip(),
            "time_estimate": __doc__.split("Time estimates: ")[1].strip()}


def estimated_time(estimate: dict[str, Any], grader: Grader, last: dict[str, Any] | None, out: Path
                   ) -> dict[str, Any]:
    """Seconds to grade what is left, from the measured (run.json) or configured throughput, with its source."""
    to_grade = sum(r.get("to_grade", 0) for r in estimate["steps"])
    measured = _measured(last, estimate["grade_set"])
    if measured is not None:
        graded, seconds = measured
        rate, source = graded / seconds, (f"measured: {graded} pairs in {seconds:g} s by the last run of this grade "
                                          f"set ({out / 'run.json'})")
    elif grader.pairs_per_second is not None:
        rate, source = grader.pairs_per_second, "configured: pairs_per_second in the experiment file"
    else:
        return {"pairs": to_grade, "pairs_per_second": None, "seconds": None,
                "source": "no throughput known: run a trial (--max-queries 2) or set pairs_per_second in [[grade]]"}
    return {"pairs": to_grade, "pairs_per_second": round(rate, 3), "seconds": round(to_grade / rate, 1),
            "source": source}


def _measured(last: dict[str, Any] | None, grade_set: str) -> tuple[int, float] | None:
    """(pairs graded, seconds) of the last run of `grade_set`, when it graded anything."""
    if not last or (last.get("grade_set") or {}).get("id") != grade_set:
        return None
    steps = (last.get("usage") or {}).get("steps") or []
    graded = sum(s.get("graded_now") or 0 for s in steps)
    seconds = sum(s.get("seconds") or 0.0 for s in steps)
    return (graded, seconds) if graded > 0 and seconds > 0 else None


def _total_seconds(graders: list[dict[str, Any]]) -> float | None:
    """All graders' seconds, when every one is known."""
    times = [g["time"]["seconds"] for g in graders]
    return round(sum(times), 1) if times and all(t is not None for t in times) else None


def _working_copy(plan: Plan, path: Path) -> Store:
    """A temporary store holding what the import step would give."""
    real = plan.experiment.store
    # a store of an older schema: the copy is migrated, not the store
    store = Store.copy_of(real, path) if real.exists() else Store.create_or_open(path)
    import_sources(store, plan)
    return store


def _estimate(store: Store, grader: Grader, price_in: float | None, price_out: float | None) -> dict[str, Any]:
    from proctor.api.grading import grade_request
    from proctor.grading import grade_set_for
    from proctor.grading.plan import items_of, make_plan
    from proctor.grading.recorded import load_recorded

    request = grade_request(grader.method, grader.llm, templates=tuple(map(str, grader.templates)),
                            prefilter=grader.prefilter, aggregate=grader.aggregate,
                            thresholds=grader.thresholds, **grader.options, **grader.backend)
    choice, options = request.choice(), request.options
    backend = request.backend.build(request.method, recorded=load_recorded)
    try:
        grade_set = grade_set_for(store, choice, backend, options)
        rows = []
        for step in choice.steps():
            if step.prompt is None:
                continue
            method = choice.method_of(step)
            row: dict[str, Any] = {"step": step.name}
            if step.uses is not None:
                at_most = max((r.get("to_grade", 0) for r in rows), default=0)
                row.update(at_most_prompts=at_most,
                           note=f"its pairs depend on the replies of the earlier steps: at most {at_most} prompts "
                           "(one per pair an earlier step grades), not in the token and cost estimates")
                rows.append(row)
                continue
            bank = (grade_set.bank, grade_set.bank_version or "") if grade_set.bank else None
            planned = make_plan(store, items_of(store, method, bank), store.grades.graded(grade_set.id, step.name),
                                options,
                                exhausted=store.grades.exhausted(grade_set.id, step.name, options.max_attempts),
                                needs_answer_key="{gold}" in method.template.template)
            row.update(pairs_in_pool=planned.pairs, already_graded=planned.already, given_up=planned.given_up,
                       to_grade=planned.pairs - planned.already - planned.given_up)
            row.update(_tokens(store, method, step.name, planned, backend, row["to_grade"]))
            rows.append(row)
    finally:
        asyncio.run(backend.aclose())
    return _priced({"grader": grader.name, "method": grader.method, "llm": grader.llm, "grade_set": grade_set.id,
                    "model": grade_set.model, "prompt_version": grade_set.prompt_version, "steps": rows},
                   price_in, price_out)


def _tokens(store: Store, method, step: str, planned, backend, to_grade: int) -> dict[str, Any]:
    if backend.kind in NO_LLM:
        return {"prompts_to_send": 0, "prompt_tokens": 0, "completion_tokens": 0, "tokenizer": None}
    from proctor.grading.prompting import render

    tokenizer = getattr(backend, "tokenizer", None)
    prompt_tokens = 0
    for item in planned.work(store):
        request = render(method, step, item, backend)[0]
        text = (request.system or "") + request.prompt
        prompt_tokens += (len(tokenizer(text).input_ids) if tokenizer is not None
                          else math.ceil(len(text) / CHARS_PER_TOKEN))
    return {"prompts_to_send": to_grade, "prompt_tokens": prompt_tokens,
            "completion_tokens": to_grade * method.template.max_tokens,
            "tokenizer": "the model's own" if tokenizer is not None else f"estimate: characters / {CHARS_PER_TOKEN}"}


def _priced(estimate: dict[str, Any], price_in: float | None, price_out: float | None) -> dict[str, Any]:
    prompt = sum(r.get("prompt_tokens", 0) for r in estimate["steps"])
    completion = sum(r.get("completion_tokens", 0) for r in estimate["steps"])
    estimate.update(prompt_tokens=prompt, completion_tokens=completion)
    if price_in is not None or price_out is not None:
        estimate["cost_usd"] = round(prompt / 1e6 * (price_in or 0) + completion / 1e6 * (price_out or 0), 6)
    return estimate


def render(estimate: dict[str, Any]) -> str:
    """The plan as text."""
    lines = [f"dry run of {estimate['experiment']} (nothing written, no LLM called)"]
    for step in estimate["steps"]:
        lines.append(f"  step {step['step']}: {'would run' if step['would_run'] else 'unchanged, would be skipped'}")
    for g in estimate["graders"]:
        lines.append(f"grader {g['grader']}: {g['method']} with {g['llm']} → grade set {g['grade_set']} "
                     f"({g['model']}, prompt {g['prompt_version']})")
        for r in g["steps"]:
            if "pairs_in_pool" not in r:
                lines.append(f"  {r['step']}: {r['note']}")
                continue
            lines.append(f"  {r['step']}: {r['pairs_in_pool']} pairs in the pool, {r['already_graded']} already "
                         f"graded, {r['given_up']} given up, {r['to_grade']} to grade; {r['prompts_to_send']} prompts "
                         f"to send, ~{r['prompt_tokens']} prompt + ~{r['completion_tokens']} completion tokens")
        if "cost_usd" in g:
            lines.append(f"  estimated cost: ${g['cost_usd']:.4f}")
        t = g["time"]
        lines.append(f"  estimated time: {_duration(t['seconds'])} for {t['pairs']} pairs at "
                     f"{t['pairs_per_second']} pairs/s ({t['source']})" if t["seconds"] is not None
                     else f"  estimated time: unknown ({t['source']})")
    if estimate["graders"]:
        total = estimate["seconds_estimate"]
        lines.append(f"grading in all: {_duration(total)}" if total is not None else
                     "grading in all: unknown (a grader's throughput is unknown)")
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    """`~42 s`, `~6.2 min`, `~1.5 h`."""
    if seconds < 90:
        return f"~{seconds:.0f} s"
    return f"~{seconds / 60:.1f} min" if seconds < 5400 else f"~{seconds / 3600:.1f} h"
