"""Prediction-powered leaderboards (`leaderboard --human-qrels`, `calibrate --ppi`): the estimate, its interval and
the human-only one checked against the formulas computed by hand (Python's `statistics`, scipy's t quantile) on
tiny stores, for the classic estimate (weight 1) and the tuned one (PPI++); a judge with random labels and a
perfect judge; the refusals; and the validation on DL19 at 5 judged topics."""

from __future__ import annotations

import json
import math
import random
import statistics

import numpy as np
import pytest
from scipy.stats import t as student_t

from proctor.trust.ppi import TUNE_FROM, estimate
from trust_fixture import tiny_store

RUNS = ("A", "B", "C")
ORDER = {"A": ["a", "b"], "B": ["b", "c"], "C": ["c", "a"]}  # every run's first two passages, every topic


def _store(tmp_path, ratings: dict[str, dict[str, int]], judgments: dict[str, dict[str, int]]):
    runs = {run: {q: ORDER[run] for q in ratings} for run in RUNS}
    return tiny_store(tmp_path, ratings, runs, judgments=judgments)


def _p2(labels: dict[str, int], run: str, level: int) -> float:
    """P@2 of a run's two passages, by hand."""
    return sum(labels.get(p, 0) >= level for p in ORDER[run]) / 2


def _clip01(v: float) -> float:
    return min(1.0, max(0.0, v))


def _by_hand(ratings, judgments, judged, lam_of, confidence=0.95):
    """{run: (ppi, low, high, weight, judge, human, human_low, human_high)} from the formulas."""
    out = {}
    n, total = len(judged), len(ratings)
    for run in RUNS:
        j_all = [_p2(ratings[q], run, 3) for q in sorted(ratings)]
        h = [_p2(judgments[q], run, 1) for q in judged]
        j = [_p2(ratings[q], run, 3) for q in judged]
        lam, df = lam_of(h, j, j_all)
        r = [x - lam * y for x, y in zip(h, j, strict=True)]
        mean_r = statistics.fmean(r)
        se = math.sqrt((1 - n / total) * sum((x - mean_r) ** 2 for x in r) / df / n)
        q = student_t.ppf((1 + confidence) / 2, df)
        ppi = lam * statistics.fmean(j_all) + mean_r
        h_se = math.sqrt((1 - n / total) * statistics.variance(h) / n)
        hq = student_t.ppf((1 + confidence) / 2, n - 1)
        c = _clip01  # P@2 lies in [0, 1]: so do the estimates and interval ends
        out[run] = (c(ppi), c(ppi - q * se), c(ppi + q * se), lam, statistics.fmean(j_all), statistics.fmean(h),
                    c(statistics.fmean(h) - hq * h_se), c(statistics.fmean(h) + hq * h_se))
    return out


KEYS = ("ppi", "ppi_low", "ppi_high", "ppi_weight", "judge", "human", "human_low", "human_high")

RATINGS = {"q1": {"a": 5, "b": 1, "c": 4}, "q2": {"a": 4, "b": 4, "c": 0}, "q3": {"a": 1, "b": 5, "c": 2},
           "q4": {"a": 0, "b": 0, "c": 5}, "q5": {"a": 3, "b": 2, "c": 3}}
JUDGED = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"a": 1, "b": 0, "c": 0}, "q4": {"a": 0, "b": 0, "c": 1}}


def test_classic_ppi_matches_the_formulas_by_hand(cli, tmp_path):
    store = _store(tmp_path, RATINGS, JUDGED)
    r = cli("leaderboard", "--store", store, "--measure", "P@2", "--min-grade", "3", "--human-qrels", "official",
            "--format", "json", "--floor-queries", "0")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["human_topics"] == ["q1", "q2", "q4"] and data["n_judged"] == 3 and data["n_topics"] == 5
    assert data["confidence"] == 0.95 and "finite-population correction" in data["method"]
    assert data["judge_method"] == "self-rating" and data["human_qrels"] == "official"
    expected = _by_hand(RATINGS, JUDGED, ["q1", "q2", "q4"], lambda h, j, j_all: (1.0, len(h) - 1))
    for row in data["systems"]:
        assert [row[k] for k in KEYS] == pytest.approx(list(expected[row["system"]]), abs=1e-12)
        assert row["score"] == row["ppi"] and row["n_queries"] == 5
    assert [row["system"] for row in data["systems"]] == sorted(expected, key=lambda s: -expected[s][0])


