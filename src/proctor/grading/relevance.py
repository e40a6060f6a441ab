"""Direct and criteria-based relevance labelling (000 Appendix A, 002) on the grading engine, so every
backend, the cache, resume and progress work unchanged. Multi-step methods run their steps one after the
other, each step a single-prompt engine run that reads what the earlier steps stored:

- `four-prompts`: criteria (method `criteria`, one grade per criterion, kept so a human sees why), then
  `--aggregate prompt` (method `four-prompts`, Table 3), `sum` (method `four-prompts-sum`, Table 4) or
  `naive-bayes` (method `four-prompts-naive-bayes`, query-level cross-validation);
- `four-prompts-cot`: Sun's yes/no check (method `sun`), then Exactness+Coverage (yes) or Topicality+
  Contextual Fit (no), then the Table 5 prompt for 2-vs-3 or 0-vs-1 (method `four-prompts-cot`);
- `query-gen`: a query generated from the passage (method `query-gen-query`), then its similarity to the
  real query 0–3 (method `query-gen`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

from proctor.errors import UsageError
from proctor.grading.aggregate import CRITERIA, SUM_THRESHOLDS, cross_validated, sum_label
from proctor.grading.engine import Engine, GradeOptions, Summary
from proctor.llm.base import Backend
from proctor.methods import DIRECT, get_method
from proctor.methods.base import FAILED
from proctor.store import Grade, Store

AGGREGATIONS = ("prompt", "sum", "naive-bayes")


async def run_relevance(store: Store, name: str, backend: Backend, options: GradeOptions, *,
                        aggregate: str = "prompt", thresholds: tuple[int, int, int] = SUM_THRESHOLDS) -> list[Summary]:
    """Run a direct or multi-step relevance method; one summary per step (the backend stays open)."""
    if name in DIRECT:
        return [await Engine(store, get_method(name), backend, options).arun()]
    if name == "four-prompts":
        return await _four_prompts(store, backend, options, aggregate, thresholds)
    if name == "four-prompts-cot":
        return await _cot(store, backend, options)
    if name == "query-gen":
        return await _query_gen(store, backend, options)
    raise UsageError(f"{name} is not a relevance-label method")


async def _step(store: Store, step: str, backend: Backend, options: GradeOptions,
                variables: Callable[[str, str, str], dict[str, str] | None] | None = None) -> Summary:
    return await Engine(store, get_method(step), backend, replace(options, variables=variables)).arun()


def criterion_grades(store: Store, model: str) -> dict[tuple[str, str], dict[str, int]]:
    """`{(query, passage): {criterion: grade}}` of the stored criteria."""
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for qid, pid, criterion, grade in store.grade_rows("criteria", model):
        if grade is not None:
            out[(qid, pid)][criterion] = grade
    return dict(out)


async def _four_prompts(store, backend, options, aggregate, thresholds) -> list[Summary]:
    if aggregate not in AGGREGATIONS:
        raise UsageError(f"--aggregate must be one of {', '.join(AGGREGATIONS)}")
    summaries = [await _step(store, "criteria", backend, options)]
    if summaries[-1].interrupted:
        return summaries
    grades = criterion_grades(store, backend.model)
    complete = {key: g for key, g in grades.items() if all(c in g for c in CRITERIA)}
    if aggregate == "prompt":
        def variables(qid: str, pid: str, _: str) -> dict[str, str] | None:
            found = complete.get((qid, pid))
            return {c: str(found[c]) for c in CRITERIA} if found else None
        summaries.append(await _step(store, "four-prompts", backend, options, variables))
        return summaries
    if aggregate == "sum":
        rows = [_aggregated(qid, pid, "four-prompts-sum", backend.model, f"sum>={'/'.join(map(str, thresholds))}",
                            sum_label([g[c] for c in CRITERIA], thresholds), g, {"sum": sum(g.values())})
                for (qid, pid), g in complete.items()]
    else:
        judgments = store.judgments()
        if not judgments:
            raise UsageError(f"{store.path}: naive-bayes needs human judgments to train on (import qrels)")
        data = [(qid, pid, tuple(float(g[c]) for c in CRITERIA), judgments.get(qid, {}).get(pid))
                for (qid, pid), g in sorted(complete.items())]
        predicted = cross_validated(data)
        rows = [_aggregated(qid, pid, "four-prompts-naive-bayes", backend.model, "gaussian-nb-leave-one-query-out",
                            label, complete[(qid, pid)], {"trained_on_rows": n, "held_out_query": qid})
                for (qid, pid), (label, n) in predicted.items()]
    with store.transaction():
        store.upsert_grades(rows)
        method = rows[0].method if rows else f"four-prompts-{aggregate}"
        store.upsert_grade_config(method, backend.model, rows[0].prompt_version if rows else aggregate,
                                  {"aggregate": aggregate, "from": "criteria", "source": "002 §2.2-2.3"})
    summary = Summary(f"four-prompts-{aggregate}", backend.model, pairs=len(grades), graded=len(rows))
    summary.by_status["aggregated"] = len(rows)
    return [*summaries, summary]


def _aggregated(qid, pid, method, model, version, label, criteria, extra) -> Grade:
    return Grade(qid, pid, "", method, model, version, label, "aggregated",
                 extra={"criteria": {c: criteria[c] for c in CRITERIA}, **extra})


async def _cot(store, backend, options) -> list[Summary]:
    summaries = [await _step(store, "sun", backend, options)]
    if summaries[-1].interrupted:
        return summaries
    verdict = {(qid, pid): grade for qid, pid, _, grade in store.grade_rows("sun", backend.model) if grade is not None}
    wanted = {1: ("Exactness", "Coverage"), 0: ("Topicality", "Contextual Fit")}

    def subset(qid: str, pid: str, criterion: str) -> dict[str, str] | None:
        check = verdict.get((qid, pid))
        return {} if check is not None and criterion in wanted[check] else None

    summaries.append(await _step(store, "criteria", backend, options, subset))
    grades = criterion_grades(store, backend.model)
    for check, step in ((1, "cot-relevant"), (0, "cot-nonrelevant")):
        if summaries[-1].interrupted:
            return summaries
        def variables(qid: str, pid: str, _: str, check=check) -> dict[str, str] | None:
            found = grades.get((qid, pid), {})
            if verdict.get((qid, pid)) != check or not all(c in found for c in wanted[check]):
                return None
            return {c: str(found[c]) for c in wanted[check]}
        summaries.append(await _step(store, step, backend, options, variables))
    return summaries


async def _query_gen(store, backend, options) -> list[Summary]:
    summaries = [await _step(store, "query-gen-query", backend, options)]
    if summaries[-1].interrupted:
        return summaries
    generated = {(g.query_id, g.passage_id): g.answer for g in store.grades("query-gen-query", backend.model)
                 if g.parse_status != FAILED and g.answer}

    def variables(qid: str, pid: str, _: str) -> dict[str, str] | None:
        text = generated.get((qid, pid))
        return {"generated_query": text} if text else None

    summaries.append(await _step(store, "query-gen", backend, options, variables))
    return summaries
