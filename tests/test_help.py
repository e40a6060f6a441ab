"""`--help` works on every command and explains it."""

from __future__ import annotations

import pytest

from conftest import run_process


@pytest.mark.parametrize(("command", "expect"), [
    ([], "EXAM-Qrels"), (["import"], "exampp"), (["export"], "exam_pp"), (["info"], "counts"),
    (["qrels"], "largest grade"), (["leaderboard"], "EXAM-Cover"), (["demo"], "example collection"),
    (["correlate"], "tau_AP"), (["agreement"], "Krippendorff"), (["analyze"], "report.html"),
])
def test_help(command, expect):
    result = run_process(*command, "--help")
    assert result.code == 0 and expect in result.out


def test_no_command_prints_help_and_fails():
    result = run_process()
    assert result.code == 2 and "COMMAND" in result.out
