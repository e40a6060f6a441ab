"""The significance options: which paired tests compare the systems of a leaderboard, how their p-values are
corrected, the level, the baseline and the randomization test's draws — the flags of `compare` and
`leaderboard --significance`, and the parameters of `api.compare`."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import Checked, borrow, int_in, option

TESTS = ("both", "t", "randomization")
"""The words `test` takes (`api.types.Tests`)."""
CORRECTIONS = ("holm", "bonferroni", "none")
"""The words `correction` takes (`api.types.Correction`, `stats.correction.CORRECTIONS`)."""


@dataclass(frozen=True, kw_only=True)
class SignificanceOptions(Checked):
    """How systems are compared: which `test` runs (`both`, `t`, `randomization`), the `correction` of each test's
    p-values, the level `alpha`, a `baseline` to compare every system with (default: all pairs), and the
    randomization test's `samples` and `seed`; the `measure` read from a leaderboard file that holds several."""

    test: str = option("both", choices=TESTS, help="paired t-test, randomization test, or both (default)")
    correction: str = option("holm", choices=CORRECTIONS,
                             help="multiple-comparison correction of each test's p-values (default {default})")
    alpha: float = option(0.05, help="significance level (default {default})")
    baseline: str | None = option(metavar="RUN", help="compare every system with this one only (default: all pairs)")
    samples: int = option(10_000, parse=int_in(100), metavar="N",
                          help="randomization test: random sign assignments (default {default}, at most 100000; "
                          "all 2^n when that is fewer)")
    seed: int = borrow(EvaluationOptions, "seed", cli=True, help="randomization test: seed (default {default})")
    measure: str | None = option(help="the measure to read when LEADERBOARD holds several (trec_eval or ir_measures "
                                 "name)")

    def tests(self) -> tuple[str, ...]:
        """The tests that run."""
        return ("t", "randomization") if self.test == "both" else (self.test,)
