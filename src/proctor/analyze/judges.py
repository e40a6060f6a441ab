"""Agreement of every grade set in a store with the store's human judgments (pairs of predicted label and
judgment for the passages that have both), for labels from "at least m questions"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.analyze.agreement import BINARY_MERGES, agreement_report
from proctor.errors import UsageError
from proctor.evaluate.labels import Qrels
from proctor.evaluate.sources import describe, exam_qrels_each, method_matches
from proctor.methods import ANSWER_METHODS
from proctor.store import Store
from proctor.trust.ensemble import fresh_grade_sets


def store_agreement(
    store: Store, judged_relevant: int, *, min_questions: Sequence[int] = (1, 2, 5),
    merges: Sequence[str] = BINARY_MERGES, method: str | None = None, model: str | None = None,
    grade_set: str | None = None, bank: str | None = None, labels: dict[tuple[str, int], Qrels] | None = None,
    judgments: Qrels | None = None,
) -> dict[str, Any]:
    """Agreement figures per grade set and per m (`labels`: `{(grade set id, m): labels}` already made;
    `judgments`: the store's judgments, when the caller has read them)."""
    judgments = store.judgments() if judgments is None else judgments
    if not judgments:
        raise UsageError(f"{store.path}: the store holds no judgments to agree with (import qrels)")
    name, _, version = (bank or "").partition("@")
    every = fresh_grade_sets(store)
    sets = [s for s in every if (s.id.startswith(grade_set) if grade_set else not s.intermediate)
            and s.method not in ANSWER_METHODS
            and method_matches(s, method, every) and (model is None or s.model == model)
            and (bank is None or s.bank == name) and (not version or s.bank_version == version)]
    if not sets:
        raise UsageError(f"{store.path}: no grade set matches (grade set={grade_set}, method={method}, model={model}, "
                         f"bank={bank})")
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
        out.append({**describe(store, grade_set), "at_least_m_questions": per_m})
    return {"store": str(store.path), "judged_relevant": judged_relevant,
            "label_rule": "label = m-th largest grade over the query's questions", "grade_sets": out}
