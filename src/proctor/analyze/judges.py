"""Agreement of every grade set in a store with the store's human judgments (pairs of predicted label and
judgment for the passages that have both), for labels from "at least m questions"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.analyze.agreement import agreement_report, merge_threshold, merges_for_scale
from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor
from proctor.evaluate.labels import Qrels
from proctor.evaluate.sources import exam_qrels_each, per_passage
from proctor.evaluate.stored_coverage import labels_coverage
from proctor.gradesets.ensemble import fresh_grade_sets, scale_of
from proctor.gradesets.resolve import describe, grade_sets_matching
from proctor.methods import ANSWER_METHODS, get_method
from proctor.options.correlation import AgreementOptions
from proctor.records import GradeSet
from proctor.store import Store

QUESTION_RULE = "label = m-th largest grade over the query's questions"
PASSAGE_RULE = "label = the method's grade of the passage (one per passage)"


def store_agreement(
    store: Store, options: AgreementOptions | int, *, labels: dict[tuple[str, int], Qrels] | None = None,
    judgments: Qrels | None = None, floor: Floor = DEFAULT_FLOOR,
) -> dict[str, Any]:
    """Agreement figures per grade set and per m of `options` (checked: `min_questions` a list of m, `merges` a
    list of rules or None; a `judged_relevant` level alone: the default options at that level; `labels`:
    `{(grade set id, m): labels}` already made;
    `judgments`: the store's judgments, when the caller has read them), each grade set with its `coverage`:
    the judged pairs (the pool here) that have a label, on the queries that have both. Each grade set's rows
    follow its own scale and labelling rule: `merges` (default: the scale's own) beyond its scale are left out
    and named; a method that grades the passage itself (no questions) has one label per passage, so m = 1
    only."""
    options = options if isinstance(options, AgreementOptions) else AgreementOptions(judged_relevant=options)
    judged_relevant, min_questions, merges = options.judged_relevant, options.min_questions, options.merges
    grade_set, method, model, bank = options.grade_set, options.method, options.model, options.bank
    judgments = store.corpus.judgments() if judgments is None else judgments
    if not judgments:
        raise UsageError(f"{store.path}: the store holds no judgments to agree with (import qrels)")
    matching, empty = grade_sets_matching(store, fresh_grade_sets(store), grade_set, method, model, bank)
    sets = [s for s in matching if s.method not in ANSWER_METHODS]
    if not sets:
        left_out = f"; left out, without a single grade: {', '.join(s.id for s in empty)}" if empty else ""
        raise UsageError(f"{store.path}: no grade set matches (grade set={grade_set}, method={method}, model={model}, "
                         f"bank={bank}){left_out}")
    out = [_one_grade_set(store, grade_set, judgments, judged_relevant, min_questions, merges, labels or {}, floor)
           for grade_set in sets]
    rules = {gs["label_rule"] for gs in out}
    return {"store": str(store.path), "judged_relevant": judged_relevant,
            "label_rule": rules.pop() if len(rules) == 1 else "per grade set (see each)", "grade_sets": out}


def label_scale(grade_set: GradeSet) -> tuple[int, int, bool]:
    """(lowest, highest label, graded per question) of a grade set's label step (an ensemble: its scale, per
    question when its members graded one bank version's questions)."""
    if grade_set.info.get("ensemble"):
        low, high = scale_of(grade_set)
        return low, high, grade_set.bank is not None and not per_passage(grade_set)
    try:
        step = get_method(grade_set.step or grade_set.method)
    except UsageError:  # a step Proctor does not know (an imported grade set): grades 0-5 per question
        return 0, 5, True
    return step.low, step.high, step.items != "query"


def _one_grade_set(store: Store, grade_set: GradeSet, judgments: Qrels, judged_relevant: int,
                   min_questions: Sequence[int], merges: Sequence[str] | None,
                   labels: dict[tuple[str, int], Qrels], floor: Floor) -> dict[str, Any]:
    """One grade set's figures per m, on its own scale, with its coverage."""
    low, high, per_question = label_scale(grade_set)
    ms = list(min_questions) if per_question else [1]
    own = [r for r in (merges or merges_for_scale(low, high)) if low < merge_threshold(r) <= high]
    given = {m: labels[(grade_set.id, m)] for m in ms if (grade_set.id, m) in labels}
    made_here = exam_qrels_each(store, grade_set, [m for m in ms if m not in given])
    per_m = {}
    for m in ms:
        made = given[m] if m in given else made_here[m]
        pairs = [(label, judgments[q][p]) for q, per in made.items() for p, label in per.items()
                 if p in judgments.get(q, {})]
        per_m[str(m)] = agreement_report([a for a, _ in pairs], [b for _, b in pairs], judged_relevant, own,
                                         llmjudge=None if per_question else (low, high) == (0, 3))
    first = given[ms[0]] if ms[0] in given else made_here[ms[0]]
    coverage = labels_coverage(store, grade_set, first, judgments, scored=len(first.keys() & judgments.keys()),
                               floor=floor)
    out = {**describe(store, grade_set), "coverage": coverage.as_dict(), "scale": [low, high],
           "label_rule": QUESTION_RULE if per_question else PASSAGE_RULE, "at_least_m_questions": per_m}
    left_out = [r for r in (merges or []) if r not in own]
    if left_out:
        out["merges_outside_scale"] = left_out
    return out
