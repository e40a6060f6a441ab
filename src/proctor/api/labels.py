"""Labels: which grade set a command reads (`LabelChoice`) and the EXAM-Qrels made from its grades
(`proctor qrels`), with what they rest on."""

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
from proctor.records import GradeSet
from proctor.store import Store

__all__ = ["DEFAULT_FLOOR", "DEFAULT_MIN_GRADED", "DEFAULT_MIN_QUERIES", "ANY_LABELS", "Coverage", "Floor",
           "LabelChoice", "QrelsReport", "labels_coverage", "qrels", "qrels_report"]

Qrels = dict[str, dict[str, int]]
"""Labels: `{query_id: {passage_id: label}}`."""


@dataclass(frozen=True)
class LabelChoice:
    """Which grade set, and how its grades become labels."""

    grade_set: str | None = None
    method: str | None = None
    model: str | None = None
    bank: str | None = None
    min_questions: int = 1
    facets: bool = False

    def resolve(self, store: Store) -> GradeSet:
        """The one grade set this choice names (else a UsageError listing the candidates)."""
        return resolve_grade_set(store, self.grade_set, self.method, self.model, self.bank)

    def rule(self) -> str:
        """How a passage's grades become its label, in words."""
        return "max over questions" if self.min_questions == 1 else f"{self.min_questions}-th largest grade"


ANY_LABELS = LabelChoice()
"""The default choice: the store's only grade set (else a UsageError listing them), labels = max over questions."""


def qrels(store: Store, labels: LabelChoice = ANY_LABELS, *, binary_min_grade: int | None = None,
          stats: LabelStats | None = None) -> tuple[GradeSet, Qrels]:
    """EXAM-Qrels of one grade set (binary at `binary_min_grade` when given)."""
    grade_set = labels.resolve(store)
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
    coverage: Coverage
    stats: LabelStats = field(default_factory=LabelStats)

    def to_json(self) -> JSON:
        """The grade set, how the labels were made (`summary`), their coverage and the labels themselves
        (`qrels`: `{query: {passage: label}}`)."""
        return json.loads(json_text({"grade_set": self.grade_set.as_dict(), "summary": self.summary(),
                                     "binary_min_grade": self.binary_min_grade,
                                     "coverage": self.coverage.as_dict(), "qrels": self.qrels}))

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


def qrels_report(store: Store, labels: LabelChoice = ANY_LABELS, *, binary: bool = False,
                 min_grade: int | None = None, floor: Floor = DEFAULT_FLOOR) -> QrelsReport:
    """What `proctor qrels` writes: EXAM-Qrels of one grade set, graded, or 1/0 at `min_grade` with `binary`;
    with the counts of how they were made and their coverage (judged against `floor`)."""
    if binary and min_grade is None:
        raise UsageError("{binary} needs {min_grade} T", params=("binary", "min_grade"))
    if min_grade is not None and not binary:
        raise UsageError("{min_grade} applies with {binary} only (graded labels keep every grade)",
                         params=("min_grade", "binary"))
    stats = LabelStats()
    grade_set, made = qrels(store, labels, binary_min_grade=min_grade, stats=stats)
    coverage = labels_coverage(store, grade_set, made, floor=floor)
    return QrelsReport(grade_set, made, labels, min_grade, coverage, stats)
