"""Correlation coefficients equal scipy's (ties included); τ_AP and bootstrap behave as defined."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from proctor.analyze.correlation import average_ranks, bootstrap_intervals, kendall_tau_b, pearson, spearman, tau_ap

HAND_BUILT = [
    ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]),
    ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]),
    ([1, 2, 2, 3, 4], [1, 3, 2, 2, 4]),        # ties on both sides
    ([0.5, 0.5, 0.5, 1.0], [1, 2, 3, 4]),       # a three-way tie
    ([3, 1, 2, 2, 5, 5, 4], [-1, -3, -2, -2, -5, -4, -4]),  # fractional official ranks negated
]


@pytest.mark.parametrize(("x", "y"), HAND_BUILT)
def test_hand_built_cases_equal_scipy(x, y):
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_random_vectors_with_ties_equal_scipy(seed):
    rng = random.Random(seed)
    n = rng.randrange(3, 40)
    x = [rng.choice([0.1, 0.2, 0.3, 0.5, 0.8]) if seed % 2 else rng.random() for _ in range(n)]
    y = [rng.randrange(6) for _ in range(n)]
    assert average_ranks(x) == pytest.approx(list(stats.rankdata(x)))
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_constant_side_is_undefined():
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3])) and math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))


@pytest.mark.parametrize("value", [0.1, 0.2, 0.7])
def test_constant_side_is_undefined_whatever_its_mean_rounds_to(value):
    # three equal scores of 0.1 have a mean that rounds away from 0.1: r was 0.0, not undefined
    assert math.isnan(pearson([value] * 3, [0.0, 1.0, 2.0]))
    assert math.isnan(pearson([0.0, 1.0, 2.0], [value] * 3))


def test_pearson_equals_scipy():
    rng = random.Random(5)
    x, y = [rng.random() for _ in range(30)], [rng.random() for _ in range(30)]
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert math.isnan(pearson([1.0], [2.0])) and math.isnan(pearson([], []))


def test_tau_ap_extremes_and_top_weighting():
    truth = [5, 4, 3, 2, 1]
    assert tau_ap(truth, truth) == pytest.approx(1.0)
    assert tau_ap([1, 2, 3, 4, 5], truth) == pytest.approx(-1.0)
    swap_top = [4, 5, 3, 2, 1]
    swap_bottom = [5, 4, 3, 1, 2]
    # one swap costs the same in Kendall's tau wherever it is, but more at the top in tau_AP
    assert kendall_tau_b(swap_top, truth) == pytest.approx(kendall_tau_b(swap_bottom, truth))
    assert tau_ap(swap_top, truth) < tau_ap(swap_bottom, truth)
    # hand computed: list (b, a, c, d, e); C(2)=0, C(3)=2, C(4)=3, C(5)=4 → 2/4 * (0 + 1 + 1 + 1) - 1
    assert tau_ap(swap_top, truth) == pytest.approx(0.5)


def test_bootstrap_interval_contains_a_perfect_agreement():
    rng = random.Random(1)
    per_query = {f"s{i}": {f"q{j}": i + rng.random() * 0.1 for j in range(30)} for i in range(8)}
    official = {f"s{i}": float(i) for i in range(8)}
    intervals = bootstrap_intervals(per_query, official, samples=200).intervals
    assert intervals["spearman"][0] > 0.9 and intervals["kendall"][1] == pytest.approx(1.0)
    noisy = {s: {q: rng.random() for q in qs} for s, qs in per_query.items()}
    wide = bootstrap_intervals(noisy, official, samples=200).intervals
    assert wide["kendall"][1] - wide["kendall"][0] > 0.2
