"""`--format md`: escaped Markdown to a file or a pipe (byte for byte what a Markdown renderer reads), an
aligned table without escapes on a terminal."""

from __future__ import annotations

import re
import sys

import pytest

from conftest import seed_demo

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return seed_demo(tmp_path_factory.mktemp("terminal"))


ARGS = ("--measure", "P(rel=2)@3", "--qrels", "official", "--format", "md")


def test_md_to_a_pipe_is_escaped_markdown(store, cli, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    result = cli("leaderboard", "--store", store, *ARGS)
    assert result.code == 0, result.err
    assert r"P\(rel=2\)@3" in result.out and "| rank | system | score | stderr | queries |" in result.out
    assert "|---:|---|---:|---:|---:|" in result.out


def test_md_on_a_terminal_is_an_aligned_table(store, cli, monkeypatch):
    piped = cli("leaderboard", "--store", store, *ARGS).out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    result = cli("leaderboard", "--store", store, *ARGS)
    assert result.code == 0, result.err
    shown = ANSI.sub("", result.out)
    assert shown != piped and "\\" not in shown and "|---" not in shown and "&gt;" not in shown
    assert "P(rel=2)@3" in shown  # the provenance reads as written, unescaped
    rows = [line for line in shown.splitlines() if re.match(r"\s+\d+\s+\S+\s+\d\.\d{4}", line)]
    systems = [line.split()[1] for line in rows]
    assert sorted(systems) == ["middling", "partial", "strong", "weak"]
    # one column per field, aligned: the scores end in the same column on every row
    ends = {m.end() for line in rows for m in [re.search(r"\d\.\d{4}", line)]}
    assert len(ends) == 1
