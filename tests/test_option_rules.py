"""Rules across an options model's fields are checked when the model is built, however it is built (directly,
`dataclasses.replace`, `from_args`): `CalibrationOptions` (`min_grade` and a `confidence` of its own only with
`ppi`; a P@k `measure` without it, any measure over labels with it) and `ResponseCacheOptions` (`cache_refresh`
needs `cache_dir`); the command line keeps its words and exit 2, before any store is opened. A measure option's
refusal names the option; the verbs' re-checks that the models make redundant are gone, the refusals stay."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest

from proctor import api
from proctor.api import commands
from proctor.errors import UsageError
from proctor.options import kinds
from proctor.options.calibration import CalibrationOptions
from proctor.options.grading import ResponseCacheOptions
from proctor.options.model import add_options, from_args, toml_keys

ONLY_PPI = "min_grade and confidence apply to ppi only"
NOT_P_AT_K = "calibrate's leaderboard is precision at a depth, P@k (e.g. P@20)"


def _parsed(model: type, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_options(parser, model)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize("build", [
    lambda: CalibrationOptions(min_grade=3),
    lambda: CalibrationOptions(confidence=0.9),
    lambda: dataclasses.replace(CalibrationOptions(), min_grade=3),
    lambda: dataclasses.replace(CalibrationOptions(ppi=True, min_grade=3), ppi=False),
    lambda: from_args(CalibrationOptions, _parsed(CalibrationOptions, "--confidence", "0.9")),
    lambda: commands.calibration_request(CalibrationOptions(ppi=True, confidence=0.9), ppi=False),
], ids=["direct", "confidence", "replace", "ppi-taken-away", "from_args", "request"])
def test_options_of_ppi_alone_are_refused_when_the_model_is_built(build):
    with pytest.raises(UsageError) as refused:
        build()
    assert str(refused.value) == ONLY_PPI
    assert refused.value.as_options() == "--min-grade and --confidence apply to --ppi only"


def test_the_defaults_and_the_models_built_in_one_go_pass():
    assert CalibrationOptions() == CalibrationOptions(confidence=CalibrationOptions.confidence, min_grade=None)
    made = CalibrationOptions(ppi=True, min_grade=3, confidence=0.9, measure="nDCG@10")
    assert (made.min_grade, made.confidence, made.measure) == (3, 0.9, "nDCG@10")
    assert dataclasses.replace(CalibrationOptions(), ppi=True, min_grade=3).min_grade == 3  # one replace, not two
    assert commands.calibration_request(ppi=True, min_grade=3, budgets="3,1").options.budgets == [1, 3]
    assert from_args(CalibrationOptions, _parsed(CalibrationOptions)) == CalibrationOptions()  # argparse's defaults
    assert from_args(CalibrationOptions, _parsed(CalibrationOptions, "--confidence", "0.95")).confidence == 0.95
    assert CalibrationOptions(confidence=None).confidence is None  # "not given": the request fills the default in
    assert commands.calibration_request(confidence=None).options.confidence == CalibrationOptions.confidence
    assert ResponseCacheOptions() == ResponseCacheOptions(cache_dir=None, cache_refresh=False)
    assert ResponseCacheOptions(cache_dir="x", cache_refresh=True).cache_refresh


def test_the_two_models_are_built_by_no_experiment_file_or_autojudge_setting():
    """The other doors of a model (an experiment file's keys, AutoJudge's settings) take none of these fields: the
    three ways above are every way they are built."""
    from proctor.autojudge.settings import JudgeSettings

    assert toml_keys(ResponseCacheOptions) == {}
    settings = {f.name for f in dataclasses.fields(JudgeSettings)}
    assert not settings & {"cache_refresh", "cache_dir", "ppi", "confidence", "budgets"}


@pytest.mark.parametrize(("measure", "refused"), [
    ("AP", f"measure AP: {NOT_P_AT_K}"),
    ("P(rel=2)@20", f"measure P(rel=2)@20: {NOT_P_AT_K}"),
    ("nDCG@10", f"measure nDCG@10: {NOT_P_AT_K}"),
    ("P@2O", f"measure P@2O: {NOT_P_AT_K}"),
    ("P.10", None), ("P_5", None), ("P@20", None),
])
def test_the_calibrated_measure_is_precision_at_a_depth_when_built(measure, refused):
    if refused is None:
        assert CalibrationOptions(measure=measure).measure == measure
        assert dataclasses.replace(CalibrationOptions(), measure=measure).measure == measure
        return
    for build in (lambda: CalibrationOptions(measure=measure),
                  lambda: dataclasses.replace(CalibrationOptions(), measure=measure),
                  lambda: from_args(CalibrationOptions, _parsed(CalibrationOptions, "--measure", measure))):
        with pytest.raises(UsageError) as err:
            build()
        assert str(err.value) == refused
        assert err.value.as_options() == "--" + refused


def test_with_ppi_any_measure_over_labels_and_an_unknown_one_named_by_its_option():
    assert CalibrationOptions(ppi=True, measure="AP").measure == "AP"
    with pytest.raises(UsageError) as err:
        CalibrationOptions(ppi=True, measure="P@2O")
    assert str(err.value).startswith("unknown measure 'P@2O'") and str(err.value).endswith("; given as measure")
    assert err.value.as_options().endswith("; given as --measure")


def test_a_calibration_model_built_before_the_door_is_checked_by_the_verb(monkeypatch):
    monkeypatch.setattr(kinds, "KINDS", {})  # a process that imported proctor.options, not proctor.api
    unchecked = CalibrationOptions(measure="AP")
    monkeypatch.undo()
    with pytest.raises(UsageError, match=r"^measure AP: calibrate's leaderboard is precision at a depth"):
        commands.calibration_request(unchecked)


@pytest.mark.parametrize("build", [
    lambda: ResponseCacheOptions(cache_refresh=True),
    lambda: ResponseCacheOptions(cache_dir="", cache_refresh=True),
    lambda: dataclasses.replace(ResponseCacheOptions(cache_dir="d", cache_refresh=True), cache_dir=None),
    lambda: from_args(ResponseCacheOptions, _parsed(ResponseCacheOptions, "--cache-refresh")),
], ids=["direct", "empty", "replace", "from_args"])
def test_refreshing_no_response_cache_is_refused_when_built(build):
    with pytest.raises(UsageError) as refused:
        build()
    assert str(refused.value) == "cache_refresh refreshes the response cache of cache_dir DIR: name one"


def test_the_command_line_keeps_its_words_and_opens_no_store(cli, tmp_path):
    store = tmp_path / "absent.db"
    refused = cli("calibrate", "--store", store, "--budget", "2", "--min-grade", "3")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == "proctor: error: --min-grade and --confidence apply to --ppi only\n"
    refused = cli("calibrate", "--store", store, "--budget", "2", "--measure", "AP")
    assert refused.err == f"proctor: error: --measure AP: {NOT_P_AT_K}\n"
    refused = cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m", "--cache-refresh")
    assert refused.code == 2
    assert refused.err == ("proctor: error: --cache-refresh refreshes the response cache of --cache-dir DIR: name "
                           "one\n")
    assert not store.exists()


@pytest.mark.parametrize(("flag", "param"), [("--measures", "measures"), ("--plot-measure", "plot_measure"),
                                             ("--per-query-measure", "per_query_measure")])
def test_a_bad_measure_under_analyze_names_its_option(cli, tmp_path, flag, param):
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2}))
    with pytest.raises(UsageError) as refused:
        api.AnalysisOptions(**{param: "P@2O"})
    assert str(refused.value).startswith("unknown measure 'P@2O'; did you mean")  # the registry's words first
    assert str(refused.value).endswith(f"; given as {param}")
    result = cli("analyze", "--store", tmp_path / "absent.db", "--official", official, "--out", tmp_path / "out",
                 flag, "P@2O")
    assert result.code == 2 and result.out == "" and not (tmp_path / "out").exists()
    assert result.err.startswith("proctor: error: unknown measure 'P@2O'; did you mean")
    assert result.err.endswith(f"; given as {flag}\n")


def test_the_verbs_still_refuse_what_their_models_check(tmp_path):
    board = tmp_path / "board.json"
    board.write_text(json.dumps({"a": 0.5, "b": 0.25}))
    with pytest.raises(UsageError, match=r"^test 'z': choose one of both, t, randomization$"):
        api.compare(board, test="z")
    with pytest.raises(UsageError, match=r"^samples must be 100\.\.100000 \(got 5\)$"):
        api.compare(board, samples=5)
    with pytest.raises(UsageError, match=r"^ties 'first': choose one of average, random$"):
        api.correlate(board, board, ties="first")
    with pytest.raises(UsageError, match=r"^bootstrap must be 0\.\.100000 \(got -1\)$"):
        api.correlate(board, board, bootstrap=-1)
    with pytest.raises(UsageError, match=r"^response_format 'csv': choose one of auto, jsonl, rag24"):
        commands.import_request("responses", [board], response_format="csv")
    with pytest.raises(UsageError, match=r"^on_error 'ignore': choose one of fail, skip$"):
        commands.import_request("responses", [board], on_error="ignore")
