"""Calibration on a few human labels: every repeat's chosen rule, held-out kappa, alpha and leaderboard tau are
checked against the shared label code (`proctor qrels --min-questions m`), scikit-learn, krippendorff, scipy and
the leaderboard code itself; the curve's JSON keys are the issue's; bad options exit 2; reviewer verdicts feed
it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from conftest import raw_write, seed_demo
from fake_openai import FakeOpenAI
from proctor import api
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.measures import parse_measure


def _kappa(a: list[int], b: list[int]) -> float:
    return float(cohen_kappa_score(a, b)) if len(set(a) | set(b)) > 1 else math.nan


def test_each_repeat_agrees_with_sklearn_krippendorff_scipy_and_the_leaderboard(dl19_store):
    store = api.open_store(dl19_store)
    result = api.calibrate(store, budgets=[3], repeats=3, seed=7, judged_relevant=2)
    judgments = store.corpus.judgments()
    labels = {m: api.labels(store, api.LabelChoice(min_questions=m)).qrels for m in range(1, 11)}
    topics = sorted(set(judgments) & set(labels[1]))
    assert result["topics"] == len(topics) == 43 and result["rules"] == 50

    def pairs(ts, tau, m):
        keys = [(t, p) for t in ts for p in sorted(judgments[t]) if p in labels[1][t]]
        return [int(labels[m][t][p] >= tau) for t, p in keys], [int(judgments[t][p] >= 2) for t, p in keys]

    ranked = store.corpus.ranked_lists()
    p20 = parse_measure("P@20")
    for row in result["repeats_detail"]:
        sampled = set(row["sampled"])
        held = [t for t in topics if t not in sampled]
        on_sample = {(tau, m): _kappa(*pairs(sorted(sampled), tau, m)) for m in range(1, 11) for tau in range(1, 6)}
        best = max(v for v in on_sample.values() if not math.isnan(v))
        assert on_sample[(row["min_grade"], row["min_questions"])] == pytest.approx(best, abs=1e-12)
        predicted, human = pairs(held, row["min_grade"], row["min_questions"])
        assert row["kappa"] == pytest.approx(cohen_kappa_score(predicted, human), abs=1e-12)
        assert row["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=[predicted, human],
                                                                level_of_measurement="nominal"), abs=1e-12)
        assert row["pairs"] == len(predicted)
        rule = {t: {p: int(g >= row["min_grade"]) for p, g in labels[row["min_questions"]][t].items()} for t in held}
        ours = measure_leaderboard(ranked, rule, p20, 1).scores()
        theirs = measure_leaderboard(ranked, {t: judgments[t] for t in held}, p20, 2).scores()
        systems = sorted(ours)
        expected = kendalltau([ours[s] for s in systems], [theirs[s] for s in systems], variant="b").statistic
        assert row["tau"] == pytest.approx(expected, abs=1e-12)
        for name, kappa in row["fixed"].items():
            tau, m = (int(x.split("=")[1]) for x in name.split(","))
            assert kappa == pytest.approx(_kappa(*pairs(held, tau, m)), abs=1e-12)
    store.close()


def test_the_curve_has_the_issues_keys_and_a_plot(cli, dl19_store, tmp_path):
    png = tmp_path / "curve.png"
    done = cli("calibrate", "--store", dl19_store, "--budget", "1,2,5", "--repeats", "4", "--judged-relevant", "2",
               "--plot", png)
    assert done.code == 0, done.err
    result = json.loads(done.out)
    assert [p["topics"] for p in result["curve"]] == [1, 2, 5]
    for point in result["curve"]:
        assert {"topics", "kappa_median", "kappa_low", "kappa_high", "tau_median"} <= set(point)
        kappas = [r["kappa"] for r in result["repeats_detail"] if r["topics"] == point["topics"]]
        assert point["kappa_median"] == pytest.approx(float(np.median(kappas)))
        assert point["kappa_low"] <= point["kappa_median"] <= point["kappa_high"]
    assert result["best_fixed"] == {"min_grade": 4, "min_questions": 2, "kappa_all_topics": pytest.approx(0.3614,
                                                                                                         abs=5e-5)}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = cli("calibrate", "--store", dl19_store, "--budget", "1,2,5", "--repeats", "4", "--judged-relevant", "2")
    assert json.loads(again.out) == result  # the same seed draws the same topics
    other = cli("calibrate", "--store", dl19_store, "--budget", "1,2,5", "--repeats", "4", "--judged-relevant", "2",
                "--seed", "1")
    assert json.loads(other.out)["repeats_detail"] != result["repeats_detail"]
    table = cli("calibrate", "--store", dl19_store, "--budget", "5", "--repeats", "2", "--format", "tsv")
    assert table.code == 0 and table.out.splitlines()[0].startswith("topics\tkappa_median\tkappa_low\tkappa_high")


@pytest.mark.parametrize("args, message", [
    (("--budget", "0"), "--budget 0: expected positive numbers"),
    (("--budget", "x"), "--budget x: expected numbers"),
    (("--budget", "43"), "--budget 43: the grade set and the judgments share 43 topics"),
    (("--budget", "5", "--measure", "nDCG@10"), "--measure nDCG@10: calibrate's leaderboard is precision"),
    (("--budget", "5", "--judged-relevant", "4"), "--judged-relevant 4: no judgment reaches it"),
    (("--budget", "5", "--qrels", "reviewers"), "--qrels reviewers:"),
    (("--budget", "5", "--plot", "curve.svg"), "--plot curve.svg: give a .png file name"),
    (("--budget", "5", "--grade-set", "nope"), "no grade set matches --grade-set nope"),
])
def test_bad_options_exit_2_with_one_clear_message(cli, dl19_store, args, message):
    refused = cli("calibrate", "--store", dl19_store, *args)
    assert refused.code == 2 and message in refused.err and "Traceback" not in refused.err
    assert refused.out == ""


def _graded_demo(cli, tmp_path, method: str) -> Path:
    """The demo collection graded by the test server with `method`."""
    store = seed_demo(tmp_path)
    with FakeOpenAI() as server:
        graded = cli("grade", "--store", store, "--method", method, "--llm", "openai:judge", "--base-url",
                     server.base_url)
    assert graded.code == 0, graded.err
    return store


def test_reviewer_verdicts_feed_calibration(cli, tmp_path):
    store = _graded_demo(cli, tmp_path, "self-rating")
    opened = api.open_store(store)
    official = opened.corpus.judgments()
    verdicts = {(q, p): 1 - min(rel, 1) for q in sorted(official)[:3] for p, rel in official[q].items()}
    for (q, p), rel in verdicts.items():  # every verdict contradicts the imported judgment
        opened.review.add_review_judgment(q, p, rel, "tester", None)
    opened.close()
    runs = {}
    for which in ("official", "reviewers", "official+reviewers"):
        done = cli("calibrate", "--store", store, "--budget", "1", "--repeats", "3", "--qrels", which)
        assert done.code == 0, done.err
        runs[which] = json.loads(done.out)
    assert runs["reviewers"]["topics"] == 3 and runs["official"]["topics"] == len(official)
    assert runs["reviewers"]["judgments"].startswith("reviewer judgments")
    assert runs["official+reviewers"]["fixed_rules"] != runs["official"]["fixed_rules"]


def test_a_store_without_judgments_is_refused(cli, tmp_path):
    store = Path(seed_demo(tmp_path))
    empty = tmp_path / "empty.db"
    opened = api.open_store(store)
    copy = opened.copy_to(empty)
    opened.close()
    copy.close()
    raw_write(empty, "DELETE FROM judgments")
    refused = cli("calibrate", "--store", empty, "--budget", "1")
    assert refused.code == 2 and ("holds no judgments" in refused.err or "holds no grades" in refused.err)


def test_a_direct_method_has_one_grade_per_passage_so_only_its_cut_is_chosen(cli, tmp_path):
    store = _graded_demo(cli, tmp_path, "umbrela")
    done = cli("calibrate", "--store", store, "--budget", "1,2", "--repeats", "3")
    assert done.code == 0, done.err
    result = json.loads(done.out)
    opened = api.open_store(store)
    top = max(g for per in api.labels(opened).qrels.values() for g in per.values())
    opened.close()
    assert result["rules"] == top  # tau = 1..top at m = 1
    assert {r["min_questions"] for r in result["repeats_detail"] if "min_questions" in r} == {1}
    assert {(f["min_grade"], f["min_questions"]) for f in result["fixed_rules"]} == {
        (t, 1) for t in (1, 3, 4, 5) if t <= top}


def test_an_undefined_agreement_is_null_not_nan(cli, tmp_path):
    store = seed_demo(tmp_path)
    with FakeOpenAI(reply=lambda prompt: "3" if "bees" in prompt else "0") as server:  # q1's passages relevant
        graded = cli("grade", "--store", store, "--method", "umbrela", "--llm", "openai:judge", "--base-url",
                     server.base_url)
    assert graded.code == 0, graded.err
    qrels = tmp_path / "judged.qrels"  # q1 varies; q2 and q3 hold no relevant passage, as their labels say
    qrels.write_text("q1 0 d101 3\nq1 0 d102 0\nq2 0 d201 0\nq2 0 d202 0\nq3 0 d301 0\nq3 0 d302 0\n")
    done = cli("calibrate", "--store", store, "--budget", "1", "--repeats", "10", "--qrels", qrels)
    assert done.code == 0, done.err
    assert "NaN" not in done.out
    rows = json.loads(done.out)["repeats_detail"]
    learnt_on_q1 = [r for r in rows if r["sampled"] == ["q1"]]
    assert learnt_on_q1 and all(r["kappa"] is None and r["alpha"] is None for r in learnt_on_q1)
    assert all("kappa" not in r for r in rows if r["sampled"] != ["q1"])  # undecided: no variation to learn from


# (case, self-ratings of the sampled topic's passages, their judgments, a rule can be chosen on it)
DRAWS = [
    ("judgments vary", {"p1": 5, "p2": 1, "p3": 3}, {"p1": 2, "p2": 0, "p3": 1}, True),
    ("no relevant judgment, labels vary", {"p1": 5, "p2": 1, "p3": 3}, {"p1": 0, "p2": 0, "p3": 0}, False),
    ("every pair judged relevant, labels vary", {"p1": 5, "p2": 1, "p3": 3}, {"p1": 1, "p2": 2, "p3": 1}, False),
    ("no relevant judgment, every label 0", {"p1": 0, "p2": 0, "p3": 0}, {"p1": 0, "p2": 0, "p3": 0}, False),
]


@pytest.mark.parametrize("case, ratings, judged, decided", DRAWS, ids=[d[0] for d in DRAWS])
def test_a_draw_whose_judgments_do_not_vary_is_undecided(tmp_path, case, ratings, judged, decided):
    from trust_fixture import tiny_store

    other = {"q1": {"p1": 4, "p2": 0, "p3": 2, "p4": 5}}  # the other topic: judgments and labels vary
    store = tiny_store(tmp_path, {**other, "q2": ratings},
                       {"A": {"q1": ["p1", "p2"], "q2": ["p1", "p2"]}, "B": {"q1": ["p3", "p4"], "q2": ["p3", "p1"]}},
                       judgments={"q1": {"p1": 1, "p2": 0, "p3": 0, "p4": 1}, "q2": judged})
    opened = api.open_store(store)
    result = api.calibrate(opened, budgets=[1], repeats=12, seed=3, measure="P@2")
    opened.close()
    on_q2 = [r for r in result["repeats_detail"] if r["sampled"] == ["q2"]]
    assert on_q2 and all(("min_grade" in r) is decided and ("undecided" in r) is not decided for r in on_q2)
    assert all("min_grade" in r for r in result["repeats_detail"] if r["sampled"] == ["q1"])
    (point,) = result["curve"]
    assert point["undecided"] == (0 if decided else len(on_q2))
    assert sum(point["rules_chosen"].values()) == 12 - point["undecided"]
