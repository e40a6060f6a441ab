"""The paired randomization (permutation) test over queries (Fisher; Smucker, Allan & Carterette, CIKM 2007):
under the null hypothesis the two systems' scores on a query are exchangeable, so each per-query difference
keeps or flips its sign. The p-value is the share of sign assignments whose mean difference is at least as
far from 0 as the observed one (two-sided).

All 2^n assignments are enumerated when 2^n <= `samples` (an exact test); otherwise `samples` random ones
are drawn (seeded) and p = (count + 1) / (samples + 1), counting the observed assignment (Phipson & Smyth
2010) — both as scipy.stats.permutation_test(permutation_type="samples") computes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from proctor.options.significance import SignificanceOptions
from proctor.stats.ttest import TestResult


def sign_matrix(n: int, samples: int, seed: int) -> tuple[np.ndarray, bool]:
    """The sign assignments (rows) for n queries, and whether they are all 2^n of them."""
    if n <= 30 and 2 ** n <= samples:
        codes = np.arange(2 ** n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)[None, :]
        return np.where(codes & 1, -1.0, 1.0), True
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-1.0, 1.0]), size=(samples, n)), False


def randomization_test(a: Sequence[float], b: Sequence[float], *, samples: int = SignificanceOptions.samples,
                       seed: int = SignificanceOptions.seed,
                       signs: np.ndarray | None = None, exact: bool | None = None) -> TestResult:
    """Two-sided paired randomization test of a against b; the statistic is the mean difference.
    `signs`/`exact` (from `sign_matrix`) let many pairs share one draw."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return TestResult(math.nan, math.nan)
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if signs is None or exact is None:
        signs, exact = sign_matrix(n, samples, seed)
    observed = float(diffs.mean())
    null = signs @ diffs / n
    tolerance = 1e-14 * max(1.0, abs(observed))  # rounding in the sums must not decide a tie
    count = int(np.count_nonzero(np.abs(null) >= abs(observed) - tolerance))
    if exact:
        return TestResult(observed, min(1.0, count / len(signs)))
    return TestResult(observed, min(1.0, (count + 1) / (len(signs) + 1)))