def test_tuned_ppi_matches_the_formulas_by_hand(cli, tmp_path):
    rng = random.Random(3)
    ratings = {f"t{i:02d}": {p: rng.randint(0, 5) for p in "abc"} for i in range(1, 21)}
    judgments = {q: {p: int(g >= 3) if rng.random() < 0.8 else 1 - int(g >= 3) for p, g in per.items()}
                 for q, per in ratings.items()}
    judged = sorted(rng.sample(sorted(ratings), TUNE_FROM + 1))
    store = _store(tmp_path, ratings, judgments)
    r = cli("leaderboard", "--store", store, "--measure", "P@2", "--min-grade", "3", "--human-qrels", "official",
            "--human-topics", ",".join(judged), "--format", "json", "--confidence", "0.9")
    assert r.code == 0, r.err

    def tuned(h, j, j_all):
        return min(1.0, max(0.0, statistics.covariance(h, j) / statistics.variance(j_all))), len(h) - 2

    expected = _by_hand(ratings, judgments, judged, tuned, confidence=0.9)
    data = json.loads(r.out)
    assert data["n_judged"] == TUNE_FROM + 1 and "PPI++" in data["method"] and "n-2" in data["method"]
    for row in data["systems"]:
        assert [row[k] for k in KEYS] == pytest.approx(list(expected[row["system"]]), abs=1e-12)
    assert any(0 < row["ppi_weight"] < 1 for row in data["systems"])


def _width(e) -> float:
    return e.ppi_high - e.ppi_low


def test_a_judge_with_random_labels_costs_at_most_five_percent_over_human_only():
    rng = np.random.default_rng(0)
    ratios = []
    for _ in range(200):  # 60 topics, 30 judged; human scores and an unrelated judge
        human = {f"t{i}": float(v) for i, v in enumerate(rng.beta(2, 3, 60))}
        judge = {t: float(v) for t, v in zip(human, rng.beta(2, 3, 60), strict=True)}
        judged = sorted(rng.choice(sorted(human), 30, replace=False))
        e = estimate(judge, {t: human[t] for t in judged})
        ratios.append(_width(e) / (e.human_high - e.human_low))
    assert float(np.median(ratios)) <= 1.05
    classic = estimate(judge, {t: human[t] for t in judged}, tune_from=10 ** 9)  # the last draw with weight 1
    assert _width(classic) > 1.2 * (classic.human_high - classic.human_low)  # it would cost far more


def test_a_perfect_judge_leaves_no_error_and_a_near_perfect_one_little():
    rng = np.random.default_rng(1)
    human = {f"t{i}": float(v) for i, v in enumerate(rng.beta(2, 3, 43))}
    judged = sorted(rng.choice(sorted(human), 5, replace=False))
    target = statistics.fmean(human.values())
    perfect = estimate(human, {t: human[t] for t in judged})
    assert perfect.ppi == pytest.approx(target, abs=1e-12) and _width(perfect) == pytest.approx(0, abs=1e-12)
    assert abs(perfect.judge - target) < 1e-12  # the judge-only score has no error either
    noisy = {t: v + float(rng.normal(0, 0.01)) for t, v in human.items()}
    near = estimate(noisy, {t: human[t] for t in judged})
    assert near.ppi_low <= target <= near.ppi_high
    assert _width(near) < 0.2 * (near.human_high - near.human_low)
    assert abs(near.ppi - target) <= 0.02 and abs(near.judge - target) <= 0.02


def test_intervals_of_a_measure_in_zero_one_stay_in_it_and_others_are_not_clipped():
    human = {"t1": 1.0, "t2": 0.6, "t3": 1.0, "t4": 1.0, "t5": 1.0, "t6": 0.9}  # P@k-like: near the top
    judge = {t: 1.0 for t in human}
    e = estimate(judge, {t: human[t] for t in ("t1", "t2", "t3")})
    unclipped = statistics.fmean([1.0, 0.6, 1.0]) + student_t.ppf(0.975, 2) * math.sqrt(
        (1 - 3 / 6) * statistics.variance([1.0, 0.6, 1.0]) / 3)
    assert unclipped > 1 and e.ppi_high == 1.0 and e.human_high == 1.0 and 0 <= e.ppi_low < e.ppi <= 1
    scaled = estimate({t: 3 * v for t, v in judge.items()}, {t: 3 * human[t] for t in ("t1", "t2", "t3")})
    assert scaled.ppi_high == pytest.approx(3 * unclipped)  # a measure not bounded by 1 is left as it is


