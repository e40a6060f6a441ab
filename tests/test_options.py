"""Options are declared once, in the model of their concept (`proctor.options`): the command line's flags, the
experiment file's keys and the AutoJudge settings are derived from it, with the same spelling, type and
default everywhere."""

from __future__ import annotations

import argparse
import ast
import dataclasses
from functools import cache

import pytest

from proctor.autojudge.settings import JudgeSettings
from proctor.cli import build_parser
from proctor.errors import InputError
from proctor.experiment.load import load_experiment
from proctor.experiment.schema import BACKEND_KEYS, EVALUATE_KEYS, GRADE_KEYS, Evaluation, Grader
from proctor.grading.engine import GradeOptions
from proctor.llm.config import BackendConfig
from proctor.llm.openai_backend import OpenAIOptions
from proctor.options.analysis import AnalysisOptions, VerifyOptions
from proctor.options.backend import BackendOptions
from proctor.options.evaluation import EvaluationOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import base_type, default, flag, names, spec, toml_keys, toml_type, type_of
from proctor.options.numeric import RULES
from proctor.options.probe import ProbeOptions
from proctor.options.review import ReviewOptions

MODELS = (BackendOptions, GradingOptions, EvaluationOptions)
COMMANDS = {  # the commands whose flags are derived from each model, and the defaults a command states itself
    BackendOptions: {"grade": {}, "probe": {}, "review": {}, "bank impact": {},
                     "bank generate": {"concurrency": 4, "timeout": 120.0}},
    GradingOptions: {"grade": {}},
    EvaluationOptions: {"leaderboard": {"measure": None, "min_grade": None, "missing": None},
                        "qrels": {"min_grade": None}, "correlate": {"bootstrap": None}},
    AnalysisOptions: {"analyze": {}}, VerifyOptions: {"verify": {}}, ProbeOptions: {"probe": {}},
    ReviewOptions: {"review": {}},
}
COMMAND_MODELS = (AnalysisOptions, VerifyOptions, ProbeOptions, ReviewOptions)
"""The models of one command each: every field is a flag of that command (the verb's keywords in Python)."""


