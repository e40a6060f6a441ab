"""The paired t-test over queries: t = mean(d) / (sd(d) / sqrt(n)), d the per-query differences, n - 1 degrees
of freedom, two-sided: scipy.stats.ttest_rel, with the degenerate cases decided here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TestResult:
    """A test's statistic and two-sided p-value."""

    statistic: float
    p_value: float


SAME = 1e-9
"""Differences closer than this (relative to their size, at least 1e-12 apart in absolute terms) are the same
difference: scores are sums and quotients of floats, so two queries on which two systems differ by the same amount
may differ in the last bits, and the spread of that rounding noise would make t ~1e15 instead of infinite."""


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """Two-sided paired t-test of a against b (NaN below 2 pairs, or when every difference is 0; t = ±inf and
    p = 0 when every difference is the same non-zero value, up to rounding: `SAME`)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if len(a) < 2:
        return TestResult(math.nan, math.nan)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    if all(math.isclose(d, diffs[0], rel_tol=SAME, abs_tol=1e-12) for d in diffs):  # sd is 0 but for rounding
        if math.isclose(diffs[0], 0.0, abs_tol=1e-12):
            return TestResult(math.nan, math.nan)
        return TestResult(math.copysign(math.inf, diffs[0]), 0.0)
    import warnings

    from scipy.stats import ttest_rel

    with warnings.catch_warnings():  # scipy's warning on a near-zero spread: decided above
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ttest_rel(a, b)
    return TestResult(float(result.statistic), float(result.pvalue))
