"""The meta-evaluation report (`proctor analyze`): a sweep of leaderboards correlated with the official one,
agreement with human judgments, per-query correlation and plots, written into a folder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.api.modes import Missing
from proctor.api.stores import check_judged_relevant
from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor
from proctor.evaluate.leaderboard_files import LeaderboardFile, read_official
from proctor.evaluate.measures import parse_measure
from proctor.options.evaluation import EvaluationOptions
from proctor.options.numeric import check_numbers
from proctor.outputs import folder_target
from proctor.store import Store

if TYPE_CHECKING:  # the report's modules (plots, HTML) load when a report is made
    from proctor.analyze.report import AnalyzeOptions, Report

DEFAULT_MEASURES = ("P@20", "nDCG@10", "RR", "AP", "Rprec")
"""The EXAM-Qrels measures `analyze_report` sweeps by default."""


@dataclass(frozen=True)
class AnalyzeRequest:
    """`proctor analyze`'s options, checked and the official leaderboard read before any store is opened
    (`analyze_request`); `run` writes the report of one store."""

    reference: LeaderboardFile
    options: AnalyzeOptions
    out: Path
    judged_relevant: int
    human_qrels: str | None = None
    human_topics: int | str | None = None
    seed: int = 0

    def run(self, store: Store) -> Report:
        """Write the report of this store into `out`; returns what was written and the warnings."""
        from proctor.analyze.report import analyze

        check_judged_relevant(store, self.judged_relevant)
        if not store.grades.grade_sets():
            raise UsageError(f"{store.path}: the store holds no grades to analyse")
        from dataclasses import replace

        options = replace(self.options, extra_sections=tuple(self._ppi_sections(store)))
        return analyze(store, self.reference, options, self.out)

    def _ppi_sections(self, store: Store) -> list:
        """With `human_qrels`: per grade set of passages, the prediction-powered leaderboard of the plotted
        measure at the plotted tau, as a report section."""
        if not self.human_qrels:
            return []
        from proctor.analyze.answers_section import is_answer_set
        from proctor.analyze.html_report import Section
        from proctor.analyze.tables import Table
        from proctor.api.labels import LabelChoice
        from proctor.api.ppi import ppi_leaderboard
        from proctor.markdown import escape
        from proctor.trust.ppi_board import rests_on, section_table

        sections = []
        for grade_set in store.grades.grade_sets():
            if not grade_set.grades or grade_set.intermediate or is_answer_set(grade_set):
                continue
            made = ppi_leaderboard(store, measures=[self.options.plot_measure or "P@20"],
                                   min_grade=self.options.plot_tau, labels=LabelChoice(grade_set=grade_set.id),
                                   human_qrels=self.human_qrels, human_topics=self.human_topics, seed=self.seed,
                                   judged_relevant=self.judged_relevant, floor=self.options.floor).boards()[0]
            caption, header, rows = section_table(made)
            table = Table(header, rows, caption=caption)
            summary, notes = rests_on(made), list(made["notes"])
            markdown = escape(summary) + "\n\n" + table.markdown() + "".join(f"\n> {escape(n)}\n" for n in notes)
            sections.append(Section(f"Prediction-powered leaderboard — {grade_set.method} / {grade_set.model} "
                                    f"({grade_set.id})", markdown, [(None, table)], [summary], notes))
        return sections


def analyze_request(official: str | Path, out: str | Path, *, judged_relevant: int = EvaluationOptions.judged_relevant,
                    measures: str | Sequence[str] = DEFAULT_MEASURES, budget: int = 20, missing: Missing = "zero",
                    per_query_measure: str = "nDCG@10", per_query_tau: int = 3, plot_measure: str | None = None,
                    plot_tau: int = 3, floor: Floor = DEFAULT_FLOOR, human_qrels: str | None = None,
                    human_topics: int | str | None = None, seed: int = 0) -> AnalyzeRequest:
    """The options of `analyze_report`, checked (measures, the plotted measure, the out folder) and the
    `official` leaderboard read; with `human_qrels` (and `human_topics`, `seed`) the report gains the
    prediction-powered leaderboard of the plotted measure (`leaderboard --human-qrels`)."""
    from proctor.analyze.report import AnalyzeOptions

    chosen = tuple(m.strip() for m in (measures.split(",") if isinstance(measures, str) else measures) if m.strip())
    for m in (*chosen, per_query_measure):
        parse_measure(m)
    if not chosen:
        raise UsageError("{measures} is empty", params=("measures",))
    plot = plot_measure or chosen[0]
    if parse_measure(plot).name not in {parse_measure(m).name for m in chosen}:
        raise UsageError(f"{{plot_measure}} {plot}: not one of {{measures}} {','.join(chosen)}",
                         params=("plot_measure", "measures"))
    folder_target(out, "{out}")
    reference = read_official(official)
    options = AnalyzeOptions(official_name=str(official), judged_relevant=judged_relevant, measures=chosen,
                             budget=budget, missing_cover=missing, per_query_measure=per_query_measure,
                             per_query_tau=per_query_tau, plot_measure=plot, plot_tau=plot_tau, floor=floor)
    if human_topics is not None and not human_qrels:
        raise UsageError("{human_topics} needs {human_qrels}", params=("human_topics", "human_qrels"))
    if human_qrels:
        from proctor.api.ppi import per_topic_spec
        from proctor.trust.ppi_board import parse_topics

        per_topic_spec(plot)
        parse_topics(human_topics)
        check_numbers({"seed": seed})
    return AnalyzeRequest(reference, options, Path(out), judged_relevant, human_qrels, human_topics, seed)


def analyze_report(store: Store, official: str | Path, out: str | Path, *,
                   judged_relevant: int = EvaluationOptions.judged_relevant,
                   measures: str | Sequence[str] = DEFAULT_MEASURES, budget: int = 20, missing: Missing = "zero",
                   per_query_measure: str = "nDCG@10", per_query_tau: int = 3, plot_measure: str | None = None,
                   plot_tau: int = 3, floor: Floor = DEFAULT_FLOOR) -> Report:
    """Sweep τ = 1..5 × `measures` (a list or `"P@20,nDCG@10"`) for EXAM-Qrels and τ = 1..5 for EXAM-Cover
    (`budget`, `missing`) for every grade set, correlate each leaderboard with the `official` one (a file),
    compute agreement with the judgments (>= `judged_relevant`), correlate query by query (`per_query_measure`
    at `per_query_tau`), draw the plots (`plot_measure`, default the first measure, at `plot_tau`) and write it
    all into the folder `out`; returns what was written and the warnings."""
    return analyze_request(official, out, judged_relevant=judged_relevant, measures=measures, budget=budget,
                           missing=missing, per_query_measure=per_query_measure, per_query_tau=per_query_tau,
                           plot_measure=plot_measure, plot_tau=plot_tau, floor=floor).run(store)
