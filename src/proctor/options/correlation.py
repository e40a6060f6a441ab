"""The correlation options: how a leaderboard is read and correlated with the official one (the measure read,
the official leaderboard computed from qrels, the bootstrap over queries, tied scores) — the flags of
`correlate` and the parameters of `api.correlate`; and the agreement options (`agreement`, `api.agreement`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import Checked, borrow, int_in, option
from proctor.papers import EXAM

TIES = ("average", "random")
"""The words `ties` takes (`api.types.Ties`)."""


@dataclass(frozen=True, kw_only=True)
class CorrelationOptions(Checked):
    """How a leaderboard meets the official one: the `measure` read from a leaderboard file holding several
    (with `official_qrels` also the measure computed), the official leaderboard's `official_measure`, or
    `official_qrels` with the runs of `store` or `runs`; `judged_relevant`; `bootstrap` samples over queries
    (None: the default, with no warning when the file has no per-query values); `seed`; tied predicted scores
    (`ties`, `repeats`)."""

    official_measure: str | None = option(
        metavar="M", help="with --official: the measure read from the official file when it holds several (e.g. "
        "trec_eval's output of the official runs)")
    official_qrels: str | None = option(metavar="FILE", help="compute the official leaderboard from these qrels")
    measure: str | None = option(
        help="the measure read from LEADERBOARD when it holds several (trec_eval or ir_measures name); with "
        "--official-qrels also the measure computed, e.g. nDCG@10")
    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    store: str | None = option(help="with --official-qrels: take the runs from this store")
    runs: Sequence[str] | None = option(nargs="+", metavar="DIR|FILE",
                                        help="with --official-qrels: take the runs from files")
    bootstrap: int | None = borrow(EvaluationOptions, "bootstrap")
    seed: int = borrow(EvaluationOptions, "seed", cli=True,
                       help="seed of the bootstrap and of random tie-breaking (default {default})")
    ties: str = option("average", choices=TIES,
                       help="tied predicted scores: average ranks as scipy (default), or broken at random and the "
                       f"correlations averaged over --repeats repetitions ({EXAM}, §4.1.1)")
    repeats: int = option(10, parse=int_in(1),
                          help="--ties random: repetitions (default {default}, at most 100000)")


@dataclass(frozen=True, kw_only=True)
class AgreementOptions(Checked):
    """Which grade sets agree with the store's human judgments and how: a judgment >= `judged_relevant` is
    relevant; labels from at least m questions for every m of `min_questions` (a list, or `"1,2,5"`); binary
    `merges` of the predicted labels (`[">=3", "=5"]` or `">=3,=5"`; None: the method's scale); every grade set,
    or those of `grade_set`, `method`, `model`, `bank`."""

    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    merges: str | Sequence[str] | None = option(
        help="binary merges of predicted labels, e.g. >=3,=5 (default: the method's scale: 0-5 grades >=1,>=3,>=4,"
        "=5; a 0-H scale every >=t; rules beyond a scale are left out and listed)")
    min_questions: str | Sequence[int] = option(
        (1, 2, 5), cli_default="1,2,5", help="values of m (default {default}; methods without questions: 1 only)")
    grade_set: str | None = option(metavar="ID",
                                   help="only this grade set (default: every grade set, one column each)")
    method: str | None = option(help="only grade sets of this method")
    model: str | None = option(help="only grade sets of this model")
    bank: str | None = option(metavar="NAME[@VERSION]", help="only grade sets of this bank (version)")
