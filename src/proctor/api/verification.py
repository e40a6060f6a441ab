"""Verifying the rubric through the door (`api.verify`, `proctor verify`, RUBRIC 6.7): reports that let a person
check a grade set's questions against the human judgments."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from proctor.analyze.verify import REPORTS, build_report, render_markdown, render_text
from proctor.api.results import DataResult
from proctor.api.stores import check_judged_relevant
from proctor.errors import UsageError
from proctor.gradesets.resolve import resolve_grade_set
from proctor.options.analysis import VerifyOptions
from proctor.store import Store

VerifyReport = Literal["answers", "spurious", "uncovered", "distribution"]
"""answers: per question, the passages that answer it; spurious: questions most often answered by passages judged
non-relevant; uncovered: passages judged relevant that no question answers; distribution: grade histograms."""
VERIFY_REPORTS: tuple[str, ...] = REPORTS
DEFAULTS = VerifyOptions()
"""Every verification option at its default."""


@dataclass(frozen=True)
class Verification(DataResult):
    """A verification report as data (`data`, what `--format json` prints); `render(fmt)` is what `proctor verify
    --format FMT` prints."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json", "md")
    data: dict[str, Any]

    def as_text(self, fmt: str) -> str:
        """Lines a person reads (`text`) or Markdown."""
        return render_markdown(self.data) if fmt == "md" else render_text(self.data)


def verify(store: Store, report: VerifyReport, options: VerifyOptions = DEFAULTS, *, grade_set: str | None = None,
           method: str | None = None, model: str | None = None, bank: str | None = None,
           **changes: Any) -> Verification:
    """The `report` (one of `VERIFY_REPORTS`) of one grade set (`grade_set`, or the one `method`/`model`/`bank`
    narrow to): a question is answered at grade >= `options.min_grade`, judgments >= `judged_relevant` are
    relevant, `shown` passages per question (questions per query), only `query` when given; `changes` replace
    fields of `options` (`verify(store, "answers", min_grade=3)`)."""
    options = replace(options, **changes)  # its numbers checked when built
    if report not in REPORTS:
        raise UsageError(f"unknown report {report!r}; choose one of {', '.join(REPORTS)}")
    check_judged_relevant(store, options.judged_relevant)
    chosen = resolve_grade_set(store, grade_set, method, model, bank)
    return Verification(build_report(store, report, chosen, options))
