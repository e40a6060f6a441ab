"""Numeric options: NaN, infinities and out-of-range values are refused in one place, with the same words from
the command line, the API and the experiment file, exit 2, before anything is written."""

from __future__ import annotations

import math

import pytest

from conftest import store_dump
from proctor import api
from proctor.api import commands
from proctor.errors import InputError, UsageError
from proctor.options.numeric import RULES, number_problem

GRADE = ("grade", "--method", "self-rating", "--llm", "openai:m", "--base-url", "http://127.0.0.1:9/v1")

# (option as typed, value, extra arguments): every float option of `grade`, and counts, refused by both doors
GRADE_CASES = [
    ("--timeout", "nan", ()), ("--timeout", "inf", ()), ("--timeout", "-inf", ()), ("--timeout", "0", ()),
    ("--rpm", "nan", ()), ("--rpm", "inf", ()), ("--tpm", "nan", ()), ("--tpm", "-1", ()),
    ("--backoff-max", "nan", ()), ("--backoff-max", "inf", ()),
    ("--prefilter-below", "nan", ("--prefilter", "embed:minilm")),
    ("--prefilter-below", "inf", ("--prefilter", "embed:minilm")),
    ("--prefilter-below", "1.5", ("--prefilter", "embed:minilm")),
    ("--progress-every", "nan", ()), ("--progress-every", "inf", ()),
    ("--concurrency", "0", ()), ("--max-retries", "-1", ()), ("--max-context-chars", "0", ()),
    ("--batch-size", "0", ()),
]


@pytest.mark.parametrize("option,value,extra", GRADE_CASES, ids=[f"{c[0]} {c[1]}" for c in GRADE_CASES])
def test_grade_refuses_a_number_out_of_range_from_the_cli_and_the_api_with_the_same_words(
        cli, demo_store, option, value, extra):
    before = store_dump(demo_store)
    result = cli(*GRADE, *extra, f"{option}={value}", "--store", demo_store)
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err, result.err
    name = option[2:].replace("-", "_")
    number = int(value) if RULES[name].integer else float(value)
    expected = f"{option} {number_problem(name, number)}"
    assert result.err.strip() == f"proctor: error: {expected}"
    store = api.open_store(demo_store)
    try:
        options: dict = {name: number}
        if extra:
            options["prefilter"] = extra[1]
        with pytest.raises(UsageError) as err:
            api.grade(store, "self-rating", "openai:m", base_url="http://127.0.0.1:9/v1", **options)
        assert err.value.as_options() == expected  # the command line's words
        assert str(err.value) == f"{name} {number_problem(name, number)}"  # a notebook's: the parameter
    finally:
        store.close()
    assert store_dump(demo_store) == before


OTHER_CASES = [  # (arguments, the message)
    (("info", "--lock-timeout", "nan"), "--lock-timeout must be a finite number of seconds, 0 or more (got nan)"),
    (("info", "--lock-timeout", "inf"), "--lock-timeout must be a finite number of seconds, 0 or more (got inf)"),
    (("import", "queries", "Q", "--lock-timeout=-1"), "--lock-timeout must be a finite number of seconds, 0 or "
     "more (got -1.0)"),
    (("import", "queries", "Q", "--word-budget", "0"), "--word-budget must be 1 or more (got 0)"),
    (("compare", "LB", "--alpha", "nan"), "--alpha must be a finite number in (0, 1) (got nan)"),
    (("compare", "LB", "--alpha", "1"), "--alpha must be a finite number in (0, 1) (got 1.0)"),
    (("run", "EXP", "--dry-run", "--price-in", "nan"), "--price-in must be a finite number, 0 or more (got nan)"),
    (("run", "EXP", "--dry-run", "--price-out=-inf"), "--price-out must be a finite number, 0 or more (got -inf)"),
    (("leaderboard", "--measure", "P@1", "--min-grade", "3", "--intervals", "--confidence", "inf"),
     "--confidence must be a finite number in (0, 1) (got inf)"),
    (("calibrate", "--budget", "1", "--seed", "-3"), "--seed must be 0 or more (got -3)"),
    (("probe", "--grade-set", "x", "--attack", "injection", "--seed", "-3"), "--seed must be 0 or more (got -3)"),
    (("compare", "LB", "--seed", "-3"), "--seed must be 0 or more (got -3)"),
    (("grade", "--method", "self-rating", "--llm", "openai-batch:m", "--batch-poll", "nan"),
     "--batch-poll must be a finite positive number of seconds (got nan)"),
]


