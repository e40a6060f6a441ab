"""What experiment files (`proctor.experiment`, built on the door) need beyond the notebook verbs: the dry run's
planning of a grader's pool (the grading engine's own plan, prompts rendered as the backend gets them), EXAM-Qrels
written to a file, the `analyze` report of an experiment, how a measure name reads, and the safe file writing
every output goes through. The work stays where it lives (grading, evaluate, io, outputs); this module only
exposes it."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.outputs import atomic_file as atomic_file
from proctor.outputs import folder_target as folder_target
from proctor.outputs import write_text as write_text

if TYPE_CHECKING:  # the labels and the grading engine load when an experiment step needs them
    from proctor.api.labels import LabelChoice
    from proctor.store import Store

NO_LLM = ("replay", "embed")
"""Backends that send no prompt to an LLM: their tokens (and cost) are 0."""
CHARS_PER_TOKEN = 4
"""Characters per token where the backend has no tokenizer of its own (GPT-style English text)."""


def write_qrels_file(store: Store, labels: LabelChoice, target: str | Path) -> Path:
    """Write the EXAM-Qrels of one grade set (`proctor qrels`'s lines) to `target`, atomically."""
    from proctor.api.labels import qrels
    from proctor.io.trec import write_qrels

    _, made = qrels(store, labels)
    with atomic_file(target) as handle:
        write_qrels(made, handle)
    return Path(target)


def grading_estimate(store: Store, method: str, llm: str, **options: Any) -> dict[str, Any]:
    """What `grade` (same arguments) would send, planned exactly as the grading step plans it and sending
    nothing: the grade set, and per method step the pairs in the pool, already graded, given up and to grade,
    with the prompts' tokens (the model's own tokenizer where the backend has one, else characters /
    `CHARS_PER_TOKEN`) and the completion tokens (the template's `max_tokens` per prompt, an upper bound)."""
    from proctor.api.grading import grade_request
    from proctor.grading import grade_set_for
    from proctor.grading.recorded import load_recorded

    request = grade_request(method, llm, **options)
    choice, opts = request.choice(), request.options
    backend = request.backend.build(request.method, recorded=load_recorded)
    try:
        grade_set = grade_set_for(store, choice, backend, opts)
        rows: list[dict[str, Any]] = []
        for step in choice.steps():
            if step.prompt is None:
                continue
            if step.uses is not None:
                at_most = max((r.get("to_grade", 0) for r in rows), default=0)
                rows.append({"step": step.name, "at_most_prompts": at_most,
                             "note": f"its pairs depend on the replies of the earlier steps: at most {at_most} "
                                     "prompts (one per pair an earlier step grades), not in the token and cost "
                                     "estimates"})
                continue
            rows.append(_step_estimate(store, choice.method_of(step), step.name, grade_set, opts, backend))
    finally:
        asyncio.run(backend.aclose())
    return {"grade_set": grade_set.id, "model": grade_set.model, "prompt_version": grade_set.prompt_version,
            "steps": rows}


def _step_estimate(store: Store, method, step: str, grade_set, options, backend) -> dict[str, Any]:
    """One method step's pool, what is left of it, and its tokens."""
    from proctor.grading.plan import items_of, make_plan

    bank = (grade_set.bank, grade_set.bank_version or "") if grade_set.bank else None
    planned = make_plan(store, items_of(store, method, bank), store.grades.graded(grade_set.id, step), options,
                        exhausted=store.grades.exhausted(grade_set.id, step, options.max_attempts),
                        needs_answer_key="{gold}" in method.template.template)
    row: dict[str, Any] = {"step": step, "pairs_in_pool": planned.pairs, "already_graded": planned.already,
                           "given_up": planned.given_up,
                           "to_grade": planned.pairs - planned.already - planned.given_up}
    row.update(_tokens(store, method, step, planned, backend, row["to_grade"]))
    return row


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
