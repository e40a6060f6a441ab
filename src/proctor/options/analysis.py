"""The analysis options: what `proctor analyze` sweeps, correlates and draws (`AnalysisOptions`) and what
`proctor verify` shows (`VerifyOptions`), one field each, from which those commands' flags are derived and
which `api.analyze` and `api.verify` take. Options the evaluation declares (the judged-relevant level, the
cover budget, the seed, the coverage floors) are borrowed from `EvaluationOptions`: one default each."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.errors import UsageError
from proctor.options.evaluation import EvaluationOptions
from proctor.options.kinds import canonical
from proctor.options.model import GRADE, NOT_IN_TOML, Checked, borrow, int_in, option

MEASURES = ("P@20", "nDCG@10", "RR", "AP", "Rprec")
"""The EXAM-Qrels measures `analyze` sweeps by default."""


def measure_list(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """`"P@20,nDCG@10"` or a list of measure names: the names, stripped, empty ones left out."""
    parts = value.split(",") if isinstance(value, str) else value
    return tuple(str(m).strip() for m in parts if str(m).strip())


@dataclass(frozen=True, kw_only=True)
class ReportFiles(Checked):
    """What `proctor analyze` reads and where it writes (both required on its command line; `api.analyze` takes them
    as its `official` and `out` parameters)."""

    official: str | None = option(metavar="FILE", toml=NOT_IN_TOML,
                                  help="official leaderboard: JSON {{run: rank}} or TSV of scores")
    out: str | None = option(metavar="DIR", toml=NOT_IN_TOML, help="folder for the report (created if missing)")


@dataclass(frozen=True, kw_only=True)
class AnalysisOptions(Checked):
    """Every option of the meta-evaluation report (`api.analyze`, `proctor analyze`); it sweeps τ = 1..5."""

    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    measures: tuple[str, ...] = option(MEASURES, parse=measure_list, cli_default=",".join(MEASURES), kind="measure",
                                       help="comma-separated measures")
    budget: int = borrow(EvaluationOptions, "budget")
    missing: str = borrow(EvaluationOptions, "missing")
    per_query_measure: str = option("nDCG@10", kind="measure", help="measure of the per-query correlation")
    per_query_tau: int = option(3, parse=GRADE, help="τ of the per-query correlation (binary measures)")
    plot_measure: str | None = option(kind="measure", help="EXAM-Qrels measure of the scatter and renormalised plots "
                                      "(default: the first of --measures)")
    plot_tau: int = option(3, parse=GRADE, help="τ of the plotted EXAM-Qrels and EXAM-Cover leaderboards "
                           "(default {default})")
    human_qrels: str | None = option(metavar="official|reviewers|FILE",
                                      help="add the prediction-powered leaderboard of the plotted measure (as "
                                      "`leaderboard --human-qrels`; docs/trust.md)")
    human_topics: int | str | None = option(metavar="N|T1,T2,...", parse=str,
                                            help="--human-qrels: draw N judged topics (seeded by --seed) or name "
                                            "them (default: every topic the humans judged)")
    seed: int = borrow(EvaluationOptions, "seed")
    floor_queries: int = borrow(EvaluationOptions, "floor_queries")
    floor_graded: float = borrow(EvaluationOptions, "floor_graded")

    def __post_init__(self) -> None:
        object.__setattr__(self, "measures", measure_list(self.measures))  # "P@20,AP" as well as a list
        super().__post_init__()

    def check(self) -> None:
        """Refuse no measures, a plotted measure not among them, human topics without human judgments."""
        if not self.measures:
            raise UsageError("{measures} is empty", params=("measures",))
        plot = self.plotted
        known = [canonical("measure", m) for m in (plot, *self.measures)]
        if None not in known and known[0] not in known[1:]:
            raise UsageError(f"{{plot_measure}} {plot}: not one of {{measures}} {','.join(self.measures)}",
                             params=("plot_measure", "measures"))
        if self.human_topics is not None and not self.human_qrels:
            raise UsageError("{human_topics} needs {human_qrels}", params=("human_topics", "human_qrels"))

    @property
    def plotted(self) -> str:
        """The measure the plots show: `plot_measure`, else the first of `measures`."""
        return self.plot_measure or self.measures[0]


@dataclass(frozen=True, kw_only=True)
class VerifyOptions(Checked):
    """Every option of the rubric's verification reports (`api.verify`, `proctor verify`) but the grade set's
    choice: when a question is answered, when a judgment is relevant, how much to show."""

    min_grade: int = borrow(EvaluationOptions, "min_grade")
    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    shown: int = option(5, flag="--limit", parse=int_in(1),
                        help="passages per question / questions per query (default {default})")
    query: str | None = option(help="only this query")

