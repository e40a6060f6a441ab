"""Rank correlation of leaderboards: Spearman's ρ and Kendall's τ-b computed by scipy (values ranked with
average ranks), τ_AP (Yilmaz, Aslam & Robertson 2008, top-weighted), TREC AutoJudge's `tauap_b`
(τ_AP-b, Moffat's tie-aware variant as autojudge-evaluate computes it) and top-heavy `kendall@10` (τ-b over
the official top 10), and bootstrap confidence intervals over queries."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from proctor.options.correlation import CorrelationOptions
from proctor.options.evaluation import EvaluationOptions


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n, ties sharing the average of their positions (scipy's `rankdata(method="average")`)."""
    from scipy.stats import rankdata

    return rankdata(values).tolist() if len(values) else []


def _varied(x: Sequence[float], y: Sequence[float]) -> bool:
    """At least 2 values on each side and neither side constant (else every coefficient is undefined)."""
    return len(x) >= 2 and len(set(x)) > 1 and len(set(y)) > 1


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r (scipy.stats.pearsonr); NaN when either side is constant or fewer than 2 values."""
    from scipy.stats import pearsonr

    return float(pearsonr(x, y).statistic) if _varied(x, y) else math.nan


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's ρ (scipy.stats.spearmanr: Pearson's r of the average ranks); NaN as `pearson`."""
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic) if _varied(x, y) else math.nan


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b (scipy.stats.kendalltau, ties in either ranking); NaN as `pearson`."""
    from scipy.stats import kendalltau

    return float(kendalltau(x, y, variant="b").statistic) if _varied(x, y) else math.nan


def tau_ap(predicted: Sequence[float], truth: Sequence[float]) -> float:
    """τ_AP of the predicted ranking against the true one (higher = better on both sides).

    The predicted list is read best first (ties in it broken by position in the input); item i counts the
    items above it that the truth also puts above it, a pair tied in the truth counting one half.
    """
    n = len(predicted)
    if n < 2 or len(set(predicted)) == 1 or len(set(truth)) == 1:
        return math.nan  # undefined, as ρ and τ are, when either side ranks every system the same
    order = sorted(range(n), key=lambda i: -predicted[i])
    total = 0.0
    for pos in range(1, n):
        item = order[pos]
        correct = 0.0
        for above in order[:pos]:
            if truth[above] > truth[item]:
                correct += 1
            elif truth[above] == truth[item]:
                correct += 0.5
        total += correct / pos
    return 2 * total / (n - 1) - 1


def tauap_b(predicted: Sequence[float], official: Sequence[float]) -> float:
    """AutoJudge's `tauap_b` (autojudge-evaluate `pyircore.tauap_b(official, predicted)`): the mean of τ_AP-b
    read from either side, higher = better on both, ties in the side read averaged (scipy ranks) and in the
    other broken by position; NaN below 2 systems or when either side ranks every system the same (undefined, as
    ρ and τ are there, though pyircore returns a number: −0.5 when the official side is all tied)."""
    import numpy as np

    if not _varied(predicted, official):
        return math.nan
    x, y = -np.asarray(official, dtype=float), -np.asarray(predicted, dtype=float)
    return float((_tauap_b_ties(x, y) + _tauap_b_ties(y, x)) / 2)


def _tauap_b_ties(x, y) -> float:
    """One direction of τ_AP-b: items ranked by `y` (ties grouped), each compared with the groups above it."""
    import numpy as np
    from scipy.stats import rankdata

    rx, ry, p = rankdata(x), rankdata(y, "ordinal"), rankdata(y, "min") - 1
    agree = np.sign(rx[:, None] - rx[None, :]) == np.sign(ry[:, None] - ry[None, :])
    above = ((p[None, :] < p[:, None]) & agree).sum(axis=1)
    total, not_top = 0.0, 0
    for i in range(len(p)):  # summed in item order, as pyircore sums
        if p[i] != 0:
            not_top += 1
            total += above[i] / p[i]
    return 0.0 if not_top == 0 else 2 / not_top * total - 1


TOP_K = 10
"""The official top k of `kendall@k` (AutoJudge reports kendall@10)."""


def kendall_at(k: int) -> Callable[[Sequence[float], Sequence[float]], float]:
    """AutoJudge's top-heavy `kendall@k`: Kendall's τ-b over the k systems the official leaderboard ranks
    best (stable on ties, as autojudge-evaluate sorts)."""

    def statistic(predicted: Sequence[float], official: Sequence[float]) -> float:
        top = sorted(range(len(official)), key=lambda i: official[i], reverse=True)[:k]
        return kendall_tau_b([predicted[i] for i in top], [official[i] for i in top])

    return statistic


@dataclass(frozen=True)
class Correlation:
    """Correlations between two aligned score lists."""

    spearman: float
    kendall: float
    tau_ap: float
    n: int


def correlate_scores(predicted: Sequence[float], official: Sequence[float]) -> Correlation:
    """All three coefficients; both lists hold scores where higher is better."""
    return Correlation(spearman(predicted, official), kendall_tau_b(predicted, official),
                       tau_ap(predicted, official), len(predicted))


def random_ties(predicted: Sequence[float], official: Sequence[float], *, repeats: int = CorrelationOptions.repeats,
                seed: int = CorrelationOptions.seed) -> Correlation:
    """001 §4.1.1: ties among the predicted scores broken at random, Spearman and Kendall averaged over
    `repeats` repetitions (τ_AP as with average ranks)."""
    import random

    rng = random.Random(seed)
    rhos, taus = [], []
    for _ in range(repeats):
        jitter = [rng.random() for _ in predicted]
        order = sorted(range(len(predicted)), key=lambda i: (predicted[i], jitter[i]))
        broken = [0.0] * len(predicted)
        for rank, i in enumerate(order):
            broken[i] = float(rank)
        rhos.append(spearman(broken, official))
        taus.append(kendall_tau_b(broken, official))
    mean = lambda values: math.fsum(values) / len(values) if values else math.nan  # noqa: E731
    return Correlation(mean(rhos), mean(taus), tau_ap(predicted, official), len(predicted))


STATISTICS: dict[str, Callable[[Sequence[float], Sequence[float]], float]] = {
    "spearman": spearman,
    "kendall": kendall_tau_b,
    "tau_ap": tau_ap,
    "tauap_b": tauap_b,
    f"kendall@{TOP_K}": kendall_at(TOP_K),
}
"""Every statistic of two aligned score lists (predicted, official) that `compare` reports, by the name it
reports it under (AutoJudge's names for `tauap_b` and `kendall@10`); `bootstrap_intervals` gives each of them
an interval, so a statistic added here gets one without more code."""


def _varied_rows(np, x, y):
    """Per row of the samples × systems arrays: `_varied` (≥ 2 systems, neither side constant)."""
    return (x.shape[1] >= 2) & (x.max(axis=1) != x.min(axis=1)) & (y.max(axis=1) != y.min(axis=1))


def _spearman_rows(np, x, y):
    """`spearman` of every row at once, scipy's arithmetic step by step (`spearmanr` is `np.corrcoef` of the
    average ranks): ranks and their deviations are halves, so the sums of products are exact in any order; then
    the same scaling by 1/(n − 1), the same two divisions and the same clip as `corrcoef`, so the same float."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    dx, dy = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    scale = np.true_divide(1, x.shape[1] - 1)
    cxy, cxx, cyy = (dx * dy).sum(axis=1) * scale, (dx * dx).sum(axis=1) * scale, (dy * dy).sum(axis=1) * scale
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.clip(cxy / np.sqrt(cyy) / np.sqrt(cxx), -1, 1)  # corrcoef's [1, 0]: / sd(y), then / sd(x)
    return np.where(_varied_rows(np, x, y), rho, np.nan)


