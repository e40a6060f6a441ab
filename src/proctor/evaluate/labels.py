"""Grades → relevance labels (RUBRIC eq. 1): a passage's label is the largest grade any of its query's
questions gives it, or — with `min_questions` m — the grade reached by at least m questions (the m-th
largest). With facets, labels are per `query_id/facet_id`. Binary labels are 1 when the label reaches τ."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from proctor.errors import UsageError
from proctor.options.evaluation import EvaluationOptions

Qrels = dict[str, dict[str, int]]


@dataclass
class LabelStats:
    """What went into the labels: passages labelled, grades used, failed grades left out."""

    passages: int = 0
    grades: int = 0
    failed: int = 0
    passages_without_grade: int = 0


def exam_labels(
    grade_rows: Iterable[tuple[str, str, str, int | None]],
    *,
    min_questions: int = EvaluationOptions.min_questions,
    facets: dict[str, str | None] | None = None,
    stats: LabelStats | None = None,
) -> Qrels:
    """Labels `{query_id: {passage_id: label}}` from `(query, passage, question, grade)` rows.

    Failed grades (None) are left out; a passage whose every grade failed gets no label (it counts as
    unjudged) and is counted in `stats`. With `facets` (`{question_id: facet_id}`) the key is
    `query_id/facet_id`; questions with no facet keep the query id.
    """
    if min_questions < 1:
        raise UsageError("{min_questions} must be at least 1", params=("min_questions",))
    stats = stats if stats is not None else LabelStats()
    per_passage: dict[tuple[str, str], list[int]] = defaultdict(list)
    for qid, pid, question_id, grade in grade_rows:
        key = qid
        if facets is not None:
            facet = facets.get(question_id) or _facet_from_id(qid, question_id)
            key = f"{qid}/{facet}" if facet else qid
        grades = per_passage[(key, pid)]
        if grade is None:
            stats.failed += 1
            continue
        stats.grades += 1
        grades.append(grade)
    qrels: Qrels = defaultdict(dict)
    for (key, pid), grades in per_passage.items():
        if not grades:
            stats.passages_without_grade += 1
            continue
        grades.sort(reverse=True)
        qrels[key][pid] = grades[min_questions - 1] if len(grades) >= min_questions else 0
        stats.passages += 1
    return dict(qrels)


def labels_from_histogram(
    rows: Iterable[tuple[str, str, int | None, int]], *, min_questions: int = EvaluationOptions.min_questions,
    stats: LabelStats | None = None,
) -> Qrels:
    """The labels `exam_labels` gives, from `(query, passage, grade, n)` rows grouped by (query, passage) with
    grades largest first (`Store.tallies.label_histogram`; grade None counts failed grades)."""
    return labels_for_each(rows, [min_questions], stats=stats)[min_questions]


def labels_for_each(
    rows: Iterable[tuple[str, str, int | None, int]], min_questions: Sequence[int], *,
    stats: LabelStats | None = None,
) -> dict[int, Qrels]:
    """`labels_from_histogram` for several `min_questions` in one pass over the rows (`stats` counts the rows
    once: they are the same for every m)."""
    if any(m < 1 for m in min_questions):
        raise UsageError("{min_questions} must be at least 1", params=("min_questions",))
    stats = stats if stats is not None else LabelStats()
    ms = list(dict.fromkeys(min_questions))
    out: dict[int, Qrels] = {m: defaultdict(dict) for m in ms}
    key: tuple[str, str] | None = None
    seen, labels = 0, [0] * len(ms)
    for qid, pid, grade, n in rows:
        if (qid, pid) != key:
            _close_each(out, ms, stats, key, seen, labels)
            key, seen, labels = (qid, pid), 0, [0] * len(ms)
        if grade is None:
            stats.failed += n
            continue
        stats.grades += n
        for i, m in enumerate(ms):
            if seen < m <= seen + n:
                labels[i] = grade
        seen += n
    _close_each(out, ms, stats, key, seen, labels)
    return {m: dict(qrels) for m, qrels in out.items()}


def labels_from_top(rows: Iterable[tuple[str, str, int | None, int, int]], *, stats: LabelStats | None = None
                    ) -> Qrels:
    """The labels `exam_labels` gives at one question (`min_questions` 1) from `(query, passage, largest grade,
    usable grades, failed grades)` rows (`Store.caches.top_grades`)."""
    stats = stats if stats is not None else LabelStats()
    qrels: Qrels = defaultdict(dict)
    for qid, pid, top, graded, failed in rows:
        stats.failed += failed
        if graded:
            stats.grades += graded
            stats.passages += 1
            qrels[qid][pid] = top
        else:
            stats.passages_without_grade += 1
    return dict(qrels)


def _close_each(out: dict[int, Qrels], ms: list[int], stats: LabelStats, key: tuple[str, str] | None, seen: int,
                labels: list[int]) -> None:
    if key is None:
        return
    if seen == 0:
        stats.passages_without_grade += 1
        return
    for m, label in zip(ms, labels, strict=True):
        out[m][key[0]][key[1]] = label
    stats.passages += 1


def binarize(qrels: Qrels, min_grade: int) -> Qrels:
    """1 where the label reaches `min_grade`, else 0."""
    return {qid: {pid: int(label >= min_grade) for pid, label in per.items()} for qid, per in qrels.items()}


def _facet_from_id(query_id: str, question_id: str) -> str | None:
    """exam_pp CAR ids look like `query/facet/md5`: take the facet from the id when no bank says it."""
    if question_id.startswith(query_id + "/"):
        parts = question_id[len(query_id) + 1:].split("/")
        if len(parts) == 2:
            return parts[0]
    return None
