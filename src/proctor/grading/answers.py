"""Response-level methods: graded on the generated answers imported with `proctor import responses`, not on
pool passages.

- `nugget-assign` (AutoNuggetizer): for every (whole answer of a run for a topic, nugget) a 3-level label
  with nuggetizer's assignment prompt, 10 nuggets per prompt as nuggetizer sends them; grades support 2,
  partial_support 1, not_support 0, on passage `RUN/QUERY` (the answer; its sentences are `RUN/QUERY/i`).
- `citation-support` (`proctor.grading.citation_support`): every cited answer sentence against its cited passages.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from proctor.errors import UsageError
from proctor.grading.answer_jobs import Job, LabelRunner
from proctor.grading.engine import GradeOptions, Summary
from proctor.llm.base import Backend
from proctor.methods import ANSWER_METHODS
from proctor.methods.base import Template, load_template
from proctor.methods.label_lists import parse_labels, python_list
from proctor.records import GradeSet
from proctor.store import Store

__all__ = ["ANSWER_METHODS", "answer_id", "answer_texts", "run_answer_method"]
ASSIGNMENT = {"support": 2, "partial_support": 1, "not_support": 0}
"""nuggetizer's labels and the grades Proctor stores for them."""


def answer_texts(store: Store) -> dict[tuple[str, str], str]:
    """`{(run, query): answer}`: every imported response, its sentences in order joined by spaces (as
    nuggetizer joins an answer's sentences), citations left out."""
    texts = store.corpus.passage_texts()
    parts: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for pid, seg in store.corpus.segments().items():
        parts[(seg["run"], seg["query_id"])].append((seg["position"], texts.get(pid) or ""))
    return {key: " ".join(t for _, t in sorted(found) if t) for key, found in parts.items()}


def answer_id(run: str, query_id: str) -> str:
    """The passage id of a whole answer (its sentences are `RUN/QUERY/i`)."""
    return f"{run}/{query_id}"


def parse_assignment(reply: str | None, count: int) -> tuple[list[tuple[int, str]] | None, str]:
    """One nuggetizer label per nugget → (grade, label)."""
    labels, reason = parse_labels(reply, count, tuple(ASSIGNMENT))
    return ([(ASSIGNMENT[label], label) for label in labels], "") if labels is not None else (None, reason)


def assign_grade_set(store: Store, backend: Backend, options: GradeOptions) -> tuple[GradeSet, Template]:
    """The grade set of `nugget-assign` with this backend on the chosen bank version."""
    template = load_template("nugget-assign")
    bank = store.banks.bank_version(options.bank)
    if bank is None:
        raise UsageError(f"{store.path}: no bank in the store; nugget-assign grades nuggets (import a nugget bank)")
    params: dict[str, Any] = {"backend": backend.kind, **backend.params(), "window": template.extra["window"]}
    return GradeSet("nugget-assign", backend.model, template.version, bank[0], bank[1], params), template


def assign_jobs(store: Store, grade_set: GradeSet, window: int, options: GradeOptions) -> tuple[list[Job], int, int]:
    """The prompts still to send: per answer, its query's nuggets not yet graded, `window` at a time.
    Returns the jobs, the number of (answer, nugget) pairs and how many of them failed too often."""
    nuggets = store.banks.bank_items("nugget", grade_set.bank or "", grade_set.bank_version or "")
    if not nuggets:
        raise UsageError(f"bank {grade_set.bank_label} holds no nuggets; nugget-assign grades nuggets")
    answers = answer_texts(store)
    if not answers:
        raise UsageError(f"{store.path}: no generated answers (import them with `proctor import responses FILE`)")
    queries = store.corpus.queries()
    done = store.grades.graded(grade_set.id, "nugget-assign")
    exhausted = store.grades.exhausted(grade_set.id, "nugget-assign", options.max_attempts)
    topics = sorted({q for _, q in answers if q in nuggets})
    if options.max_queries is not None:
        topics = topics[:options.max_queries]
    jobs, pairs, given_up = [], 0, 0
    for (run, qid), text in sorted(answers.items()):
        if qid not in topics:
            continue
        pid = answer_id(run, qid)
        keys = [(qid, pid, item_id) for item_id, _, _ in nuggets[qid]]
        pairs += len(keys)
        given_up += sum(1 for k in keys if k in exhausted)
        pending = [(item_id, t) for item_id, t, _ in nuggets[qid] if (qid, pid, item_id) not in done
                   and (qid, pid, item_id) not in exhausted]
        for start in range(0, len(pending), window):
            part = pending[start:start + window]
            variables = {"query": queries.get(qid) or qid, "nuggets": python_list([t for _, t in part]),
                         "num_nuggets": str(len(part))}
            jobs.append(Job(qid, pid, tuple(i for i, _ in part), variables, text))
    return jobs, pairs, given_up


async def run_answer_method(store: Store, method: str, backend: Backend, options: GradeOptions
                            ) -> tuple[GradeSet, list[Summary]]:
    """Grade what `method` still lacks on the store's generated answers into its grade set (one process at a
    time per grade set, as for every grade set)."""
    from proctor.grading.citation_support import citation_grade_set, citation_jobs, parse_support
    from proctor.grading.runner import carry_over, grading_lock

    if method == "nugget-assign":
        grade_set, template = assign_grade_set(store, backend, options)
    else:
        grade_set, template = citation_grade_set(store, backend)
    with store.transaction():
        store.grades.ensure_grade_set(grade_set)
        carried = carry_over(store, grade_set)  # unchanged nuggets of other versions of the bank
    with grading_lock(store, grade_set):
        if method == "nugget-assign":
            jobs, pairs, given_up = assign_jobs(store, grade_set, int(template.extra["window"]), options)
        else:
            jobs, pairs, given_up = citation_jobs(store, grade_set, options)
        pending = sum(len(j.item_ids) for j in jobs)
        summary = Summary(method, backend.model, grade_set.id, pairs, pairs - pending - given_up, given_up)
        parser = parse_assignment if method == "nugget-assign" else parse_support
        runner = LabelRunner(store, backend, template, parser, grade_set=grade_set.id, step=method, options=options)
        summary = await runner.run(jobs, summary)
    if carried:
        summary.by_status["carried over"] = carried
    return grade_set, [summary]
