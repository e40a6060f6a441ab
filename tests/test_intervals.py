"""Bootstrap intervals of leaderboards over topics (`leaderboard --intervals`), checked against a bootstrap
computed by hand from the same draws."""

from __future__ import annotations

import json
import math
import tracemalloc

import numpy as np
import pytest

from inprocess import copy_store
from proctor import api
from proctor.api import commands
from proctor.evaluate import intervals
from trust_fixture import tiny_store

# Per topic P@1 (τ = 3): A = 1, 1, 0, 1; B = 0, 1, 0, 0; C = 1, 1, 1, 1 (C beats or ties everyone everywhere).
RATINGS = {f"q{i}": {"good": 4, "bad": 1} for i in range(1, 5)}
RUNS = {"A": {"q1": ["good"], "q2": ["good"], "q3": ["bad"], "q4": ["good"]},
        "B": {"q1": ["bad"], "q2": ["good"], "q3": ["bad"], "q4": ["bad"]},
        "C": {q: ["good"] for q in RATINGS}}
VALUES = {"A": [1, 1, 0, 1], "B": [0, 1, 0, 0], "C": [1, 1, 1, 1]}


@pytest.fixture(scope="module")
def store_template(tmp_path_factory):
    """The module's tiny store, built once: read only (`store` gives each test a copy)."""
    return tiny_store(tmp_path_factory.mktemp("tiny"), RATINGS, RUNS)


@pytest.fixture
def store(store_template, tmp_path):
    return copy_store(store_template, tmp_path / "s.db")


