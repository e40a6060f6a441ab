"""The paired t-test over queries: t = mean(d) / (sd(d) / sqrt(n)), d the per-query differences, n - 1 degrees
of freedom, two-sided (as scipy.stats.ttest_rel)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from proctor.stats.student_t import two_sided_p


@dataclass(frozen=True)
class TestResult:
    """A test's statistic and two-sided p-value."""

    statistic: float
    p_value: float


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """Two-sided paired t-test of a against b (NaN below 2 pairs, or when every difference is 0)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n < 2:
        return TestResult(math.nan, math.nan)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = math.fsum(diffs) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1))
    if sd == 0:
        if mean == 0:
            return TestResult(math.nan, math.nan)
        return TestResult(math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(n))
    return TestResult(t, two_sided_p(t, n - 1))