@cache
def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its name (`bank generate` for sub-commands), built once per process (read
    only: 28 ms a build, 138 tests ask)."""
    found, stack = {}, [build_parser()]
    while stack:
        parser = stack.pop()
        found[parser.prog.removeprefix("proctor").strip()] = parser
        for action in parser._actions:  # noqa: SLF001
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                stack.extend(action.choices.values())
    return found


def _action(parser: argparse.ArgumentParser, option: str) -> argparse.Action | None:
    return next((a for a in parser._actions if option in a.option_strings), None)  # noqa: SLF001


CASES = [(model, command, name) for model in (*MODELS, *COMMAND_MODELS) for command in COMMANDS[model]
         for name in names(model) if spec(model, name).cli]


@pytest.mark.parametrize("model,command,name", CASES, ids=[f"{c}:{n}" for _, c, n in CASES])
def test_a_flag_is_spelled_typed_and_defaulted_as_its_model_declares(model, command, name):
    action = _action(_parsers()[command], flag(model, name))
    if action is None:  # a command takes some of a model's options; those it takes are the model's
        assert command != "grade", f"grade lacks {flag(model, name)}"
        return
    opt = spec(model, name)
    assert action.dest == name
    overrides = COMMANDS[model][command]
    expected = overrides.get(name, opt.cli_default if opt.cli_default is not None else default(model, name))
    if opt.action == "append" and name not in overrides:
        expected = None
    assert action.default == expected
    single = base_type(type_of(model, name))
    if opt.action not in ("store_true", "append"):
        assert action.type is (opt.parse or (single if single in (int, float) else None))
    assert action.choices == opt.choices
    if single is float:
        assert name in RULES  # NaN and infinities are refused by the one numeric check


def test_the_experiment_file_takes_every_modelled_key_with_the_models_type():
    # in the models' order: "unknown key; expected one of ..." lists them so
    assert list(toml_keys(BackendOptions).items()) == list(BACKEND_KEYS.items())
    assert list({**toml_keys(GradingOptions), **toml_keys(BackendOptions)}.items()) == list(GRADE_KEYS.items())
    assert list(toml_keys(EvaluationOptions).items()) == list(EVALUATE_KEYS.items())
    for model in MODELS:
        for name in names(model):
            kind = toml_type(model, name)
            if kind in (int, float, str, bool):
                assert kind is base_type(type_of(model, name)), name


@pytest.mark.parametrize("key", list(GRADE_KEYS))
def test_a_wrong_type_for_a_grade_key_names_the_file_line_and_key(tmp_path, key):
    path = tmp_path / "e.toml"
    path.write_text(f"[[grade]]\nmethod = 'self-rating'\nllm = 'openai:m'\n{key} = {{}}\n" if key not in
                    ("method", "llm") else f"[[grade]]\n{key} = {{}}\n")
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert err.value.path == str(path) and err.value.line == (4 if key not in ("method", "llm") else 2)
    assert err.value.message.startswith(f"[[grade]] #1 {key}: must be ")


def test_the_autojudge_settings_borrow_their_options_with_the_same_type_and_default():
    borrowed = [f for f in dataclasses.fields(JudgeSettings) if "from" in f.metadata]
    assert {f.name for f in borrowed} >= {"concurrency", "max_retries", "timeout", "base_url", "depth", "min_grade"}
    hints = {f.name: f.type for f in dataclasses.fields(JudgeSettings)}
    for f in borrowed:
        model = f.metadata["from"]
        assert f.default == default(model, f.name)
        assert hints[f.name].replace(" | None", "") == base_type(type_of(model, f.name)).__name__, f.name
    settings = JudgeSettings.from_kwargs({f.name: f.default for f in borrowed if f.default is not None})
    assert settings == JudgeSettings()
    assert set(settings.backend_options(None)) == {f.name for f in borrowed
                                                  if f.metadata["from"] is BackendOptions} - {"base_url"}


def test_defaults_agree_everywhere():
    backend = {n: default(BackendOptions, n) for n in names(BackendOptions)}
    assert BackendConfig().options() == backend
    openai = OpenAIOptions()
    assert {n: getattr(openai, n) for n in backend} == backend
    grade = GradeOptions()
    for name in ("depth", "max_attempts", "progress_every", "verify", "max_queries", "max_passages", "bank"):
        assert getattr(grade, name) == default(GradingOptions, name)
    grader = Grader("g", "self-rating", "openai:m", None)
    assert (grader.aggregate, grader.thresholds) == (default(GradingOptions, "aggregate"),
                                                      default(GradingOptions, "sum_thresholds"))
    evaluation = Evaluation()
    assert (evaluation.measures, evaluation.min_grades, evaluation.cover_budgets) == (
        default(EvaluationOptions, "measure"), (default(EvaluationOptions, "min_grade"),),
        (default(EvaluationOptions, "budget"),))
    for name in ("missing", "min_questions", "judged_relevant", "human", "qrels", "report", "bootstrap", "seed"):
        assert getattr(evaluation, name) == default(EvaluationOptions, name), name


def _declarations(tree: ast.Module, options: set[str]) -> list[str]:
    """Where a module writes backend options down: class fields with defaults of their own (not `borrow`ed), a
    dict or tuple that lists three or more of them, an argparse flag of one."""
    found = []
    flags = {flag(BackendOptions, o) for o in options}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            fields = [item.target.id for item in node.body
                      if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                      and item.target.id in options and item.value is not None
                      and not (isinstance(item.value, ast.Call) and getattr(item.value.func, "id", "") == "borrow")]
            if len(fields) >= 2:  # one field of the same name (a reply's probabilities) is another concept
                found.append(f"{node.name}: {', '.join(fields)}")
        elif isinstance(node, ast.Dict | ast.Tuple | ast.Set):
            words = {k.value for k in (node.keys if isinstance(node, ast.Dict) else node.elts)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(words & options) >= 3:
                found.append(f"line {node.lineno}: {sorted(words & options)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in flags:
            found.append(f"line {node.lineno}: {node.value}")
    return found


def test_a_backend_option_is_written_once():
    """A backend option is declared by its field in `BackendOptions` (and, when numeric, its rule in
    `options.numeric.RULES`, the one table of numeric rules): no other module lists backend options, gives one a
    default or spells its flag (messages name `--base-url`, the one flag that is checked beyond its number)."""
    import code_shape

    options = set(names(BackendOptions))
    places = {}
    for name, tree in code_shape.modules().items():  # every module, parsed once per test process
        found = _declarations(tree, options)
        if found and name not in ("proctor.options.backend", "proctor.options.numeric"):
            places[name] = found
    assert places == {}


@pytest.mark.parametrize("model", COMMAND_MODELS, ids=lambda m: m.__name__)
def test_a_command_of_one_model_takes_every_field_as_a_flag_and_reads_it_back(model):
    (command,) = COMMANDS[model]
    parser = _parsers()[command]
    assert [flag(model, n) for n in names(model) if _action(parser, flag(model, n)) is None] == []
    required = {"analyze": ["--official", "O", "--out", "D"], "probe": ["--grade-set", "g", "--attack", "injection"],
                "verify": ["answers"]}.get(command, [])
    args = build_parser().parse_args([*command.split(), "--store", "s.db", *required])
    from proctor.options.model import from_args

    assert from_args(model, args) == model()  # the command line's defaults are the model's


def test_an_option_models_fields_are_the_verbs_keywords():
    assert AnalysisOptions(measures=" P@20, AP,").measures == ("P@20", "AP") == AnalysisOptions(
        measures=["P@20", "AP"]).measures
    assert AnalysisOptions().plotted == "P@20" and AnalysisOptions(plot_measure="AP").plotted == "AP"
    assert AnalysisOptions().judged_relevant == EvaluationOptions().judged_relevant == 1  # one default (docs)
    assert ReviewOptions().depth == GradingOptions().depth
    assert VerifyOptions().min_grade == ReviewOptions().min_grade == EvaluationOptions().min_grade
    from proctor import api

    with pytest.raises(TypeError, match="no_such_option"):
        api.analyze(None, "official.json", "out", no_such_option=1)  # type: ignore[arg-type]
