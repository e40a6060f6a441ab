"""`--help` works on every command and explains it."""

from __future__ import annotations

import argparse
import re

import pytest

from conftest import run_process
from proctor.cli import build_parser


@pytest.mark.parametrize(("command", "expect"), [
    ([], "EXAM-Qrels"), (["import"], "exampp"), (["export"], "exam_pp"), (["info"], "counts"),
    (["qrels"], "largest grade"), (["leaderboard"], "EXAM-Cover"), (["demo"], "example collection"),
    (["correlate"], "tau_AP"), (["agreement"], "Krippendorff"), (["analyze"], "report.html"),
])
def test_help(cli, command, expect):
    result = cli(*command, "--help")
    assert result.code == 0 and expect in result.out


def test_no_command_prints_help_and_fails(cli):
    result = cli()
    assert result.code == 2 and "COMMAND" in result.out


def test_the_module_runs_as_a_program():
    """`python -m proctor --help`: the one real process here (the entry point, as a user starts it)."""
    result = run_process("--help")
    assert result.code == 0 and "EXAM-Qrels" in result.out


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every sub-command's parser, depth first."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_help_cites_papers_by_author_and_title_not_by_file_number():
    bare = re.compile(r"\b00[0-4]\b")
    offenders = [f"{p.prog}: {line.strip()}" for p in _parsers(build_parser())
                 for line in p.format_help().splitlines() if bare.search(line)]
    assert offenders == []
    assert "Farzi & Dietz 2024 (RUBRIC), Table 2" in " ".join(_grade_help().split())


def _grade_help() -> str:
    """The `grade` command's help text."""
    return next(p for p in _parsers(build_parser()) if p.prog.endswith(" grade")).format_help()
