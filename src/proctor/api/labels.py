"""Labels: which grade set a command reads (`LabelChoice`, resolved by `grade_set_of`) and the EXAM-Qrels made
from its grades (`labels`; `proctor qrels`), with what they rest on."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import ClassVar

from proctor.api.results import JSON, json_text
from proctor.errors import UsageError
from proctor.evaluate import stored_coverage
from proctor.evaluate.coverage import DEFAULT_FLOOR, DEFAULT_MIN_GRADED, DEFAULT_MIN_QUERIES, Coverage, Floor
from proctor.evaluate.labels import LabelStats, binarize
from proctor.evaluate.sources import exam_qrels
from proctor.gradesets.ensemble import check_min_grade
from proctor.gradesets.resolve import resolve_grade_set
from proctor.io.trec import write_qrels
from proctor.options.evaluation import QrelsOptions
from proctor.options.selection import ANY_LABELS, LabelChoice
from proctor.records import GradeSet
from proctor.store import Store

__all__ = ["DEFAULT_FLOOR", "DEFAULT_MIN_GRADED", "DEFAULT_MIN_QUERIES", "ANY_LABELS", "Coverage", "Floor",
           "LabelChoice", "QrelsReport", "grade_set_of", "labels", "labels_coverage", "qrels", "qrels_report"]

Qrels = dict[str, dict[str, int]]
"""Labels: `{query_id: {passage_id: label}}`."""


def grade_set_of(store: Store, labels: LabelChoice = ANY_LABELS) -> GradeSet:
    """The one grade set a choice names (else a UsageError listing the candidates)."""
    return resolve_grade_set(store, labels.grade_set, labels.method, labels.model, labels.bank)


def qrels(store: Store, labels: LabelChoice = ANY_LABELS, *, binary_min_grade: int | None = None,
          stats: LabelStats | None = None) -> tuple[GradeSet, Qrels]:
    """EXAM-Qrels of one grade set (binary at `binary_min_grade` when given), without their coverage."""
    grade_set = grade_set_of(store, labels)
    check_min_grade(grade_set, binary_min_grade)
    result = exam_qrels(store, grade_set, min_questions=labels.min_questions, facets=labels.facets, stats=stats)
    return grade_set, binarize(result, binary_min_grade) if binary_min_grade is not None else result


def labels_coverage(store: Store, grade_set: GradeSet | None, labels: dict, pool: dict | None = None, *,
                    floor: Floor = DEFAULT_FLOOR) -> Coverage:
    """What labels (qrels of a grade set, or judgments) rest on: their queries, and the pool pairs (`pool`,
    default: every passage the stored runs rank) that have a label, judged against `floor`."""
    return stored_coverage.labels_coverage(store, grade_set, labels, pool, floor=floor)


@dataclass(frozen=True)
class QrelsReport:
    """EXAM-Qrels with how they were made (`summary`) and what they rest on (`coverage`)."""

    formats: ClassVar[tuple[str, ...]] = ("trec",)
    grade_set: GradeSet
    qrels: Qrels
    labels: LabelChoice
    binary_min_grade: int | None
    coverage: Coverage | None
    """What the labels rest on (None when `labels` was asked for none)."""
    stats: LabelStats = field(default_factory=LabelStats)

    def to_json(self) -> JSON:
        """The grade set, how the labels were made (`summary`), their coverage and the labels themselves
        (`qrels`: `{query: {passage: label}}`)."""
        return json.loads(json_text({"grade_set": self.grade_set.as_dict(), "summary": self.summary(),
                                     "binary_min_grade": self.binary_min_grade,
                                     "coverage": self.coverage.as_dict() if self.coverage is not None else None,
                                     "qrels": self.qrels}))

    def render(self, fmt: str | None = None) -> str:
        """The labels as trec_eval qrels lines (`qid 0 docid label`; the only format)."""
        if fmt not in (None, "trec"):
            raise UsageError(f"unknown format {fmt!r}: trec")
        out = io.StringIO()
        write_qrels(self.qrels, out)
        return out.getvalue()

    def summary(self) -> str:
        """Where the labels come from and how many there are, in one line."""
        g, stats = self.grade_set, self.stats
        binary = f", binary >= {self.binary_min_grade}" if self.binary_min_grade is not None else ""
        return (f"qrels from grade set {g.id} (method={g.method} model={g.model} bank={g.bank_label} "
                f"prompt={g.prompt_version}; {self.labels.rule()}{binary}): {stats.passages} passages in "
                f"{len(self.qrels)} queries; {stats.failed} failed grades left out, {stats.passages_without_grade} "
                "passages without any usable grade")


def labels(store: Store, choice: LabelChoice = ANY_LABELS, *, binary_min_grade: int | None = None,
           floor: Floor = DEFAULT_FLOOR, coverage: bool = True) -> QrelsReport:
    """EXAM-Qrels of one grade set (`choice`), graded or 1/0 at `binary_min_grade`, with the counts of how they
    were made and what they rest on (`coverage`, judged against `floor`; `coverage=False`: not counted, which
    spares reading the pool): `.qrels` is `{query: {passage: label}}`, `render()` trec_eval's qrels lines."""
    stats = LabelStats()
    grade_set, made = qrels(store, choice, binary_min_grade=binary_min_grade, stats=stats)
    rests_on = labels_coverage(store, grade_set, made, floor=floor) if coverage else None
    return QrelsReport(grade_set, made, choice, binary_min_grade, rests_on, stats)


GRADED = QrelsOptions()
"""`proctor qrels` without `--binary`: graded labels."""


def qrels_report(store: Store, choice: LabelChoice = ANY_LABELS, options: QrelsOptions = GRADED, *,
                 floor: Floor = DEFAULT_FLOOR) -> QrelsReport:
    """What `proctor qrels` writes: `labels`, graded, or 1/0 at `min_grade` with `binary` (`options`)."""
    if options.binary and options.min_grade is None:
        raise UsageError("{binary} needs {min_grade} T", params=("binary", "min_grade"))
    if options.min_grade is not None and not options.binary:
        raise UsageError("{min_grade} applies with {binary} only (graded labels keep every grade)",
                         params=("min_grade", "binary"))
    return labels(store, choice, binary_min_grade=options.min_grade if options.binary else None, floor=floor)