@pytest.mark.parametrize("args,message", OTHER_CASES, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in OTHER_CASES])
def test_other_commands_refuse_numbers_out_of_range(cli, demo_store, tmp_path, args, message):
    (tmp_path / "q.tsv").write_text("q9\tnew query\n")
    (tmp_path / "lb.json").write_text("{}")
    (tmp_path / "e.toml").write_text("[experiment]\nname = 'x'\n")
    files = {"Q": tmp_path / "q.tsv", "LB": tmp_path / "lb.json", "EXP": tmp_path / "e.toml"}
    before = store_dump(demo_store)
    result = cli(*[files.get(a, a) for a in args], *(("--store", demo_store) if args[0] not in ("compare", "run")
                                                    else ()))
    assert result.code == 2 and result.out == "", result.err
    assert result.err.strip() == f"proctor: error: {message}"
    assert store_dump(demo_store) == before


@pytest.mark.parametrize("call,message", [
    (lambda: api.compare("absent.json", alpha=math.nan), "--alpha must be a finite number in (0, 1) (got nan)"),
    (lambda: api.correlate("absent.tsv", {}, bootstrap=-1), "--bootstrap must be 0..100000 (got -1)"),
    (lambda: commands.add_intervals(None, confidence=math.nan),
     "--confidence must be a finite number in (0, 1) (got nan)"),
    (lambda: commands.add_intervals(None, seed=-1), "--seed must be 0 or more (got -1)"),
    (lambda: api.calibrate(None, budgets=[1], seed=-1), "--seed must be 0 or more (got -1)"),
    (lambda: commands.add_intervals(None, resamples=10**9), "--resamples must be 1..100000 (got 1000000000)"),
    (lambda: api.import_files(None, "queries", [], word_budget=0), "--word-budget must be 1 or more (got 0)"),
    (lambda: api.grade(None, "self-rating", "openai:m", depth=0), "--depth must be 1 or more (got 0)"),
    (lambda: api.agreement(None, judged_relevant=0), "--judged-relevant must be 1 or more (got 0)"),
    (lambda: api.verify(None, "answers", shown=0), "--shown must be 1 or more (got 0)"),
    (lambda: api.grade(None, "self-rating", "openai:m", timeout="5"),
     "--timeout must be a finite positive number of seconds (got '5')"),
    (lambda: api.grade(None, "self-rating", "openai:m", max_queries=2.5), "--max-queries must be 1 or more (got 2.5)"),
])
def test_the_api_refuses_before_touching_anything(call, message):
    with pytest.raises(UsageError) as err:
        call()
    flag, problem = message.split(" ", 1)
    assert str(err.value) == f"{flag[2:].replace('-', '_')} {problem}"  # named as the parameter
    assert err.value.as_options() == message  # and as the flag, on the command line


@pytest.mark.parametrize("line,key,message", [
    ("timeout = nan", "timeout", "must be a finite positive number of seconds (got nan)"),
    ("rpm = inf", "rpm", "must be a finite positive number (got inf)"),
    ("backoff_max = -inf", "backoff_max", "must be a finite positive number of seconds (got -inf)"),
    ("prefilter_below = nan", "prefilter_below", "must be a finite number in [-1, 1] (got nan)"),
    ("depth = 0", "depth", "must be 1 or more (got 0)"),
])
def test_the_experiment_file_refuses_them_naming_its_line(tmp_path, line, key, message):
    from proctor.experiment.load import load_experiment

    path = tmp_path / "e.toml"
    path.write_text(f"[experiment]\nname = 'x'\n\n[[grade]]\nmethod = 'self-rating'\nllm = 'openai:m'\n{line}\n")
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert (err.value.line, err.value.message) == (7, f"[[grade]] #1 {key}: {message}")


def test_every_float_option_of_every_command_has_a_rule():
    """A new `type=float` option without a rule would let NaN through: every one is in the table."""
    import argparse

    from proctor.cli import build_parser

    floats = set()
    for action in build_parser()._subparsers._group_actions[0].choices.values():  # noqa: SLF001
        stack = [action]
        while stack:
            parser = stack.pop()
            for a in parser._actions:  # noqa: SLF001
                if isinstance(a, argparse._SubParsersAction):  # noqa: SLF001
                    stack.extend(a.choices.values())
                elif a.type is float:
                    floats.add(a.dest)
    assert floats and floats <= set(RULES), floats - set(RULES)
