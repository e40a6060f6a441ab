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


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """Two-sided paired t-test of a against b (NaN below 2 pairs, or when every difference is 0; t = ±inf and
    p = 0 when every difference is the same non-zero value)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if len(a) < 2:
        return TestResult(math.nan, math.nan)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    if all(d == diffs[0] for d in diffs):  # sd is 0: scipy would warn and divide by it
        if diffs[0] == 0:
            return TestResult(math.nan, math.nan)
        return TestResult(math.copysign(math.inf, diffs[0]), 0.0)
    import warnings

    from scipy.stats import ttest_rel

    with warnings.catch_warnings():  # differences equal but for rounding: the test says what it says, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ttest_rel(a, b)
    return TestResult(float(result.statistic), float(result.pvalue))
