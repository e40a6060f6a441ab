"""The meta-evaluation report (`api.analyze`, `proctor analyze`): a sweep of leaderboards correlated with the
official one, agreement with human judgments, per-query correlation and plots, written into a folder. Its
options are one model, `AnalysisOptions`; `analyze_request` (command plumbing) checks them before a store is
opened."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.api.stores import check_judged_relevant
from proctor.errors import UsageError
from proctor.evaluate.leaderboard_files import LeaderboardFile, read_official
from proctor.options.analysis import AnalysisOptions
from proctor.options.model import check_model
from proctor.outputs import folder_target
from proctor.store import Store

if TYPE_CHECKING:  # the report's modules (plots, HTML) load when a report is made
    from proctor.analyze.report import AnalysisReport

DEFAULTS = AnalysisOptions()
"""Every analysis option at its default."""


@dataclass(frozen=True)
class AnalyzeRequest:
    """`proctor analyze`'s options, checked and the official leaderboard read before any store is opened
    (`analyze_request`); `run` writes the report of one store."""

    reference: LeaderboardFile
    official: str
    options: AnalysisOptions
    out: Path

    def run(self, store: Store) -> AnalysisReport:
        """Write the report of this store into `out`; returns what was written and the warnings."""
        from proctor.analyze.report import analyze as write_report

        check_judged_relevant(store, self.options.judged_relevant)
        if not store.grades.grade_sets():
            raise UsageError(f"{store.path}: the store holds no grades to analyse")
        return write_report(store, self.reference, self.official, self.options, self.out,
                            extra_sections=tuple(self._ppi_sections(store)))

    def _ppi_sections(self, store: Store) -> list:
        """With `human_qrels`: per grade set of passages, the prediction-powered leaderboard of the plotted
        measure at the plotted tau, as a report section."""
        options = self.options
        if not options.human_qrels:
            return []
        from proctor.analyze.answers_section import is_answer_set
        from proctor.analyze.html_report import Section
        from proctor.analyze.tables import Table
        from proctor.api.labels import LabelChoice
        from proctor.api.ppi import ppi_leaderboard
        from proctor.evaluate.coverage import Floor
        from proctor.markdown import escape
        from proctor.trust.ppi_board import rests_on, section_table

        sections = []
        for grade_set in store.grades.grade_sets():
            if not grade_set.grades or grade_set.intermediate or is_answer_set(grade_set):
                continue
            made = ppi_leaderboard(store, measures=[options.plotted], min_grade=options.plot_tau,
                                   labels=LabelChoice(grade_set=grade_set.id), human_qrels=options.human_qrels,
                                   human_topics=options.human_topics, seed=options.seed,
                                   judged_relevant=options.judged_relevant,
                                   floor=Floor(options.floor_queries, options.floor_graded)).boards()[0]
            caption, header, rows = section_table(made)
            table = Table(header, rows, caption=caption)
            summary, notes = rests_on(made), list(made["notes"])
            markdown = escape(summary) + "\n\n" + table.markdown() + "".join(f"\n> {escape(n)}\n" for n in notes)
            sections.append(Section(f"Prediction-powered leaderboard — {grade_set.method} / {grade_set.model} "
                                    f"({grade_set.id})", markdown, [(None, table)], [summary], notes))
        return sections


def analyze_request(official: str | Path, out: str | Path,
                    options: AnalysisOptions = DEFAULTS) -> AnalyzeRequest:
    """The options of `analyze`, checked (the model's every field, as when it was built: measures, the plotted
    measure, numbers; the out folder, the prediction-powered section's) and the `official` leaderboard read."""
    check_model(options, every=True)  # a model built before the door registered the measure checks, too
    plot = options.plotted
    folder_target(out, "{out}")
    reference = read_official(official)
    if options.human_qrels:
        from proctor.api.ppi import per_topic_spec
        from proctor.trust.ppi_board import parse_topics

        per_topic_spec(plot)
        parse_topics(options.human_topics)
    return AnalyzeRequest(reference, str(official), replace(options, plot_measure=plot), Path(out))


def analyze(store: Store, official: str | Path, out: str | Path, options: AnalysisOptions = DEFAULTS,
            **changes: Any) -> AnalysisReport:
    """The meta-evaluation of a store, written into the folder `out`: sweep τ = 1..5 × `options.measures` for
    EXAM-Qrels and τ = 1..5 for EXAM-Cover (`budget`, `missing`) for every grade set, correlate each leaderboard
    with the `official` one (a file), compute agreement with the judgments (>= `judged_relevant`), correlate
    query by query (`per_query_measure` at `per_query_tau`) and draw the plots (`plot_measure`, default the first
    measure, at `plot_tau`); with `human_qrels` the prediction-powered leaderboard of the plotted measure too.
    `changes` replace fields of `options` (`analyze(store, f, out, measures="P@20,AP")`). Returns what was
    written and the warnings."""
    return analyze_request(official, out, replace(options, **changes)).run(store)
