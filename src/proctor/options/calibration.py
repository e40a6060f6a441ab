"""The calibration options: which human judgments a judge is calibrated on, on how many topics, how often, and
what is reported (`calibrate`, `api.calibrate`); and the prediction-powered options (`leaderboard --human-qrels`,
`calibrate --ppi`, `api.ppi`): which humans correct the judge, on which topics, at which confidence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from proctor.errors import UsageError
from proctor.options.correlation import CorrelationOptions
from proctor.options.evaluation import LEADERBOARD_MEASURE, EvaluationOptions
from proctor.options.intervals import IntervalOptions
from proctor.options.kinds import canonical
from proctor.options.model import Checked, borrow, default, int_in, option

HUMANS = "official|reviewers|official+reviewers|FILE"
"""The human judgments a command takes: imported, recorded by reviewers, both, or a qrels file."""


@dataclass(frozen=True, kw_only=True)
class PPIOptions(Checked):
    """A prediction-powered leaderboard: the judge's labels corrected by `human_qrels` (official, reviewers,
    official+reviewers or a qrels file; a judgment >= `judged_relevant` relevant) on `human_topics` (a number of
    topics drawn with `seed`, topic ids, or None: every topic the humans judged), with `confidence` intervals."""

    human_qrels: str = option(
        "official", metavar="official|reviewers|FILE",
        help="prediction-powered leaderboard (docs/trust.md): the judge's scores on every topic corrected by human "
        "minus judge on the human-judged topics, with intervals (PPI/PPI++), beside judge-only and human-only; "
        "official, reviewers (verdicts in `proctor review`), official+reviewers or a qrels file")
    human_topics: int | str | Sequence[str] | None = option(
        metavar="N|T1,T2,...", parse=str,
        help="--human-qrels: draw N judged topics at random (seeded by --seed) or name them (default: every topic "
        "the humans judged)")
    confidence: float = borrow(IntervalOptions, "confidence",
                               help="confidence level of the intervals (default {default})")
    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    seed: int = borrow(EvaluationOptions, "seed", cli=True, help="seed of the topics drawn (default {default})")


@dataclass(frozen=True, kw_only=True)
class CalibrationOptions(Checked):
    """Calibration on a few human labels of a `grade_set` (None: the store's only one): the judgments (`qrels`),
    the `budgets` (numbers of judged topics to learn from: a list or `"1,2,5"`), `repeats` samples per budget
    (`seed`), the humans' level `judged_relevant`, the leaderboard `measure` (P@k), a `plot` (a .png file); with
    `ppi` the validation of prediction-powered leaderboards instead (`min_grade`: the judge's threshold,
    `confidence`)."""

    grade_set: str | None = option(metavar="ID",
                                   help="the grade set (id or unique prefix; default: the only one)")
    qrels: str = borrow(PPIOptions, "human_qrels", metavar=HUMANS, help="the human judgments (default {default})")
    budgets: str | Sequence[int] = option(
        (5,), flag="--budget", metavar="N[,N...]", help="judged topics to learn from, e.g. 5 or 1,2,3,5,10,20")
    repeats: int = borrow(CorrelationOptions, "repeats", metavar="R",
                          help="samples per budget (default {default}, at most 100000)")
    seed: int = borrow(EvaluationOptions, "seed", cli=True, help="random seed of the samples (default {default})")
    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    measure: str = option(LEADERBOARD_MEASURE,
                          help="the leaderboard whose Kendall tau is reported: P@k (default {default})")
    plot: str | None = option(metavar="FILE.png", help="also draw the curve as a PNG (PDF and SVG beside it)")
    ppi: bool = option(False, action="store_true",
                       help="validate prediction-powered leaderboards instead (`leaderboard --human-qrels`): per "
                       "budget, coverage and width of their intervals over --repeats draws of judged topics, beside "
                       "human-only and judge-only (JSON `curve_ppi`; docs/trust.md)")
    min_grade: int | None = option(metavar="T", parse=int_in(0),
                                   help="--ppi: the judge's relevance threshold for binary measures (as "
                                   "`leaderboard --min-grade`)")
    confidence: float = borrow(PPIOptions, "confidence", help="--ppi: confidence level (default {default})")

    def check(self) -> None:
        """Refuse a `min_grade` or a `confidence` of its own without `ppi`, and a `measure` that is not a measure
        over labels (with `ppi`) or not precision at a depth, P@k (without it)."""
        own = self.min_grade is not None or self.confidence not in (None, default(CalibrationOptions, "confidence"))
        if own and not self.ppi:
            raise UsageError("{min_grade} and {confidence} apply to {ppi} only",
                             params=("min_grade", "confidence", "ppi"))
        if self.ppi:
            canonical("measure", self.measure, "measure")
            return
        try:
            name = canonical("measure", self.measure)
        except UsageError:
            name = ""  # not a measure at all: the same words as one that is not P@k
        if name is not None and not PRECISION_AT_K.fullmatch(name):
            raise UsageError(f"{{measure}} {self.measure}: calibrate's leaderboard is precision at a depth, P@k "
                             "(e.g. P@20)", params=("measure",))


PRECISION_AT_K = re.compile(r"P@[0-9]+")
"""The canonical name of precision at a depth (`P.20`, `P_20` and `P@20` all read `P@20`; `P(rel=2)@20` does not
match: calibrate's relevance level is `judged_relevant`)."""