def test_tsv_and_markdown_carry_the_same_columns_and_rank_intervals(cli, tmp_path):
    store = _store(tmp_path, RATINGS, JUDGED)
    args = ("leaderboard", "--store", store, "--measure", "P@2", "--min-grade", "3", "--human-qrels", "official")
    tsv = cli(*args)
    header, *rows = tsv.out.splitlines()
    assert header.split("\t") == ["system", "score", "stderr", "n_queries", "measure", "labels", *KEYS, "rank_low",
                                  "rank_high"]
    assert len(rows) == 3 and "human-judged topics (3 of 5): q1, q2, q4" in tsv.err
    data = json.loads(cli(*args, "--format", "json").out)
    for line, row in zip(rows, data["systems"], strict=True):
        cells = line.split("\t")
        assert cells[0] == row["system"] and float(cells[6]) == pytest.approx(row["ppi"], abs=1e-6)
        assert 1 <= row["rank_low"] <= row["rank_high"] <= 3
    md = cli(*args, "--format", "md").out
    assert "| rank | system | " + " | ".join((*KEYS, "rank_low", "rank_high")) + " |" in md
    assert "3 of 5 topics judged by humans (q1, q2, q4)" in md


def test_a_system_ahead_on_every_judged_topic_by_a_constant_gets_rank_one():
    judge = {"good": {f"t{i}": 0.5 + 0.01 * i for i in range(10)}, "bad": {f"t{i}": 0.1 + 0.01 * i for i in range(10)}}
    human = {"good": {f"t{i}": 0.6 + 0.02 * (i % 3) for i in range(5)}, "bad": {f"t{i}": 0.2 + 0.02 * (i % 3)
                                                                           for i in range(5)}}
    from proctor.trust.ppi import rank_intervals

    found = {s: estimate(judge[s], human[s]) for s in judge}
    assert rank_intervals(found) == {"good": (1, 1), "bad": (2, 2)}


@pytest.mark.parametrize("args, message", [
    (["--human-topics", "1"], "--human-topics: 1 judged topic(s); a prediction-powered interval needs at least 2"),
    (["--human-topics", "q1"], "--human-topics: 1 judged topic(s)"),
    (["--human-topics", "q1,q3,q9"], "--human-topics: no human judgments (or no judge scores) for topic(s) q3, q9"),
    (["--human-topics", "4"], "--human-topics 4: only 3 topics have human judgments"),
    (["--measure", "NumRet"], "NumRet: its score over topics is not the mean of per-topic values"),
    (["--metric", "cover", "--budget", "2"], "takes no --metric, --budget"),
    (["--intervals"], "takes no --intervals"),
    (["--qrels", "official"], "takes no --qrels"),
    (["--measure", "P(rel=2)@2"], "give the judge's threshold as --min-grade and the humans' as --judged-relevant"),
    (["--format", "trec"], "--human-qrels needs --format tsv, json or md"),
    (["--confidence", "1.5"], "--confidence must be a finite number in (0, 1) (got 1.5)"),
])
def test_refusals_are_one_clear_line(cli, tmp_path, args, message):
    store = _store(tmp_path, RATINGS, JUDGED)
    measure = [] if "--measure" in args else ["--measure", "P@2"]
    r = cli("leaderboard", "--store", store, *measure, "--min-grade", "3", "--human-qrels", "official", *args)
    assert r.code == 2 and message in r.err and "Traceback" not in r.err and r.out == ""
    assert len([line for line in r.err.splitlines() if line.startswith("proctor: error")]) == 1


def test_human_options_need_human_qrels(cli, tmp_path):
    store = _store(tmp_path, RATINGS, JUDGED)
    r = cli("leaderboard", "--store", store, "--measure", "P@2", "--min-grade", "3", "--human-topics", "2")
    assert r.code == 2 and "--human-topics and --judged-relevant need --human-qrels" in r.err


def test_drawn_topics_are_seeded(cli, tmp_path):
    store = _store(tmp_path, RATINGS, JUDGED)
    args = ("leaderboard", "--store", store, "--measure", "P@2", "--min-grade", "3", "--human-qrels", "official",
            "--human-topics", "2", "--format", "json")
    first, again = json.loads(cli(*args, "--seed", "4").out), json.loads(cli(*args, "--seed", "4").out)
    assert first == again and len(first["human_topics"]) == 2 and set(first["human_topics"]) <= set(JUDGED)