def _percentile(sorted_values: list[float], q: float) -> float:
    """numpy's default (linear) percentile, by hand."""
    pos = q / 100 * (len(sorted_values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def _by_hand(resamples: int, seed: int, confidence: float) -> dict[str, tuple[float, float, int, int]]:
    """The bootstrap done with loops: the same draws (numpy's generator, one row of topic indices per sample)."""
    picks = np.random.default_rng(seed).integers(0, 4, size=(resamples, 4)).tolist()
    means = {s: [sum(v[i] for i in row) / 4 for row in picks] for s, v in VALUES.items()}
    ranks = {s: [1 + sum(1 for o in VALUES if means[o][b] > means[s][b]) for b in range(resamples)] for s in VALUES}
    lo, hi = (1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100
    out = {}
    for s in VALUES:
        m, r = sorted(means[s]), sorted(ranks[s])
        pos_lo, pos_hi = lo / 100 * (resamples - 1), hi / 100 * (resamples - 1)
        out[s] = (_percentile(m, lo), _percentile(m, hi), r[math.floor(pos_lo)], r[math.ceil(pos_hi)])
    return out


@pytest.mark.parametrize("resamples, seed, confidence", [(300, 11, 0.9), (2500, 5, 0.95)])  # 2500: drawn in chunks
def test_intervals_match_a_bootstrap_computed_by_hand(cli, store, resamples, seed, confidence):
    r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--intervals",
            "--resamples", str(resamples), "--seed", str(seed), "--confidence", str(confidence), "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    expected = _by_hand(resamples, seed, confidence)
    for row in data["systems"]:
        low, high, rank_low, rank_high = expected[row["system"]]
        assert row["ci_low"] == pytest.approx(low) and row["ci_high"] == pytest.approx(high)
        assert (row["rank_low"], row["rank_high"]) == (rank_low, rank_high)
    c = next(row for row in data["systems"] if row["system"] == "C")
    assert (c["ci_low"], c["ci_high"], c["rank_low"], c["rank_high"]) == (1.0, 1.0, 1, 1)  # best on every topic
    assert data["intervals"]["confidence"] == confidence and data["intervals"]["resamples"] == resamples
    assert data["intervals"]["seed"] == seed and data["intervals"]["topics"] == 4


def test_intervals_in_tsv_and_markdown(cli, store):
    r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--intervals",
            "--floor-queries", "0")
    header, *rows = r.out.splitlines()
    assert header.split("\t")[-4:] == ["ci_low", "ci_high", "rank_low", "rank_high"]
    assert rows[0].split("\t")[0] == "C" and rows[0].split("\t")[-4:] == ["1.000000", "1.000000", "1", "1"]
    plain = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3")
    assert "ci_low" not in plain.out  # the columns come with --intervals only
    md = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--intervals", "--format", "md")
    assert "score interval | rank interval" in md.out and "[1.000000, 1.000000] | 1–1" in md.out
    assert "pairs of systems have overlapping score intervals" in md.out


def test_the_same_seed_gives_the_same_intervals_and_another_seed_may_not(cli, store):
    args = ("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--intervals", "--format", "json")
    assert json.loads(cli(*args, "--seed", "3").out) == json.loads(cli(*args, "--seed", "3").out)


@pytest.mark.parametrize("args, message", [
    (["--intervals", "--confidence", "1.5"], "--confidence must be a finite number in (0, 1) (got 1.5)"),
    (["--intervals", "--confidence", "nan"], "--confidence must be a finite number in (0, 1) (got nan)"),
    (["--confidence", "0.9"], "apply to --intervals only"),
    (["--intervals", "--format", "trec"], "--intervals needs --format tsv, json or md"),
    (["--intervals", "--seed", "-1"], "--seed must be 0 or more (got -1)"),
    (["--intervals", "--resamples", "100000000000"], "--resamples must be 1..100000 (got 100000000000)"),
])
def test_bad_interval_options_are_refused(cli, store, args, message):
    r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", *args)
    assert r.code == 2 and message in r.err and "Traceback" not in r.err and r.out == ""


def test_resamples_below_one_are_refused_by_the_parser(cli, store):
    r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--intervals", "--resamples", "0")
    assert r.code == 2 and "--resamples: must be 1 or more" in r.err


def test_api_adds_intervals_and_counts_the_pairs_it_cannot_separate(store):
    s = api.open_store(store)
    try:
        board = api.leaderboard(s, "P@1", min_grade=3)
    finally:
        s.close()
    board = commands.add_intervals(board, resamples=200, seed=1)
    assert board.intervals is not None
    assert set(board.intervals.by_system) == {"A", "B", "C"}
    pairs = board.intervals.overlapping
    assert ("C", "A") in pairs  # A's interval reaches 1.0
    for a, b in pairs:
        x, y = board.intervals.by_system[a], board.intervals.by_system[b]
        assert x.ci_low <= y.ci_high and y.ci_low <= x.ci_high


def test_dl19_p20_intervals_of_the_37_systems(dl19_store, cli):
    r = cli("leaderboard", "--store", dl19_store, "--measure", "P@20", "--min-grade", "3", "--intervals",
            "--format", "json")
    data = json.loads(r.out)
    systems = data["systems"]
    assert len(systems) == 37 and data["coverage"]["below_floor"] is False
    assert all(s["ci_low"] <= s["score"] <= s["ci_high"] and s["rank_low"] <= s["rank_high"] for s in systems)
    assert data["intervals"]["pairs_not_separated"] == 613 and len(data["intervals"]["not_separated"]) == 613
    assert data["intervals"]["pairs_rank_intervals_overlap"] == 403  # the figures of docs/trust.md
    top, last = systems[0], systems[-1]
    assert (top["system"], top["rank_low"], top["rank_high"]) == ("p_exp_rm3_bert", 1, 11)
    assert (last["system"], last["rank_low"], last["rank_high"]) == ("UNH_exDL_bm25", 37, 37)


def test_a_leaderboard_of_no_system_gets_empty_intervals_not_a_traceback(cli, tmp_path):
    """The only run answers a query without grades: no system is scored, and --intervals says so in every
    format."""
    store = tiny_store(tmp_path, {"q1": {"good": 4}}, {"A": {"q2": ["other"]}})
    out = {}
    for fmt in ("tsv", "json", "md"):
        r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--intervals", "--format", fmt)
        assert r.code == 0 and "Traceback" not in r.err, r.err
        out[fmt] = r.out
    data = json.loads(out["json"])
    assert data["systems"] == [] and data["intervals"]["topics"] == 0
    assert data["intervals"]["pairs_not_separated"] == 0
    assert out["tsv"].splitlines() == ["system\tscore\tstderr\tn_queries\tmeasure\tlabels\tci_low\tci_high\trank_low"
                                       "\trank_high"]


def test_markdown_rows_keep_the_table_width_with_a_reference_row(cli, store):
    """EXAM-Cover's `_overall_` reference row is not resampled: its interval cells say so, and every row of the
    table has as many cells as its header."""
    r = cli("leaderboard", "--store", store, "--metric", "cover", "--min-grade", "3", "--intervals", "--format", "md")
    assert r.code == 0, r.err
    table = [line for line in r.out.splitlines() if line.startswith("|")]
    assert any("(reference)" in line for line in table)
    assert {line.count("|") for line in table} == {table[0].count("|")}


@pytest.mark.parametrize("values", [10, 4_000, 4_000_000])
def test_the_resamples_are_the_same_whatever_memory_a_chunk_may_take(monkeypatch, values):
    rng = np.random.default_rng(7)
    matrix = rng.random((9, 301))
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    matrix[2] = np.nan  # a system without a single topic
    whole = intervals.sample_means(matrix, 1001, seed=3)  # chunks of 1000 resamples, then 1
    monkeypatch.setattr(intervals, "CHUNK_VALUES", values)
    assert np.array_equal(intervals.sample_means(matrix, 1001, seed=3), whole, equal_nan=True)
    by_hand = [np.nanmean(matrix[0, picks]) for picks in np.random.default_rng(3).integers(0, 301, size=(1001, 301))]
    assert np.allclose(whole[0], by_hand) and np.isnan(whole[2]).all()


def test_a_bootstrap_over_thousands_of_topics_holds_a_chunk_of_bounded_size(monkeypatch):
    monkeypatch.setattr(intervals, "CHUNK_VALUES", 200_000)
    matrix = np.random.default_rng(1).random((20, 2_000))
    tracemalloc.start()
    try:
        intervals.sample_means(matrix, 400, seed=0)  # 400 resamples at once: 20 x 400 x 2,000 values, 128 MB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20