def _signs(np, v):
    """Samples × n × n: the sign of v[i] − v[j] (−1, 0, 1) in each row."""
    return (v[:, :, None] > v[:, None, :]).astype(np.int8) - (v[:, :, None] < v[:, None, :]).astype(np.int8)


def _kendall_rows(np, x, y):
    """`kendall_tau_b` of every row at once: concordant minus discordant pairs and the pairs tied on each side,
    counted exactly, then scipy's formula (`con_minus_dis / sqrt(tot − xtie) / sqrt(tot − ytie)`, clipped)."""
    n = x.shape[1]
    sx, sy = _signs(np, x), _signs(np, y)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    con_minus_dis = (sx * sy)[:, upper].sum(axis=1, dtype=np.int64)
    xtie, ytie = (sx == 0)[:, upper].sum(axis=1), (sy == 0)[:, upper].sum(axis=1)
    tot = n * (n - 1) // 2
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.minimum(1.0, np.maximum(-1.0, con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)))
    return np.where(_varied_rows(np, x, y), tau, np.nan)


def _tau_ap_rows(np, predicted, truth):
    """`tau_ap` of every row at once: the same counts (whole and half pairs, exact) and the same sum, position by
    position in the same order."""
    rows, n = predicted.shape
    order = np.argsort(-predicted, axis=1, kind="stable")  # best first, ties by position, as `sorted`
    t = np.take_along_axis(truth, order, axis=1)
    earlier = np.tril(np.ones((n, n), dtype=bool), -1)  # [pos, above]: above < pos
    correct = (((t[:, None, :] > t[:, :, None]) + 0.5 * (t[:, None, :] == t[:, :, None])) * earlier).sum(axis=2)
    total = np.zeros(rows)
    for pos in range(1, n):
        total += correct[:, pos] / pos
    return np.where(_varied_rows(np, predicted, truth), 2 * total / max(n - 1, 1) - 1, np.nan)


