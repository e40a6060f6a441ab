"""Significance between systems: paired t-test and randomization test over queries equal scipy's, Holm and
Bonferroni corrections, `proctor compare` and `leaderboard --significance`; checked against scipy on DL19."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from scipy import stats

from inprocess import run_cli
from proctor.stats.correction import adjust
from proctor.stats.randomization import randomization_test
from proctor.stats.ttest import TestResult as Result
from proctor.stats.ttest import paired_t_test


def _pairs(n: int, seed: int, shift: float = 0.05) -> tuple[list[float], list[float]]:
    rng = random.Random(seed)
    a = [rng.random() for _ in range(n)]
    return a, [min(1.0, max(0.0, x + rng.gauss(shift, 0.2))) for x in a]


@pytest.mark.parametrize("n, seed", [(2, 0), (5, 1), (12, 2), (43, 3), (200, 4)])
def test_paired_t_test_equals_scipy(n, seed):
    a, b = _pairs(n, seed)
    ours, theirs = paired_t_test(a, b), stats.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)


def test_t_test_edge_cases():
    assert math.isnan(paired_t_test([0.5, 0.5], [0.5, 0.5]).p_value)
    assert paired_t_test([0.6, 0.7], [0.5, 0.6]).p_value == 0.0
    assert math.isnan(paired_t_test([1.0], [0.0]).p_value)


@pytest.mark.parametrize("difference", [0.1, 0.2, 0.7])
def test_equal_differences_are_an_infinite_t_not_a_rounding_accident(difference):
    # three equal differences of 0.1: their mean rounds to a hair above 0.1, which made the deviation from it
    # a tiny non-zero sd and t = 1e16; every difference being the same is sd 0, t infinite, p 0
    assert paired_t_test([difference] * 3, [0.0] * 3) == Result(math.inf, 0.0)
    assert paired_t_test([0.0] * 3, [difference] * 3) == Result(-math.inf, 0.0)


def test_differences_equal_but_for_rounding_are_the_same_difference(recwarn):
    # per-query scores are sums and quotients of floats: two systems 0.25 apart on every query differ by 0.25 up to
    # the last bits, and the spread of that noise made t ~1e15 (a number one could publish); it is sd 0, t infinite
    a = [0.586298141773358, 0.5861252266219807, 0.9032109310496074]
    assert len({x + 0.25 - x for x in a}) > 1  # the differences do differ in their last bits
    assert paired_t_test([x + 0.25 for x in a], a) == Result(math.inf, 0.0)
    assert paired_t_test([0.3, 0.7], [0.1, 0.5]) == Result(math.inf, 0.0)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("n, seed", [(4, 0), (10, 1), (13, 2)])
def test_exact_randomization_test_equals_scipy(n, seed):
    a, b = _pairs(n, seed)
    ours = randomization_test(a, b, samples=2 ** n)
    theirs = stats.permutation_test((np.array(a), np.array(b)), lambda x, y, axis: np.mean(x - y, axis=axis),
                                    permutation_type="samples", n_resamples=2 ** n, vectorized=True)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12)


def test_sampled_randomization_test_is_seeded_and_close_to_scipy():
    a, b = _pairs(43, 5, shift=0.03)
    first = randomization_test(a, b, samples=20_000, seed=7)
    assert first == randomization_test(a, b, samples=20_000, seed=7)
    theirs = stats.permutation_test((np.array(a), np.array(b)), lambda x, y, axis: np.mean(x - y, axis=axis),
                                    permutation_type="samples", n_resamples=20_000, random_state=1,
                                    vectorized=True).pvalue
    assert abs(first.p_value - theirs) < 4 * math.sqrt(2 * theirs * (1 - theirs) / 20_000) + 1e-3


def test_holm_and_bonferroni_by_hand():
    p = [0.01, 0.04, 0.03, 0.005, math.nan]
    assert adjust(p, "bonferroni")[:4] == pytest.approx([0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.06
    assert adjust(p, "holm")[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert math.isnan(adjust(p, "holm")[4]) and adjust([0.6, 0.9], "holm") == [1.0, 1.0]
    assert adjust(p, "none")[:4] == p[:4]


def test_leaderboard_significance_and_compare_on_the_demo(cli, demo_store, tmp_path):
    args = ("leaderboard", "--store", demo_store, "--qrels", "official", "--measure", "P@3")
    refused = cli(*args, "--significance")
    assert refused.code == 2 and "--significance needs --format json or md" in refused.err
    result = cli(*args, "--format", "json", "--significance", "--correction", "bonferroni", "--test", "t")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    systems = [s["system"] for s in data["systems"]]
    tests = data["significance"]
    assert tests["correction"] == "bonferroni" and tests["pairs"] == len(systems) * (len(systems) - 1) // 2
    assert [(c["a"], c["b"]) for c in tests["comparisons"]][0] == (systems[0], systems[1])
    assert all("p_randomization" not in c for c in tests["comparisons"])
    board = tmp_path / "lb.json"
    board.write_text(cli(*args, "--format", "json", "--per-query").out)
    compared = cli("compare", board, "--baseline", systems[-1], "--format", "json")
    assert compared.code == 0, compared.err
    assert [c["a"] for c in json.loads(compared.out)["comparisons"]] == [systems[-1]] * (len(systems) - 1)
    assert "no such system" in cli("compare", board, "--baseline", "nobody").err
    assert json.loads(compared.out)["measure"] == "P(rel=1)@3" and json.loads(compared.out)["labels"] == "official"
    header, first = cli("compare", board).out.splitlines()[:2]  # the TSV names measure and labels like a leaderboard
    assert header.split("\t")[-2:] == ["measure", "labels"] and first.split("\t")[-2:] == ["P(rel=1)@3", "official"]
    assert tests["measure"] == "P(rel=1)@3" and tests["labels"] == "official"
    plain = tmp_path / "lb.tsv"
    plain.write_text(cli(*args).out)
    missing = cli("compare", plain)
    assert missing.code == 2 and "no per-query scores" in missing.err


def test_dl19_significance_equals_scipy(dl19_store, tmp_path):
    board = tmp_path / "ndcg.json"
    made = run_cli("leaderboard", "--store", dl19_store, "--measure", "nDCG@10", "--qrels", "official",
                   "--format", "json", "--per-query")
    board.write_text(made.out)
    result = run_cli("compare", board, "--format", "json", "--samples", "20000")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    per_query = {s["system"]: s["per_query"] for s in json.loads(made.out)["systems"]}
    rows = data["comparisons"]
    assert len(rows) == 37 * 36 // 2
    pairs = [[[per_query[row[s]][q] for q in sorted(per_query[row["a"]])] for row in rows] for s in ("a", "b")]
    assert {len(scores) for scores in pairs[0]} == {43}  # every run answered the 43 topics: one row per pair
    expected = list(stats.ttest_rel(np.array(pairs[0]), np.array(pairs[1]), axis=1).pvalue)  # scipy, pair by pair
    for row, scipy_p in zip(rows, expected, strict=True):
        assert row["p_t"] == pytest.approx(scipy_p, rel=1e-8, abs=1e-300), (row["a"], row["b"])
    m = len(expected)
    order = sorted(range(m), key=lambda i: expected[i])
    holm, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * expected[i]))
        holm[i] = running
    assert [r["p_t_adjusted"] for r in rows] == pytest.approx(holm, rel=1e-8, abs=1e-300)
    for row in rows[:: len(rows) // 6]:
        queries = sorted(per_query[row["a"]])
        a = np.array([per_query[row["a"]][q] for q in queries])
        b = np.array([per_query[row["b"]][q] for q in queries])
        theirs = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                        permutation_type="samples", n_resamples=20_000, random_state=0,
                                        vectorized=True).pvalue
        assert abs(row["p_randomization"] - theirs) < 4 * math.sqrt(2 * theirs * (1 - theirs) / 20_000) + 2e-3
