"""Correlations at their edges: a coefficient that is undefined (a side ranks every system the same) is null in
JSON and `undefined` in text, whichever statistic it is; the bootstrap counts the resamples in which a statistic
is undefined, leaves them out and gives no interval when more than (1 - level) / 2 of them are; a file too small
to resample says so, not that it lacks per-query values; counts beyond the one bound are refused in one line;
the resamples are drawn in chunks without changing them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from proctor.analyze.correlation import STATISTICS, bootstrap_intervals
from proctor.evaluate import intervals


def _board(path: Path, per_query: dict[str, dict[str, float]]) -> Path:
    """A Proctor JSON leaderboard with per-query values (the score: their mean)."""
    rows = [{"system": s, "score": sum(v.values()) / len(v), "per_query": v} for s, v in per_query.items()]
    path.write_text(json.dumps({"systems": rows}))
    return path


VARIED = {"a": {"q1": 0.9, "q2": 0.8, "q3": 0.7, "q4": 0.6}, "b": {"q1": 0.5, "q2": 0.4, "q3": 0.5, "q4": 0.3},
          "c": {"q1": 0.1, "q2": 0.2, "q3": 0.1, "q4": 0.0}}
ONE_TIED_QUERY = {s: {**v, "q1": 0.5} for s, v in VARIED.items()}  # all 4 draws q1 (1 in 256): every system ties
SMALL = {"a": {"q1": 0.9, "q2": 0.5}, "b": {"q1": 0.5, "q2": 0.5}, "c": {"q1": 0.1, "q2": 0.5}}  # q2, q2: all tie
TIED_SCORES = {s: {"q1": 0.5, "q2": 0.5, "q3": 0.5} for s in "abc"}
RANKS, ALL_TIED = {"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 1, "c": 1}
NAMES = list(STATISTICS)

# (case, leaderboard, official ranks, extra options, coefficients expected null, resamples undefined per statistic
#  (None: no interval asked for; a query: the resamples that draw only it, where every system ties), intervals
#  expected null)
CASES = [
    ("every official rank tied", VARIED, ALL_TIED, ("--bootstrap", "0"), NAMES, None, []),
    ("every predicted score tied", TIED_SCORES, RANKS, ("--bootstrap", "0"), NAMES, None, []),
    ("every official rank tied, ties broken at random", VARIED, ALL_TIED,
     ("--bootstrap", "0", "--ties", "random"), NAMES, None, []),
    ("varied on both sides", VARIED, RANKS, ("--bootstrap", "200"), [], {n: 0 for n in NAMES}, []),
    ("a quarter of the resamples tie every system", SMALL, RANKS, ("--bootstrap", "1000"), [],
     "q2", NAMES),
    ("a few resamples tie every system", ONE_TIED_QUERY, RANKS, ("--bootstrap", "1000"), [], "q1", []),
    ("every official rank tied, resampled", VARIED, ALL_TIED, ("--bootstrap", "100"), NAMES,
     {n: 100 for n in NAMES}, NAMES),
]


@pytest.mark.parametrize("case, board, official, extra, null, undefined, no_interval", CASES,
                         ids=[c[0] for c in CASES])
def test_an_undefined_correlation_is_null_and_its_undefined_resamples_are_counted(
        cli, tmp_path, case, board, official, extra, null, undefined, no_interval):
    lb = _board(tmp_path / "lb.json", board)
    ranks = tmp_path / "official.json"
    ranks.write_text(json.dumps(official))
    done = cli("correlate", lb, "--official", ranks, "--format", "json", *extra)
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert [n for n in NAMES if data[n] is None] == null
    assert all(isinstance(data[n], float) for n in NAMES if n not in null)
    ci = data["confidence_intervals"]
    if undefined is None:
        assert ci is None
    else:
        if isinstance(undefined, str):  # the documented draws: numpy's generator, one row of queries per sample
            queries = sorted({q for per in board.values() for q in per})
            picks = np.random.default_rng(0).integers(0, len(queries), size=(ci["samples"], len(queries)))
            undefined = dict.fromkeys(NAMES, int((picks == queries.index(undefined)).all(axis=1).sum()))
            assert 0 < undefined["spearman"] < ci["samples"]
        assert ci["undefined_resamples"] == undefined and "2.5%" in ci["rule"]
        assert [n for n in NAMES if ci[n] is None] == no_interval
        assert all(ci[n][0] <= ci[n][1] for n in NAMES if n not in no_interval)
        assert all(("undefined" in w and f"{undefined[n]} of {ci['samples']} resamples" in w)
                   for n in NAMES if undefined[n] for w in data["warnings"] if w.startswith("bootstrap:"))
    md, tsv = (cli("correlate", lb, "--official", ranks, "--format", fmt, *extra).out for fmt in ("md", "tsv"))
    for text in (md, tsv):
        assert "nan" not in text and "-0.5000" not in text
    row = md.split("|---:|---:|---:|---:|---:|---:|")[1].splitlines()[1]
    cells = [c.strip() for c in row.strip("|").split("|")][:len(NAMES)]
    assert [n for n, c in zip(NAMES, cells, strict=True) if c == "undefined"] == null
    assert [n for n, c in zip(NAMES, cells, strict=True) if c.endswith("[undefined]")] == [
        n for n in no_interval if n not in null]
    assert ("resamples (a statistic undefined in a resample is left out" in md) is any((undefined or {}).values())
    header, values = tsv.splitlines()
    by_column = dict(zip(header.split("\t"), values.split("\t"), strict=True))
    assert [n for n in NAMES if by_column[n] == "undefined"] == null


def test_the_statistics_agree_on_what_is_undefined():
    for predicted, official in (([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]), ([0.5, 0.5, 0.5], [3.0, 2.0, 1.0]), ([1.0], [1.0])):
        assert all(STATISTICS[name](predicted, official) != STATISTICS[name](predicted, official)  # NaN
                   for name in NAMES), (predicted, official)


# (case, leaderboard, official (ranks, or a leaderboard with per-query values), the reason expected)
TOO_SMALL = [
    ("one query", {s: {"q1": v["q1"]} for s, v in VARIED.items()}, RANKS,
     "has per-query values for 1 query: resampling queries needs at least 2"),
    ("two systems", {s: VARIED[s] for s in "ab"}, RANKS,
     "has per-query values for 2 systems in both leaderboards: an interval of a rank correlation needs at least 3"),
    ("two systems in the official per-query values", VARIED, {s: VARIED[s] for s in "ab"},
     "has per-query values for 2 systems in both leaderboards"),
    ("no per-query values", None, RANKS, "has no per-query values (write it with `proctor leaderboard"),
]


@pytest.mark.parametrize("case, board, official, reason", TOO_SMALL, ids=[c[0] for c in TOO_SMALL])
def test_a_file_too_small_to_resample_says_why(cli, tmp_path, case, board, official, reason):
    if board is None:
        lb = tmp_path / "lb.tsv"
        lb.write_text("system\tscore\na\t0.9\nb\t0.5\nc\t0.1\n")
    else:
        lb = _board(tmp_path / "lb.json", board)
    other = tmp_path / "official.json"
    if all(isinstance(v, dict) for v in official.values()):
        _board(other, official)
    else:
        other.write_text(json.dumps(official))
    done = cli("correlate", lb, "--official", other, "--format", "json", "--bootstrap", "100")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["confidence_intervals"] is None and data["no_intervals_because"].startswith(reason)
    assert f"--bootstrap 100: no confidence intervals, {lb} {reason}" in done.err
    if board is not None:
        assert "has no per-query values" not in done.err


REFUSED = [
    (("correlate", "LB", "--official", "OFFICIAL", "--bootstrap", "1000000000"),
     "--bootstrap must be 0..100000 (got 1000000000)"),
    (("correlate", "LB", "--official", "OFFICIAL", "--bootstrap", "100001"),
     "--bootstrap must be 0..100000 (got 100001)"),
    (("correlate", "LB", "--official", "OFFICIAL", "--ties", "random", "--repeats", "100001"),
     "--repeats must be 1..100000 (got 100001)"),
    (("calibrate", "--store", "absent.db", "--budget", "1", "--repeats", "1000000000"),
     "--repeats must be 1..100000 (got 1000000000)"),
    (("leaderboard", "--store", "absent.db", "--intervals", "--resamples", "100001"),
     "--resamples must be 1..100000 (got 100001)"),
    (("compare", "LB", "--samples", "100001"), "--samples must be 100..100000 (got 100001)"),
    (("leaderboard", "--store", "absent.db", "--significance", "--samples", "1000000000"),
     "--samples must be 100..100000 (got 1000000000)"),
]


@pytest.mark.parametrize("args, message", REFUSED, ids=[" ".join(a[0:1] + a[-2:]) for a, _ in REFUSED])
def test_counts_beyond_the_one_bound_are_refused_in_one_line(cli, tmp_path, args, message):
    files = {"LB": _board(tmp_path / "lb.json", VARIED), "OFFICIAL": tmp_path / "official.json"}
    files["OFFICIAL"].write_text(json.dumps(RANKS))
    done = cli(*[files.get(a, a) for a in args])
    assert done.code == 2 and done.out == ""
    assert done.err.strip() == f"proctor: error: {message}"


def test_the_api_refuses_the_same_counts():
    from proctor import api
    from proctor.errors import UsageError

    # the same counts as the command line refuses, named as the parameters (the CLI spells them as flags)
    with pytest.raises(UsageError, match=r"^bootstrap must be 0\.\.100000 \(got 1000000000\)$") as err:
        api.correlate("absent.json", "absent.json", bootstrap=10**9)
    assert err.value.as_options() == "--bootstrap must be 0..100000 (got 1000000000)"
    with pytest.raises(UsageError, match=r"^repeats must be 1\.\.100000 \(got 100001\)$"):
        api.calibrate(None, budgets=[1], repeats=100_001)
    with pytest.raises(UsageError, match=r"^samples must be 100\.\.100000 \(got 100001\)$"):
        api.compare("absent.json", samples=100_001)


def test_a_resample_without_a_systems_queries_leaves_the_statistics_undefined_not_zero():
    # system e has a value for one query of nine: about a third of the resamples draw none of it, so it has no
    # score there (as `leaderboard --intervals` gives it none); counting it 0 would rank it last on nothing
    import random

    import numpy as np

    from proctor.evaluate.intervals import sample_means

    rng = random.Random(5)  # values without ties: a side never ranks every system the same
    queries = [f"q{i}" for i in range(9)]
    per_query = {s: {q: rng.random() for q in queries} for s in "abcd"}
    per_query["e"] = {"q0": 0.5}
    official = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    result = bootstrap_intervals(per_query, official, samples=400, seed=3)
    matrix = np.array([[per_query[s].get(q, np.nan) for q in queries] for s in sorted(per_query)])
    without_e = int(np.isnan(sample_means(matrix, 400, 3)).any(axis=0).sum())  # the same draws
    assert 0.2 * 400 < without_e < 0.5 * 400
    assert result.undefined == {name: without_e for name in result.intervals}
    assert all(interval is None for interval in result.intervals.values())  # far beyond 2.5 % undefined
    complete = {s: per for s, per in per_query.items() if s != "e"}
    assert bootstrap_intervals(complete, official, samples=400, seed=3).undefined["spearman"] == 0


def test_resamples_drawn_in_chunks_are_the_draws_of_one(monkeypatch):
    per_query = {s: {f"q{i}": (i * k) % 7 / 7 for i in range(9)} for k, s in enumerate("abcde", start=1)}
    official = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    whole = bootstrap_intervals(per_query, official, samples=300, seed=3)
    monkeypatch.setattr(intervals, "CHUNK", 8)  # 38 chunks
    assert bootstrap_intervals(per_query, official, samples=300, seed=3) == whole
