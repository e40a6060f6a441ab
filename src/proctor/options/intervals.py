"""Bootstrap intervals over topics (`--intervals/--confidence/--resamples`; the seed is the evaluation's)."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import Checked, borrow, int_in, option


@dataclass(frozen=True, kw_only=True)
class IntervalOptions(Checked):
    """Whether a leaderboard gets bootstrap score and rank intervals, and how they are drawn."""

    intervals: bool = option(
        False, action="store_true",
        help="bootstrap over topics: each system's score interval (percentile) and rank interval; TSV gains "
        "ci_low ci_high rank_low rank_high, JSON those keys per system (seeded by --seed)")
    confidence: float = option(0.95, metavar="C", help="--intervals: confidence level (default {default})")
    resamples: int = option(1000, parse=int_in(1), metavar="B",
                            help="--intervals: bootstrap samples (default {default}, at most 100000)")
    seed: int = borrow(EvaluationOptions, "seed")
