"""The options of `compare`, `correlate`, `agreement` and `calibrate` as the API's parameters: each verb takes its
option model or its fields by name (the same result), the command line reads the same model back, the command
plumbing lives in `proctor.api.commands`, and a calibration option of `ppi` alone is refused without it."""

from __future__ import annotations

import json

import pytest

from proctor import api
from proctor.api import commands
from proctor.api.types import PPICalibration
from trust_fixture import tiny_store

RATINGS = {"q1": {"a": 5, "b": 1, "c": 4}, "q2": {"a": 4, "b": 4, "c": 0}, "q3": {"a": 1, "b": 5, "c": 2},
           "q4": {"a": 0, "b": 0, "c": 5}, "q5": {"a": 3, "b": 2, "c": 3}}
JUDGED = {q: {p: int(r >= 3) for p, r in per.items()} for q, per in RATINGS.items()}
ORDER = {"A": ["a", "b", "c"], "B": ["b", "c", "a"], "C": ["c", "a", "b"], "D": ["a", "c", "b"]}


@pytest.fixture
def store(tmp_path):
    path = tiny_store(tmp_path, RATINGS, {run: {q: ORDER[run] for q in RATINGS} for run in ORDER}, judgments=JUDGED)
    opened = api.open_store(path)
    yield opened
    opened.close()


@pytest.fixture
def board_file(store, tmp_path):
    path = tmp_path / "p2.json"
    path.write_text(api.render(api.leaderboard(store, "P@2", min_grade=3), "json", per_query=True))
    return path


def test_each_verb_takes_its_model_or_its_fields_by_name(store, board_file, tmp_path):
    chosen = api.SignificanceOptions(test="t", correction="bonferroni", alpha=0.1)
    by_model, by_name = api.compare(board_file, chosen), api.compare(board_file, test="t", correction="bonferroni",
                                                                     alpha=0.1)
    assert api.render(by_model, "json") == api.render(by_name, "json")
    assert json.loads(api.render(by_model, "json"))["tests"] == ["t"]
    in_memory = api.compare(api.leaderboard(store, "P@2", min_grade=3))
    assert by_model.title == str(board_file) and in_memory.title == ""
    assert api.render(in_memory, "json") == api.render(api.compare(board_file), "json")
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"A": 1, "B": 2, "C": 3, "D": 4}))
    options = api.CorrelationOptions(bootstrap=50, seed=3)
    assert api.correlate(board_file, official, options) == api.correlate(board_file, official, bootstrap=50, seed=3)
    assert api.agreement(store, api.AgreementOptions(merges=">=1", min_questions=[1])) == \
        api.agreement(store, merges=">=1", min_questions="1")
    curve = api.calibrate(store, options=api.CalibrationOptions(budgets=(2,), repeats=3, seed=1, measure="P@2"))
    assert curve == api.calibrate(store, budgets="2", repeats=3, seed=1, measure="P@2")


def test_the_command_line_reads_the_same_model(cli, store, board_file, tmp_path):
    shell = cli("compare", board_file, "--test", "t", "--correction", "bonferroni", "--alpha", "0.1", "--format",
                "json")
    assert shell.code == 0, shell.err
    assert shell.out == api.render(api.compare(board_file, test="t", correction="bonferroni", alpha=0.1), "json")
    shell = cli("agreement", "--store", store.path, "--merges", ">=1", "--min-questions", "1")
    assert json.loads(shell.out) == json.loads(api.render(api.agreement(store, merges=">=1", min_questions=[1]),
                                                          "json"))
    curve = cli("calibrate", "--store", store.path, "--budget", "2", "--repeats", "3", "--measure", "P@2")
    assert json.loads(curve.out) == json.loads(api.render(api.calibrate(store, budgets=[2], repeats=3,
                                                                        measure="P@2"), "json"))


def test_calibrate_with_ppi_is_the_prediction_powered_validation(cli, store):
    made = api.calibrate(store, ppi=True, budgets=[2, 3], repeats=4, measure="P@2", min_grade=3)
    assert isinstance(made, PPICalibration) and [p["topics"] for p in made["curve_ppi"]] == [2, 3]
    assert made["repeats"] == 4 and made["confidence"] == api.PPIOptions.confidence == 0.95
    shell = cli("calibrate", "--store", store.path, "--ppi", "--budget", "3,2", "--repeats", "4", "--measure", "P@2",
                "--min-grade", "3")
    assert shell.code == 0, shell.err
    assert json.loads(shell.out) == json.loads(api.render(made, "json"))


def test_options_of_ppi_alone_are_refused_without_it(cli, store):
    with pytest.raises(api.UsageError, match=r"^min_grade and confidence apply to ppi only$"):
        api.calibrate(store, budgets=[2], min_grade=3)
    with pytest.raises(api.UsageError, match=r"^min_grade and confidence apply to ppi only$"):
        commands.calibration_request(confidence=0.9)
    refused = cli("calibrate", "--store", store.path, "--budget", "2", "--confidence", "0.9")
    assert refused.code == 2 and refused.err == "proctor: error: --min-grade and --confidence apply to --ppi only\n"


def test_the_command_plumbing_lives_in_commands_and_one_name_per_verb_in_the_api():
    for name in ("significance", "compare_file", "correlation", "official_leaderboard", "SignificanceSettings",
                 "ComparisonReport", "calibration_request", "CalibrationRequest", "check_ppi_calibration",
                 "ppi_calibration", "ppi_leaderboard"):
        assert name not in api.__all__, name
    for name in ("compare", "correlate", "agreement", "calibrate", "ppi", "SignificanceOptions", "CorrelationOptions",
                 "AgreementOptions", "CalibrationOptions", "PPIOptions"):
        assert name in api.__all__, name
    assert callable(api.ppi)  # the verb, not the module of the same name
    assert {"ComparisonReport", "CalibrationRequest", "calibration_request", "official_leaderboard"} <= \
        set(commands.__all__)
    assert commands.calibration_request(budgets="3,1").options.budgets == [3, 1]


def test_one_default_per_option():
    assert api.CalibrationOptions.repeats == api.CorrelationOptions.repeats  # borrowed, not written twice
    assert api.CalibrationOptions.confidence == api.PPIOptions.confidence
    assert api.CalibrationOptions.qrels == api.PPIOptions.human_qrels == "official"
    for model in (api.SignificanceOptions, api.CorrelationOptions, api.CalibrationOptions, api.PPIOptions):
        assert model.seed == 0
    for model in (api.CorrelationOptions, api.AgreementOptions, api.CalibrationOptions, api.PPIOptions):
        assert model.judged_relevant == 1  # trec_eval's -l, EvaluationOptions' one default


def test_the_api_refuses_what_the_command_line_cannot_give(store, board_file):
    board = api.leaderboard(store, "P@2", min_grade=3)
    with pytest.raises(api.UsageError, match=r"^measure reads a leaderboard file; a leaderboard in memory has its one"):
        api.compare(board, measure="P@2")
    with pytest.raises(api.UsageError, match=r"^test 'both ways': choose one of both, t, randomization$"):
        api.compare(board_file, test="both ways")
    with pytest.raises(api.UsageError, match=r"^correction 'sidak': choose one of holm, bonferroni, none$"):
        api.compare(board, api.SignificanceOptions(correction="sidak"))
    with pytest.raises(api.UsageError, match=r"^ties 'first': choose one of average, random$"):
        api.correlate(board_file, board_file, ties="first")
