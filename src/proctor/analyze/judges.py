"""Agreement of every grade set in a store with the store's human judgments (pairs of predicted label and
judgment for the passages that have both), for labels from "at least m questions"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.analyze.agreement import BINARY_MERGES, agreement_report
from proctor.errors import UsageError
from proctor.evaluate.labels import Qrels
from proctor.evaluate.sources import describe, exam_qrels_each, grade_sets_matching
from proctor.methods import ANSWER_METHODS
from proctor.store import Store
from proctor.trust.coverage import DEFAULT_FLOOR, Floor
from proctor.trust.ensemble import fresh_grade_sets
from proctor.trust.sources import labels_coverage


def store_agreement(
    store: Store, judged_relevant: int, *, min_questions: Sequence[int] = (1, 2, 5),
    merges: Sequence[str] = BINARY_MERGES, method: str | None = None, model: str | None = None,
    grade_set: str | None = None, bank: str | None = None, labels: dict[tuple[str, int], Qrels] | None = None,
    judgments: Qrels | None = None, floor: Floor = DEFAULT_FLOOR,
) -> dict[str, Any]:
    """Agreement figures per grade set and per m (`labels`: `{(grade set id, m): labels}` already made;
    `judgments`: the store's judgments, when the caller has read them), each grade set with its `coverage`:
    the judged pairs (the pool here) that have a label, on the queries that have both."""
    judgments = store.judgments() if judgments is None else judgments
    if not judgments:
        raise UsageError(f"{store.path}: the store holds no judgments to agree with (import qrels)")
    matching, empty = grade_sets_matching(store, fresh_grade_sets(store), grade_set, method, model, bank)
    sets = [s for s in matching if s.method not in ANSWER_METHODS]
    if not sets:
        left_out = f"; left out, without a single grade: {', '.join(s.id for s in empty)}" if empty else ""
        raise UsageError(f"{store.path}: no grade set matches (grade set={grade_set}, method={method}, model={model}, "
                         f"bank={bank}){left_out}")
    out = []
    for grade_set in sets:
        per_m = {}
        given = {m: (labels or {})[(grade_set.id, m)] for m in min_questions if (grade_set.id, m) in (labels or {})}
        made_here = exam_qrels_each(store, grade_set, [m for m in min_questions if m not in given])
        for m in min_questions:
            made = given[m] if m in given else made_here[m]
            pairs = [(label, judgments[q][p]) for q, per in made.items() for p, label in per.items()
                     if p in judgments.get(q, {})]
            per_m[str(m)] = agreement_report([a for a, _ in pairs], [b for _, b in pairs], judged_relevant, merges)
        first = given[min_questions[0]] if min_questions[0] in given else made_here[min_questions[0]]
        coverage = labels_coverage(store, grade_set, first, judgments, scored=len(first.keys() & judgments.keys()),
                                   floor=floor)
        out.append({**describe(store, grade_set), "coverage": coverage.as_dict(), "at_least_m_questions": per_m})
    return {"store": str(store.path), "judged_relevant": judged_relevant,
            "label_rule": "label = m-th largest grade over the query's questions", "grade_sets": out}