def _tauap_b_rows(np, predicted, official):
    """`tauap_b` of every row at once (both directions of `_tauap_b_ties`, summed item by item as it sums)."""
    x, y = -official, -predicted
    return np.where(_varied_rows(np, predicted, official),
                    (_tauap_b_ties_rows(np, x, y) + _tauap_b_ties_rows(np, y, x)) / 2, np.nan)


def _tauap_b_ties_rows(np, x, y):
    """`_tauap_b_ties` of every row at once."""
    from scipy.stats import rankdata

    rx, ry, p = rankdata(x, axis=1), rankdata(y, "ordinal", axis=1), rankdata(y, "min", axis=1) - 1
    agree = _signs(np, rx) == _signs(np, ry)
    above = ((p[:, None, :] < p[:, :, None]) & agree).sum(axis=2)
    total, not_top = np.zeros(len(x)), np.zeros(len(x), dtype=np.int64)
    for i in range(x.shape[1]):
        counted = p[:, i] != 0
        not_top += counted
        total += np.divide(above[:, i], p[:, i], out=np.zeros(len(x)), where=counted)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(not_top == 0, 0.0, 2 / not_top * total - 1)


def _kendall_at_rows(k: int):
    """`kendall_at(k)` of every row at once: τ-b over each row's official top k (stable on ties)."""

    def statistic(np, predicted, official):
        top = np.argsort(-official, axis=1, kind="stable")[:, :k]
        return _kendall_rows(np, np.take_along_axis(predicted, top, axis=1), np.take_along_axis(official, top, axis=1))

    return statistic


BATCHED = {"spearman": _spearman_rows, "kendall": _kendall_rows, "tau_ap": _tau_ap_rows, "tauap_b": _tauap_b_rows,
           f"kendall@{TOP_K}": _kendall_at_rows(TOP_K)}
"""The statistics of `STATISTICS` computed for many resamples at once (samples × systems arrays, one value per
row), each giving exactly the float its per-resample function gives; a statistic without one here is computed
resample by resample."""


def most_undefined(level: float) -> float:
    """The largest share of resamples in which a statistic may be undefined for its percentile interval to be
    given: (1 − level) / 2 (2.5 % at 95 %). Beyond it, with the undefined resamples put at either end of the
    order, one percentile bound would fall on a resample where the statistic has no value."""
    return (1 - level) / 2


def resampling_problem(systems: int, queries: int) -> str | None:
    """Why queries cannot be resampled for intervals of rank correlations (None when they can): at least 2
    queries to draw from and 3 systems to rank."""
    if queries < 2:
        return f"has per-query values for {queries} {'query' if queries == 1 else 'queries'}: resampling queries " \
               "needs at least 2"
    if systems < 3:
        return f"has per-query values for {systems} system{'' if systems == 1 else 's'} in both leaderboards: an " \
               "interval of a rank correlation needs at least 3"
    return None


@dataclass(frozen=True)
class Resampled:
    """Bootstrap intervals of every statistic (None where more than `most_undefined` of the resamples left it
    undefined) and in how many resamples each was undefined (those are left out of its interval)."""

    intervals: dict[str, tuple[float, float] | None]
    undefined: dict[str, int]
    samples: int
    level: float


