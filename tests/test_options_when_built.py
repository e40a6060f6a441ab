"""An options model is checked when it is built (`proctor.options.model.Checked`): a wrong value is refused there
with a `UsageError` naming the parameter (`test` from Python, `--test` from the shell), in the words the verb used
to refuse it at run time; a value left None for the verb to fill in is not refused; the defaults pass every check."""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil

import pytest

import proctor.options
from proctor import api
from proctor.api import commands
from proctor.errors import UsageError
from proctor.options import kinds
from proctor.options.analysis import ReportFiles
from proctor.options.evaluation import LeaderboardOptions
from proctor.options.model import Checked, check_model


def _models() -> list[type]:
    """Every options model of `proctor.options` (not `Option`, how a field meets the outside, nor a numeric `Rule`)."""
    found = set()
    for info in pkgutil.iter_modules(proctor.options.__path__):
        module = importlib.import_module(f"proctor.options.{info.name}")
        found |= {v for v in vars(module).values() if isinstance(v, type) and dataclasses.is_dataclass(v)
                  and v.__module__ == module.__name__ and v.__name__ not in ("Option", "Rule")}
    return sorted(found, key=lambda m: m.__name__)


def test_every_model_is_checked_when_built_and_its_defaults_pass_every_check():
    models = _models()
    assert len(models) >= 30 and [m.__name__ for m in models if not issubclass(m, Checked)] == []
    for model in models:
        check_model(model(), every=True)  # a model at its defaults is not checked again when built: they must pass


REFUSED = [  # (the model built, the message from Python; the shell's names the flag)
    (lambda: api.SignificanceOptions(test="z"), "test 'z': choose one of both, t, randomization"),
    (lambda: api.SignificanceOptions(samples=-5), "samples must be 100..100000 (got -5)"),
    (lambda: api.SignificanceOptions(alpha=1.5), "alpha must be a finite number in (0, 1) (got 1.5)"),
    (lambda: api.CorrelationOptions(ties="first"), "ties 'first': choose one of average, random"),
    (lambda: api.ProbeOptions(sample=0), "sample must be 1 or more (got 0)"),
    (lambda: api.AnalysisOptions(plot_tau=9), "plot_tau must be 1..5 (got 9)"),
    (lambda: api.AnalysisOptions(measures=""), "measures is empty"),
    (lambda: api.AnalysisOptions(measures="P@20", plot_measure="AP"), "plot_measure AP: not one of measures P@20"),
    (lambda: api.AnalysisOptions(human_topics=3), "human_topics needs human_qrels"),
    (lambda: api.BackendOptions(dtype="int8"), "dtype 'int8': choose one of auto, bfloat16, float16, float32"),
    (lambda: api.ImportOptions(word_budget=0), "word_budget must be 1 or more (got 0)"),
    (lambda: api.LabelChoice(min_questions=0), "min_questions must be 1 or more (got 0)"),
    (lambda: api.GradingOptions(depth=0), "depth must be 1 or more (got 0)"),
    (lambda: dataclasses.replace(api.SignificanceOptions(), test="z"), "test 'z': choose one of both, t, "
     "randomization"),
]


@pytest.mark.parametrize("build,message", REFUSED, ids=[m for _, m in REFUSED])
def test_a_wrong_value_is_refused_when_the_model_is_built_naming_the_parameter(build, message):
    with pytest.raises(UsageError) as err:
        build()
    assert str(err.value) == message
    param = message.split(" ")[0]
    assert err.value.as_options().startswith("--" + param.replace("_", "-"))  # the shell's words: the flag


def test_an_unknown_measure_is_refused_when_built_with_the_registrys_words():
    with pytest.raises(UsageError, match=r"^unknown measure 'P@2O'; did you mean") as built:
        api.AnalysisOptions(measures="P@20,P@2O")
    with pytest.raises(UsageError) as parsed:
        api.measures().parse("P@2O")
    assert str(built.value) == str(parsed.value) + "; given as measures"  # the registry's words, then the option
    with pytest.raises(UsageError, match=r"^unknown measure 'nope'"):
        LeaderboardOptions(measure=("P@20", "nope"))
    assert api.AnalysisOptions(measures="P.20,map", plot_measure="AP").plotted == "AP"  # trec_eval names too
    assert LeaderboardOptions(measure=("Cover(rel=3)@20",)).measure == ("Cover(rel=3)@20",)  # measures of grades


def test_values_left_for_the_verb_to_fill_in_are_not_refused():
    assert api.AnalysisOptions(plot_measure=None).plotted == "P@20"
    assert ReportFiles() == ReportFiles(official=None, out=None)  # required on the command line, given by the verb
    assert LeaderboardOptions(min_grade=None, missing=None).min_grade is None
    finished = dataclasses.replace(api.AnalysisOptions(measures="AP,P@20"), plot_measure="AP")
    assert finished.plotted == "AP" and dataclasses.replace(finished, plot_measure=None).plotted == "AP"


def test_the_command_line_says_what_it_said(cli, tmp_path):
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2}))
    result = cli("analyze", "--store", tmp_path / "absent.db", "--official", official, "--out", tmp_path / "out",
                 "--measures", "P@20", "--plot-measure", "AP")
    assert result.code == 2 and result.out == "" and not (tmp_path / "out").exists()
    assert result.err == "proctor: error: --plot-measure AP: not one of --measures P@20\n"
    result = cli("analyze", "--store", tmp_path / "absent.db", "--official", official, "--out", tmp_path / "out",
                 "--human-topics", "3")
    assert (result.code, result.err) == (2, "proctor: error: --human-topics needs --human-qrels\n")


def test_a_model_built_before_the_door_registered_the_measure_check_is_checked_by_the_verb(monkeypatch, tmp_path):
    monkeypatch.setattr(kinds, "KINDS", {})  # as in a process that imported proctor.options but not proctor.api
    unchecked = api.AnalysisOptions(measures="P@20,P@2O")
    monkeypatch.undo()
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2}))
    with pytest.raises(UsageError, match=r"^unknown measure 'P@2O'"):
        commands.analyze_request(official, tmp_path / "out", unchecked)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("build", "words"), [
    (lambda: api.CorrelationOptions(seed=0.0), "seed must be 0 or more (got 0.0)"),  # equal to 0, not an int
    (lambda: api.AnalysisOptions(judged_relevant=True), "judged_relevant must be 1 or more (got True)"),
    (lambda: api.AnalysisOptions(budget=20.0), "budget must be 1 or more (got 20.0)"),
])
def test_a_value_equal_to_the_default_but_of_another_type_is_checked(build, words):
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        build()
