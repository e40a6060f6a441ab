"""`proctor correlate`: the pairs of systems a leaderboard orders against the official order, what the
correlation rests on, and intervals for every statistic it reports."""

from __future__ import annotations

import json

import pytest

from proctor.analyze import correlation
from proctor.analyze.correlation import bootstrap_intervals, discordant_pairs
from trust_fixture import tiny_store


def test_discordant_pairs_are_the_pairs_in_opposite_order():
    judge = {"a": 0.9, "b": 0.5, "c": 0.7, "d": 0.5, "e": 0.1}
    official = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0, "f": 0.0}  # f: official only
    pairs = discordant_pairs(judge, official)
    # b < c by the judge, official b > c; b = d tied by the judge: no discordance
    assert [(p["official_better"], p["judge_better"]) for p in pairs] == [("b", "c")]
    assert pairs[0]["official"] == [4.0, 3.0] and pairs[0]["judge"] == [0.5, 0.7]


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_correlate_lists_the_pairs_with_official_ranks(cli, tmp_path):
    lb = _write(tmp_path, "lb.json", {"a": 0.9, "b": 0.5, "c": 0.7})
    official = _write(tmp_path, "official.json", {"a": 1, "b": 2, "c": 3})
    r = cli("correlate", lb, "--official", official)
    data = json.loads(r.out)
    assert data["discordant_pairs"] == [{"official_better": "b", "judge_better": "c", "official_rank": [2.0, 3.0],
                                         "judge_score": [0.5, 0.7]}]
    md = cli("correlate", lb, "--official", official, "--format", "md").out
    assert "**1 pairs ordered against the official order**" in md and "| b | c | 2 / 3 | 0.5000 / 0.7000 |" in md
    tsv = cli("correlate", lb, "--official", official, "--format", "tsv").out.splitlines()
    row = dict(zip(tsv[0].split("\t"), tsv[1].split("\t"), strict=True))
    assert row["discordant_pairs"] == "1" and row["queries"] == "nan"
    assert "does not say how many queries" in r.err  # a plain {system: score} file: unknown


def test_correlation_from_2_queries_warns(cli, tmp_path):
    ratings = {"q1": {"p1": 4, "p2": 1}, "q2": {"p1": 5, "p2": 0}}
    runs = {"A": {"q1": ["p1"], "q2": ["p1"]}, "B": {"q1": ["p2"], "q2": ["p1"]}, "C": {"q1": ["p2"], "q2": ["p2"]}}
    store = tiny_store(tmp_path, ratings, runs, queries=43)
    lb = tmp_path / "lb.json"
    lb.write_text(cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--format", "json",
                      "--per-query").out)
    official = _write(tmp_path, "official.json", {"A": 1, "B": 2, "C": 3})
    few = ("--bootstrap", "50")  # the intervals are not the point here (the default 1000 took most of the time)
    r = cli("correlate", lb, "--official", official, *few)
    data = json.loads(r.out)
    assert data["coverage"]["queries"]["scored"] == 2 and data["coverage"]["queries"]["of"] == 43
    assert data["coverage"]["counts"] == {"systems": 3}
    assert "warning: coverage: rests on 2 of 43 queries (fewer than 10)" in r.err
    quiet = cli("correlate", lb, "--official", official, "--floor-queries", "2", *few)
    assert "rests on" not in quiet.err


def test_every_registered_statistic_gets_an_interval(monkeypatch):
    predicted = {s: {f"q{i}": (i * k) % 7 / 7 for i in range(8)} for k, s in enumerate("abcde", start=1)}
    official = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    plain = bootstrap_intervals(predicted, official, samples=50).intervals
    assert set(plain) == set(correlation.STATISTICS) >= {"spearman", "kendall", "tau_ap", "tauap_b", "kendall@10"}
    monkeypatch.setitem(correlation.STATISTICS, "top_agrees", lambda p, o: float(p.index(max(p)) == o.index(max(o))))
    extended = bootstrap_intervals(predicted, official, samples=50).intervals
    assert set(extended) == set(plain) | {"top_agrees"}
    assert 0.0 <= extended["top_agrees"][0] <= extended["top_agrees"][1] <= 1.0
    assert extended["kendall"] == pytest.approx(plain["kendall"])
