"""Correlations AutoJudge reports: `correlate` gives `tauap_b` and `kendall@10` equal to autojudge-evaluate's
own LeaderboardEvaluator (from PyPI) on DL19, and AutoJudge's loaders read Proctor's leaderboards (ir-measures,
tot, jsonl) to the same numbers; the statistics against pyircore directly on hand-made lists with ties."""

from __future__ import annotations

import contextlib
import io
import json
import math
import random

import pytest

from conftest import DL19
from proctor.analyze.correlation import STATISTICS, kendall_tau_b, tauap_b

FORMATS = {"ir-measures": "ir_measures", "tot": "tot", "jsonl": "jsonl"}


@pytest.fixture(scope="module")
def autojudge(peer_nltk):
    """autojudge-evaluate, imported with the local NLTK folder (it reads stopwords at import)."""
    return pytest.importorskip("autojudge_evaluate.evaluation")


def test_tauap_b_is_pyircores_with_ties(autojudge):
    from autojudge_evaluate.pyircore import tauap_b as theirs

    rng = random.Random(7)
    for n in (3, 5, 12, 37):
        for _ in range(20):
            official = [rng.choice([1, 2, 3, 4, 5]) for _ in range(n)]  # ties on both sides
            predicted = [rng.choice([0.1, 0.2, 0.3, 0.5]) for _ in range(n)]
            if len(set(official)) == 1 or len(set(predicted)) == 1:  # undefined, as rho and tau are there;
                assert math.isnan(tauap_b(predicted, official))  # pyircore gives a number (-0.5, ...)
            else:
                assert tauap_b(predicted, official) == theirs(official, predicted)


@pytest.fixture(scope="module")
def dl19_boards(dl19_store, tmp_path_factory):
    """An EXAM-Cover leaderboard of DL19 in AutoJudge's formats, and the official leaderboard as AutoJudge
    truth (ir_measures rows, score = -rank)."""
    from proctor.cli import main

    folder = tmp_path_factory.mktemp("autojudge")
    boards = {}
    for fmt in FORMATS:
        boards[fmt] = folder / f"cover.{fmt}"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["leaderboard", "--store", str(dl19_store), "--metric", "cover", "--min-grade", "3",
                         "--format", fmt]) == 0
        boards[fmt].write_text(out.getvalue())
    official = json.loads((DL19 / "dl19-official-leaderboard.json").read_text())
    truth = folder / "truth.ir_measures"
    truth.write_text("".join(f"{run}\tall\tofficial\t{-rank}\n" for run, rank in official.items()))
    return boards, truth, DL19 / "dl19-official-leaderboard.json"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_correlate_equals_autojudge_meta_evaluate_on_dl19(cli, autojudge, dl19_boards, fmt):
    boards, truth, official = dl19_boards
    evaluator = autojudge.LeaderboardEvaluator(truth, on_missing="skip", truth_format="ir_measures",
                                               eval_format=FORMATS[fmt],
                                               correlation_methods=["kendall", "spearman", "tauap_b", "kendall@10"])
    (theirs,) = evaluator.evaluate(boards[fmt]).values()
    result = cli("correlate", boards[fmt], "--official", official, "--format", "json", "--bootstrap", "0")
    assert result.code == 0, result.err
    ours = json.loads(result.out)
    assert ours["n_systems"] == 36
    for name in ("tauap_b", "kendall@10", "kendall", "spearman"):
        assert ours[name] == pytest.approx(theirs[name], rel=0, abs=1e-12), name
    assert ours["tauap_b"] != ours["tau_ap"]  # AutoJudge's variant is its own number


def test_kendall_at_10_is_tau_b_over_the_official_top_10():
    official = [float(-r) for r in range(1, 16)]
    predicted = [15 - i if i < 10 else 100.0 + i for i in range(15)]  # top 10 in order, the rest above them
    assert STATISTICS["kendall@10"](predicted, official) == pytest.approx(1.0, rel=0, abs=1e-12)
    assert kendall_tau_b(predicted, official) < 0.5
