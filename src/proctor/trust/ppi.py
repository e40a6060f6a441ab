"""Prediction-powered estimates of the humans' score over all topics from a few human-judged topics (the numerics).

A system has the judge's per-topic scores on all N topics it was scored on and the humans' per-topic scores on
n of them, drawn at random without replacement. The target is the humans' mean over the N topics. The estimate
(Angelopoulos et al., "Prediction-powered inference", Science 2023; with a weight, PPI++, Angelopoulos, Duchi &
Zrnic, arXiv 2311.01453) is

    ppi = lambda * mean_N(judge) + mean_n(human - lambda * judge)

which is survey sampling's difference estimator (lambda = 1) or regression estimator (lambda fitted; Cochran,
"Sampling Techniques", 3rd ed. 1977, ch. 7): its error is the sampling error of the mean of the rectifier
r = human - lambda * judge over n of the N topics, so its variance is (1 - n/N) S_r^2 / n (the finite-population
correction is exact: the N topics are the whole population the target averages over).

Small samples: a weight fitted on the same few topics makes the sample variance of r too small and the interval
too short (on DL19 at 5 judged topics it covers about 0.86 instead of 0.95), so the weight is fixed at 1 below
`TUNE_FROM` judged topics (nothing estimated: t quantile with n - 1 degrees of freedom) and fitted from
`TUNE_FROM` on: lambda = S_hj / S_j^2 (the variance of the judge over all N topics, the covariance over the n
judged ones; the variance-minimising weight of the finite-population difference estimator), clipped to [0, 1],
with one degree of freedom spent on it (t quantile with n - 2). docs/trust.md shows the validation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import t as student_t

from proctor.options.calibration import PPIOptions

TUNE_FROM = 15
"""From this many judged topics on, the weight is fitted (PPI++); below, it is 1 (classic PPI)."""


@dataclass(frozen=True)
class Estimate:
    """One system's prediction-powered estimate and, beside it, the judge-only and human-only ones."""

    ppi: float
    ppi_low: float
    ppi_high: float
    ppi_weight: float
    ppi_stderr: float
    judge: float
    human: float
    human_low: float
    human_high: float
    n_judged: int
    n_topics: int
    rectifier: dict[str, float]
    """Per judged topic, human - weight * judge (the rank intervals compare systems on these)."""
    df: int


@lru_cache(maxsize=256)
def quantile(confidence: float, df: int) -> float:
    """The two-sided Student t quantile (scipy) at `confidence` with `df` degrees of freedom."""
    return float(student_t.ppf((1 + confidence) / 2, df))


def weight(human: np.ndarray, judge: np.ndarray, judge_all: np.ndarray) -> float:
    """The fitted weight S_hj / S_j^2, clipped to [0, 1]; 0 when the judge is constant over the N topics."""
    variance = float(np.var(judge_all, ddof=1)) if len(judge_all) > 1 else 0.0
    if variance <= 0 or len(human) < 2:
        return 0.0
    covariance = float(np.cov(human, judge, ddof=1)[0, 1])
    return min(1.0, max(0.0, covariance / variance))


def estimate(judge_all: Mapping[str, float], human: Mapping[str, float], confidence: float = PPIOptions.confidence,
             tune_from: int = TUNE_FROM) -> Estimate:
    """The estimate of one system: `judge_all` its judge scores on all N topics, `human` its human scores on the
    n judged topics (a subset of them, n >= 2)."""
    topics = sorted(human)
    n, total = len(topics), len(judge_all)
    if n < 2:
        raise ValueError("at least two judged topics are needed")
    if any(t not in judge_all for t in topics):
        raise ValueError("every judged topic must have a judge score")
    h = np.array([human[t] for t in topics], dtype=float)
    j = np.array([judge_all[t] for t in topics], dtype=float)
    every = np.array(list(judge_all.values()), dtype=float)
    tuned = n >= tune_from
    lam = weight(h, j, every) if tuned else 1.0
    df = n - 2 if tuned else n - 1
    r = h - lam * j
    fpc = 1 - n / total
    se = math.sqrt(max(fpc, 0.0) * float(np.sum((r - r.mean()) ** 2)) / df / n)
    ppi = lam * float(every.mean()) + float(r.mean())
    q = quantile(confidence, df)
    h_se = math.sqrt(max(fpc, 0.0) * float(np.var(h, ddof=1)) / n)
    h_q = quantile(confidence, n - 1)
    clip = _bounded(h, every)
    return Estimate(clip(ppi), clip(ppi - q * se), clip(ppi + q * se), lam, se, float(every.mean()),
                    float(h.mean()), clip(float(h.mean()) - h_q * h_se), clip(float(h.mean()) + h_q * h_se), n, total,
                    dict(zip(topics, r.tolist(), strict=True)), df)


def _bounded(*scores: np.ndarray):
    """Clipping to [0, 1] when every per-topic score lies in it (P@k, nDCG, AP, ...: the humans' mean, the target,
    lies in it too, so clipping never lowers coverage and never moves a value that was inside); else identity."""
    if all(len(x) and float(x.min()) >= 0.0 and float(x.max()) <= 1.0 for x in scores):
        return lambda v: min(1.0, max(0.0, v))
    return lambda v: v


def rank_intervals(estimates: Mapping[str, Estimate],
                   confidence: float = PPIOptions.confidence) -> dict[str, tuple[int, int]]:
    """Each system's rank interval from the pairwise differences of the same estimates: b is surely ahead of a
    when the interval of ppi_b - ppi_a (on the judged topics both have, paired) lies above 0; a's ranks run from
    1 + the systems surely ahead to the number of systems minus those surely behind. Each pair at `confidence`
    (not simultaneous over pairs)."""
    systems = list(estimates)
    ahead = {s: 0 for s in systems}
    behind = {s: 0 for s in systems}
    for i, a in enumerate(systems):
        for b in systems[i + 1:]:
            sign = _separated(estimates[a], estimates[b], confidence)
            if sign > 0:
                ahead[b] += 1
                behind[a] += 1
            elif sign < 0:
                ahead[a] += 1
                behind[b] += 1
    return {s: (1 + ahead[s], len(systems) - behind[s]) for s in systems}


def _separated(a: Estimate, b: Estimate, confidence: float) -> int:
    """+1 when a is surely ahead of b, -1 when b is, 0 when the interval of their difference holds 0."""
    common = sorted(set(a.rectifier) & set(b.rectifier))
    n = len(common)
    fitted = (a.n_judged - 1 - a.df) + (b.n_judged - 1 - b.df)  # a degree of freedom per fitted weight
    df = n - 1 - fitted  # on the n topics both have, whichever system comes first
    if n < 2 or df < 1:
        return 0
    d = np.array([a.rectifier[t] - b.rectifier[t] for t in common])
    total = min(a.n_topics, b.n_topics)
    se = math.sqrt(max(1 - n / total, 0.0) * float(np.sum((d - d.mean()) ** 2)) / df / n)
    diff = a.ppi - b.ppi
    half = quantile(confidence, df) * se
    return 1 if diff - half > 0 else -1 if diff + half < 0 else 0

