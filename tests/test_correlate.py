"""`proctor correlate`: files it reads, what it reports, systems missing on one side, exact query ids."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from conftest import DL19
from inprocess import run_cli
from proctor.analyze.leaderboard_correlation import per_query_correlation


def test_must_show_on_dl19(dl19_store, tmp_path):
    lb = tmp_path / "lb.tsv"
    result = run_cli("leaderboard", "--store", dl19_store, "--measure", "P@20", "--min-grade", "3",
                     "--format", "tsv")
    lb.write_text(result.out)
    official_file = DL19 / "dl19-official-leaderboard.json"
    out = run_cli("correlate", lb, "--official", official_file, "--format", "json")
    assert out.code == 0, out.err
    data = json.loads(out.out)
    assert data["n_systems"] == 36
    assert data["missing"]["only_in_leaderboard"] == ["UNH_exDL_bm25"] and "UNH_exDL_bm25" in out.err
    # against scipy on the same vectors: predicted scores vs negated official ranks
    official = json.loads(official_file.read_text())
    scores = {r.split("\t")[0]: float(r.split("\t")[1]) for r in result.out.splitlines()[1:]}
    systems = sorted(official)
    x, y = [scores[s] for s in systems], [-official[s] for s in systems]
    assert data["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-6)
    assert data["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-6)
    assert data["kendall"] == pytest.approx(0.754, abs=0.001)  # FLAN-T5-large, as the issue states


def test_bootstrap_and_per_query_with_official_qrels(dl19_store, tmp_path):
    lb = tmp_path / "lb.json"
    lb.write_text(run_cli("leaderboard", "--store", dl19_store, "--measure", "nDCG@10", "--format", "json",
                          "--per-query").out)
    qrels = tmp_path / "official.qrels"
    from proctor.io.trec import write_qrels
    from proctor.store import Store
    with open(qrels, "w") as handle:
        write_qrels(Store.open(dl19_store).corpus.judgments(), handle)
    out = run_cli("correlate", lb, "--official-qrels", qrels, "--measure", "nDCG@10", "--store", dl19_store,
                  "--bootstrap", "200")
    data = json.loads(out.out)
    assert out.code == 0 and data["n_systems"] == 37 and not data["missing"]["only_in_official"]
    ci = data["confidence_intervals"]
    assert ci["samples"] == 200 and ci["kendall"][0] <= ci["kendall"][1]
    assert len(data["per_query"]) == 43


def test_per_query_matches_query_ids_exactly():
    # the original workbench matched query "1" against "10" and "100"
    predicted = {"a": {"1": 0.9, "10": 0.1, "100": 0.5}, "b": {"1": 0.1, "10": 0.9, "100": 0.4},
                 "c": {"1": 0.5, "10": 0.5, "100": 0.3}}
    official = {"a": {"1": 1.0, "10": 0.0, "100": 0.2}, "b": {"1": 0.0, "10": 1.0, "100": 0.3},
                "c": {"1": 0.5, "10": 0.5, "100": 0.1}}
    result = per_query_correlation(predicted, official)
    assert set(result) == {"1", "10", "100"}
    assert result["1"]["kendall"] == pytest.approx(1.0) and result["10"]["kendall"] == pytest.approx(1.0)
    assert result["100"]["kendall"] == pytest.approx(stats.kendalltau([0.5, 0.4, 0.3], [0.2, 0.3, 0.1]).statistic)


def test_official_tsv_ties_and_formats(tmp_path):
    lb = tmp_path / "lb.tsv"
    lb.write_text("system\tscore\tstderr\tn_queries\nA\t0.9\t0\t1\nB\t0.5\t0\t1\nC\t0.5\t0\t1\nD\t0.1\t0\t1\n")
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"A": 1, "B": 2.5, "C": 2.5, "E": 4}))
    out = run_cli("correlate", lb, "--official", official, "--format", "tsv")
    header, row = out.out.splitlines()
    values = dict(zip(header.split("\t"), row.split("\t"), strict=True))
    assert values["kendall"] == "1.0000" and values["n_systems"] == "3" and values["missing"] == "D,E"
    md = run_cli("correlate", lb, "--official", official, "--format", "md")
    assert "Missing (only in leaderboard): D" in md.out and "Missing (only in official): E" in md.out


def test_bad_leaderboard_line(tmp_path):
    lb = tmp_path / "lb.tsv"
    lb.write_text("A\t0.9\nB\tlots\n")
    official = tmp_path / "o.json"
    official.write_text('{"A": 1, "B": 2}')
    out = run_cli("correlate", lb, "--official", official)
    assert out.code == 2 and f"{lb}:2:" in out.err and "Traceback" not in out.err


@pytest.mark.parametrize("args, warned", [(("--bootstrap", "50"), True), ((), False), (("--bootstrap", "0"), False)])
def test_bootstrap_asked_of_a_leaderboard_without_per_query_values_says_why_there_is_no_interval(
        cli, tmp_path, args, warned):
    lb = tmp_path / "lb.tsv"
    lb.write_text("system\tscore\nA\t0.9\nB\t0.5\nC\t0.4\nD\t0.1\n")
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"A": 1, "B": 2, "C": 3, "D": 4}))
    out = cli("correlate", lb, "--official", official, "--format", "json", *args)
    assert out.code == 0, out.err
    data = json.loads(out.out)
    assert data["confidence_intervals"] is None
    message = "no confidence intervals, " + str(lb) + " has no per-query values"
    assert (message in out.err) is warned and any(message in w for w in data["warnings"]) is warned