def bootstrap_intervals(
    predicted: dict[str, dict[str, float]], official: dict[str, dict[str, float]] | dict[str, float],
    *, samples: int = EvaluationOptions.bootstrap, seed: int = EvaluationOptions.seed, level: float = 0.95,
) -> Resampled:
    """Percentile bootstrap intervals of every statistic in `STATISTICS`, resampling queries with replacement.

    `predicted` holds per-query scores `{system: {query: value}}`; `official` holds per-query scores too
    (resampled with the same queries) or fixed scores `{system: value}`. A system's score in a sample is
    the mean over the sampled queries it has. The samples are drawn `intervals.CHUNK` at a time
    (`evaluate.intervals.sample_means`), so memory stays small whatever `samples` is. A resample in which a
    statistic is undefined is counted and left out: a side ranks every system the same, or a system has none of
    the drawn queries (it has no score there, as `leaderboard --intervals` gives it none; counting it 0 would
    rank it last on nothing); with more than `most_undefined(level)` of them, the statistic gets no interval.
    The statistics of many resamples are computed at once (`BATCHED`), each the float its function gives.
    """
    import numpy as np

    systems = sorted(predicted)
    queries = sorted({q for per in predicted.values() for q in per})
    if resampling_problem(len(systems), len(queries)) is not None:
        return Resampled({name: None for name in STATISTICS}, {}, samples, level)
    pred_means = _sample_means(np, predicted, systems, queries, samples, seed)
    if all(isinstance(v, dict) for v in official.values()):
        off_means = _sample_means(np, official, systems, queries, samples, seed)  # the same draws
    else:
        off_means = np.tile(np.array([official[s] for s in systems], dtype=float), (samples, 1))
    values = np.full((samples, len(STATISTICS)), np.nan)
    scored = np.flatnonzero(~(np.isnan(pred_means).any(axis=1) | np.isnan(off_means).any(axis=1)))  # all scored
    rows = max(1, BATCH_VALUES // len(systems) ** 2)
    for start in range(0, len(scored), rows):  # the resamples where some system has no mean stay undefined
        drawn = scored[start:start + rows]
        values[drawn] = _statistics(np, pred_means[drawn], off_means[drawn])
    low, high = (1 - level) / 2 * 100, (1 + level) / 2 * 100
    intervals, undefined = {}, {}
    for column, name in enumerate(STATISTICS):
        defined = values[:, column][~np.isnan(values[:, column])]
        undefined[name] = samples - len(defined)
        intervals[name] = (None if not len(defined) or undefined[name] > most_undefined(level) * samples else
                           (float(np.percentile(defined, low)), float(np.percentile(defined, high))))
    return Resampled(intervals, undefined, samples, level)


BATCH_VALUES = 1_000_000
"""Resamples × systems² that `bootstrap_intervals` computes its statistics for at a time at most (memory:
a few bytes to 8 bytes per value, whatever `samples` and the number of systems are)."""


def _statistics(np, predicted, official):
    """Resamples × `STATISTICS`: each statistic of each row of the two resamples × systems arrays (`BATCHED`
    where it has a batched form, else row by row)."""
    columns = []
    for name, statistic in STATISTICS.items():
        if name in BATCHED:
            columns.append(BATCHED[name](np, predicted, official))
        else:
            columns.append([statistic(p, o) for p, o in zip(predicted.tolist(), official.tolist(), strict=True)])
    return np.column_stack(columns)


def discordant_pairs(predicted: dict[str, float], official: dict[str, float]) -> list[dict[str, object]]:
    """Pairs of systems (in both) that the predicted leaderboard orders opposite to the official one (a tie on
    either side is no discordance), official order first: `{official_better, judge_better, official, judge}`
    with each side's two scores, official better system first."""
    common = sorted(set(predicted) & set(official), key=lambda s: (-official[s], s))
    out = []
    for i, a in enumerate(common):
        for b in common[i + 1:]:
            if official[a] > official[b] and predicted[a] < predicted[b]:
                out.append({"official_better": a, "judge_better": b, "official": [official[a], official[b]],
                            "judge": [predicted[a], predicted[b]]})
    return out


def _sample_means(np, per_query, systems, queries, samples, seed):
    """Samples × systems: each system's mean over the drawn queries it has (NaN when it has none of them)."""
    from proctor.evaluate.intervals import sample_means

    matrix = np.array([[per_query.get(s, {}).get(q, np.nan) for q in queries] for s in systems], dtype=float)
    return sample_means(matrix, samples, seed).T
