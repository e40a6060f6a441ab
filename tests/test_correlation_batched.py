"""The bootstrap's statistics computed for many resamples at once are exactly (to the bit) the floats of the
per-resample functions (scipy's `spearmanr` and `kendalltau`, `tau_ap`, `tauap_b`, `kendall@10`): on scores
with many ties, on resamples where a side ranks every system the same, and where a system has none of the drawn
queries; so the intervals `bootstrap_intervals` reports are those of the resample-by-resample loop."""

from __future__ import annotations

import random

import numpy as np
import pytest

from proctor.analyze import correlation
from proctor.analyze.correlation import BATCHED, STATISTICS, bootstrap_intervals


def _tied_rows(seed: int, rows: int, systems: int, levels: int) -> np.ndarray:
    """Scores drawn from `levels` values (many ties); every 7th row constant (undefined), every 5th row a copy
    of the one before (identical lists)."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, levels, size=(rows, systems)) / levels
    values[::7] = 0.25
    values[5::5] = values[4::5][:len(values[5::5])]
    return values


@pytest.mark.parametrize("systems", [2, 3, 12, 25])
def test_every_batched_statistic_is_bitwise_the_per_resample_value(systems):
    predicted, official = _tied_rows(1, 84, systems, 4), _tied_rows(2, 84, systems, 3)
    official[1::9] = predicted[1::9]  # perfectly agreeing rows: ±1 exactly, clipped as scipy clips
    official[2::9] = -predicted[2::9]
    assert set(BATCHED) == set(STATISTICS)
    for name, statistic in STATISTICS.items():
        expected = np.array([statistic(p, o) for p, o in zip(predicted.tolist(), official.tolist(), strict=True)])
        got = BATCHED[name](np, predicted, official)
        assert np.isnan(expected).any() and not np.isnan(expected).all(), name  # both kinds of resample occur
        assert np.array_equal(got, expected, equal_nan=True), (name, np.flatnonzero(got != expected)[:5])
        assert got.tobytes() == np.where(np.isnan(expected), got, expected).tobytes(), name  # signs of zero too


def _per_query(seed: int, systems: int, queries: int, missing: bool) -> dict[str, dict[str, float]]:
    """Per-query values in tenths (ties within and across systems); with `missing`, the last system has two
    queries only (about a tenth of the resamples draw none of them: its mean is undefined there)."""
    rng = random.Random(seed)
    per_query = {f"s{i:02d}": {f"q{j}": rng.randrange(0, 4) / 10 for j in range(queries)} for i in range(systems)}
    if missing:
        per_query[f"s{systems - 1:02d}"] = {"q0": 0.3, "q1": 0.1}
    return per_query


@pytest.mark.parametrize("missing, official_per_query", [(False, False), (True, True)],
                         ids=["fixed tied official scores", "per-query official, a system often undrawn"])
def test_bootstrap_intervals_equal_the_resample_by_resample_loop(monkeypatch, missing, official_per_query):
    predicted = _per_query(3, 14, 7, missing)
    official = (_per_query(4, 14, 7, missing) if official_per_query else
                {s: float(len(predicted) - i) // 3 for i, s in enumerate(sorted(predicted))})  # tied ranks
    batched = bootstrap_intervals(predicted, official, samples=200, seed=11)
    monkeypatch.setattr(correlation, "BATCHED", {})  # every statistic by its scipy function, resample by resample
    monkeypatch.setattr(correlation, "BATCH_VALUES", 7 * 14 ** 2)  # and the batches (of 7 rows) change nothing
    looped = bootstrap_intervals(predicted, official, samples=200, seed=11)
    assert batched == looped
    if missing:  # (5/7)^7, a tenth of the resamples, leave the last system without a mean: no interval
        assert all(0.05 * 200 < count < 0.2 * 200 for count in batched.undefined.values()), batched.undefined
        assert all(interval is None for interval in batched.intervals.values())
    else:
        assert all(interval is not None for interval in batched.intervals.values())
