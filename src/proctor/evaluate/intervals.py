"""Bootstrap intervals of a leaderboard over topics: per system a percentile interval of its score and an
interval of its rank.

One bootstrap sample draws as many topics as the leaderboard has, with replacement, from the topics that any
system was scored on (the same draw for every system, so that ranks within a sample compare like with like).
A system's score in a sample is the mean of its per-topic values over the drawn topics it has (a drawn topic
it has no value for is left out of its mean, as the leaderboard leaves it out); a sample in which a system
has none of the drawn topics gives it no score and no rank. Its rank in a sample is 1 + the number of
systems with a strictly higher score there (ties share the best rank). The score interval is the percentile
interval of the sample scores (numpy's linear percentile); the rank interval the lower and upper percentiles
of the sample ranks taken as observed ranks (numpy's `lower` / `higher` methods), so it holds whole ranks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from proctor.options.intervals import IntervalOptions

DEFAULT_CONFIDENCE: float = IntervalOptions.confidence
DEFAULT_RESAMPLES: int = IntervalOptions.resamples
DEFAULT_SEED: int = IntervalOptions.seed


@dataclass(frozen=True)
class Interval:
    """One system's bootstrap intervals."""

    ci_low: float
    ci_high: float
    rank_low: int
    rank_high: int


@dataclass
class Intervals:
    """Every system's intervals and how they were made."""

    by_system: dict[str, Interval]
    confidence: float
    resamples: int
    seed: int
    topics: int
    overlapping: list[tuple[str, str]] = field(default_factory=list)
    """Pairs of systems (better first) whose score intervals overlap: the bootstrap cannot separate them."""

    def settings(self) -> dict[str, Any]:
        """How the intervals were made, for a report's description."""
        return {"method": "percentile bootstrap over topics; rank interval from the same samples",
                "confidence": self.confidence, "resamples": self.resamples, "seed": self.seed,
                "topics": self.topics, "pairs_not_separated": len(self.overlapping),
                "pairs_rank_intervals_overlap": len(rank_overlaps(self.by_system))}


def check_settings(confidence: float, resamples: int, seed: int = DEFAULT_SEED) -> None:
    """Refuse a confidence outside (0, 1), a number of resamples or a seed out of range
    (`proctor.options.numeric`)."""
    from proctor.options.numeric import check_numbers

    check_numbers({"confidence": confidence, "resamples": resamples, "seed": seed})


def bootstrap(per_query: dict[str, dict[str, float]], order: list[str], *, confidence: float = DEFAULT_CONFIDENCE,
              resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Intervals:
    """Score and rank intervals of the systems `order` (best first) from their per-topic values."""
    import numpy as np

    check_settings(confidence, resamples, seed)
    topics = sorted({q for s in order for q in per_query[s]})
    matrix = np.array([[per_query[s].get(q, np.nan) for q in topics] for s in order], dtype=float).reshape(
        len(order), len(topics))  # no system (a leaderboard of nothing) is an empty matrix, not a 1-d one
    means = sample_means(matrix, resamples, seed)
    ranks = _ranks(means)
    low, high = (1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100
    by_system = {}
    for i, system in enumerate(order):
        scores, places = means[i][~np.isnan(means[i])], ranks[i][~np.isnan(ranks[i])]
        if not len(scores):
            by_system[system] = Interval(math.nan, math.nan, 0, 0)
            continue
        by_system[system] = Interval(float(np.percentile(scores, low)), float(np.percentile(scores, high)),
                                     int(np.percentile(places, low, method="lower")),
                                     int(np.percentile(places, high, method="higher")))
    return Intervals(by_system, confidence, resamples, seed, len(topics), overlapping_pairs(order, by_system))


CHUNK = 1000
"""Resamples drawn at a time at most (an even number, so that the draws equal one draw of them all)."""
CHUNK_VALUES = 4_000_000
"""Values (systems × resamples × topics) a chunk holds at most: at TREC scale (thousands of topics) fewer
resamples are drawn at a time, so memory stays about 40 MB whatever the topics and --resamples are."""


def sample_means(matrix: Any, resamples: int, seed: int) -> Any:
    """Per system (row of `matrix`, systems × topics, NaN where it has no value) and bootstrap sample, the mean
    of its values over the drawn topics it has (NaN when none); drawn `CHUNK` samples at a time (also by
    `correlate --bootstrap`)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    systems, topics = matrix.shape
    means = np.full((systems, resamples), np.nan)
    chunk = max(2, min(CHUNK, CHUNK_VALUES // max(1, systems * topics)) // 2 * 2)  # even: the same draws
    present = ~np.isnan(matrix)
    values = np.where(present, matrix, 0.0)  # what nansum adds: the same sums, without a copy per chunk
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        picks = rng.integers(0, topics, size=(size, topics)) if topics else np.zeros((size, 0), int)
        counts = present[:, picks].sum(axis=2)  # systems × size
        with np.errstate(invalid="ignore", divide="ignore"):
            means[:, start:start + size] = np.where(counts > 0, values[:, picks].sum(axis=2) / np.maximum(counts, 1),
                                                    np.nan)
    return means


def _ranks(means: Any) -> Any:
    """Per sample, each system's rank: 1 + the systems scoring strictly higher (NaN where it has no score)."""
    import numpy as np
    from scipy.stats import rankdata

    filled = np.where(np.isnan(means), -np.inf, means)  # systems × resamples
    ranks = rankdata(-filled, method="min", axis=0).astype(float)
    return np.where(np.isnan(means), np.nan, ranks)


def overlapping_pairs(order: list[str], by_system: dict[str, Interval]) -> list[tuple[str, str]]:
    """Pairs (better first) whose score intervals share at least one value."""
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            x, y = by_system[a], by_system[b]
            if not (math.isnan(x.ci_low) or math.isnan(y.ci_low)) and x.ci_low <= y.ci_high and y.ci_low <= x.ci_high:
                out.append((a, b))
    return out


def rank_overlaps(by_system: dict[str, Interval]) -> list[tuple[str, str]]:
    """Pairs of systems whose rank intervals share a rank."""
    systems = [s for s, iv in by_system.items() if iv.rank_low]
    return [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]
            if by_system[a].rank_low <= by_system[b].rank_high and by_system[b].rank_low <= by_system[a].rank_high]