def test_dl19_five_judged_topics_cover_at_the_nominal_level(cli, dl19_store, tmp_path):
    """200 draws of 5 of the 43 topics (docs/trust.md: the coverage over all 962,598 draws is 0.952 for nDCG@10
    and 0.935 for P@20 with judgments >= 2; 200 draws read it within about +-0.015)."""
    png = tmp_path / "ppi.png"
    r = cli("calibrate", "--store", dl19_store, "--ppi", "--budget", "1,5", "--repeats", "200", "--measure",
            "nDCG@10", "--plot", png)
    assert r.code == 0, r.err
    data = json.loads(r.out)
    one, five = data["curve_ppi"]
    assert one["topics"] == 1 and one["coverage_ppi"] is None and one["error_ppi_median"] is not None
    assert five["topics"] == 5 and five["repeats"] == 200 and data["n_topics"] == 43 and data["systems"] == 37
    assert five["coverage_ppi"] >= 0.93 and five["weight_median"] == 1.0
    assert five["width_ppi_median"] < five["width_human_median"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p20 = cli("calibrate", "--store", dl19_store, "--ppi", "--budget", "5", "--repeats", "200", "--measure", "P@20",
              "--min-grade", "3", "--judged-relevant", "2", "--format", "json")
    point = json.loads(p20.out)["curve_ppi"][0]
    assert point["coverage_ppi"] >= 0.92 and point["width_ratio_median"] < 0.9


def test_the_review_apps_calibration_page_shows_the_leaderboard_corrected_by_the_reviewers(tmp_path):
    from proctor import api
    from proctor.review.app import create_app
    from test_grade_set_resolution import _get  # the app in this process: the page is tested, not the server

    store_path = _store(tmp_path, RATINGS, {})
    store = api.open_store(store_path)
    gid = store.grades.grade_sets()[0].id
    for p, verdict in JUDGED["q1"].items():
        store.review.add_review_judgment("q1", p, verdict, "alice", gid)
    store.close()
    app = create_app(store_path)
    try:
        status, short = _get(app, "/calibration")
        assert status == 200 and "Only 1 topic (q1) has reviewer verdicts: a prediction-powered leaderboard needs " \
            "verdicts on at least 2 topics" in short
        store = api.open_store(store_path)
        for q in ("q2", "q4"):
            for p, verdict in JUDGED[q].items():
                store.review.add_review_judgment(q, p, verdict, "alice", gid)
        store.close()
        status, page = _get(app, f"/calibration?gs={gid}&rel=1")  # verdicts added by another connection
    finally:
        app.state.review.store.close()
    assert status == 200 and "on 3 of 5 topics (q1, q2, q4), a verdict &ge; 1" in page
    store = api.open_store(store_path)
    expected = api.ppi(store, measures=["P@20"], min_grade=4, human_qrels="reviewers").boards()[0]
    store.close()
    assert expected["human_topics"] == ["q1", "q2", "q4"]
    for row in expected["systems"]:
        assert f"<td>{row['system']}</td><td class=\"n\">{row['ppi']:.3f}</td>" in page


@pytest.mark.usefixtures("stand_in_plots")  # asserts nothing about the plot files
def test_analyze_adds_the_prediction_powered_section(cli, tmp_path):
    store = _store(tmp_path, RATINGS, JUDGED)
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"A": 1, "B": 2, "C": 3}))
    out = tmp_path / "report"
    r = cli("analyze", "--store", store, "--official", official, "--out", out, "--measures", "P@2", "--plot-tau", "3",
            "--judged-relevant", "1", "--human-qrels", "official", "--human-topics", "q1,q4", "--floor-queries", "0")
    assert r.code == 0, r.err
    report = (out / "report.md").read_text()
    assert "## Prediction-powered leaderboard — self-rating / " in report and "on 2 of 5 topics \\(q1, q4\\)" in report
    # what the numbers rest on is a paragraph above the table, not only its caption (folded on long tables)
    page = (out / "report.html").read_text()
    said = page[page.index("<h2>Prediction-powered leaderboard"):page.index("<table", page.index("<h2>Prediction"))]
    assert "corrected by official judgments (relevance ≥ 1 counted relevant) on 2 of 5 topics: q1, q4. 95% " \
           "intervals; classic PPI, weight 1 on the judge." in said
    refused = cli("analyze", "--store", store, "--official", official, "--out", out, "--human-topics", "2")
    assert refused.code == 2 and "--human-topics needs --human-qrels" in refused.err
    negative = cli("analyze", "--store", store, "--official", official, "--out", out, "--human-qrels", "official",
                   "--seed", "-1")
    assert negative.code == 2 and "--seed must be 0 or more (got -1)" in negative.err


def test_the_runs_are_read_once(tmp_path, monkeypatch):
    from proctor import api
    from proctor.evaluate import sources

    store = api.open_store(_store(tmp_path, RATINGS, JUDGED))
    files = [str(tmp_path / f"{run}.run") for run in RUNS]
    reads, read = [], sources.read_runs
    monkeypatch.setattr(sources, "read_runs", lambda paths: reads.append(list(paths)) or read(paths))
    try:
        from_files = api.ppi(store, ["P@2"], min_grade=3, runs=files)
        stored = api.ppi(store, ["P@2"], min_grade=3)
    finally:
        store.close()
    assert reads == [files]  # the judge's leaderboard and the humans' from one reading
    assert from_files["systems"] == stored["systems"] and len(stored["systems"]) == len(RUNS)
