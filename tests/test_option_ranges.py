"""Options out of range are refused before any work: exit 2, the option and its range named, no output."""

from __future__ import annotations

import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from proctor.cli import main


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The demo store with one grade set (the test server's self-ratings: no model to load)."""
    store = seed_demo(tmp_path_factory.mktemp("graded"))
    with FakeOpenAI() as server:
        assert main(["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:judge",
                     "--base-url", server.base_url]) == 0
    return store


CASES = [
    (("leaderboard", "--measure", "P@3", "--min-grade", "7"), "--min-grade", "1..5"),
    (("leaderboard", "--measure", "P@3", "--min-grade", "-1"), "--min-grade", "1..5"),
    (("leaderboard", "--measure", "P(rel=9)@20"), "rel must be a grade 1..5", ""),
    (("leaderboard", "--metric", "cover", "--min-grade", "3", "--budget", "-4"), "--budget", "1 or more"),
    (("qrels", "--binary", "--min-grade", "9"), "--min-grade", "1..5"),
    (("qrels", "--min-questions", "0"), "--min-questions", "1 or more"),
    (("verify", "answers", "--limit", "-1"), "--limit", "1 or more"),
    (("verify", "spurious", "--judged-relevant", "9"), "--judged-relevant 9", "go up to"),
    (("agreement", "--judged-relevant", "9"), "--judged-relevant 9", "go up to"),
    (("agreement", "--judged-relevant", "0"), "--judged-relevant", "1 or more"),
    (("analyze", "--official", "OFFICIAL", "--out", "r", "--budget", "-4"), "--budget", "1 or more"),
    (("analyze", "--official", "OFFICIAL", "--out", "r", "--judged-relevant", "9"), "--judged-relevant 9", ""),
    (("grade", "--method", "self-rating", "--llm", "openai:m", "--timeout", "-1"), "--timeout", "positive"),
    (("grade", "--method", "self-rating", "--llm", "openai:m", "--max-retries", "-1"), "--max-retries", "0 or more"),
    (("grade", "--method", "self-rating", "--llm", "openai:m", "--rpm", "0"), "--rpm", "positive"),
    (("grade", "--method", "self-rating", "--llm", "openai:m", "--max-attempts", "0"), "--max-attempts", ""),
    (("grade", "--method", "self-rating", "--llm", "openai:m", "--depth", "0"), "--depth", "1 or more"),
    (("info", "--lock-timeout", "-5"), "--lock-timeout", "0 or more"),
]


@pytest.mark.parametrize("args,option,detail", CASES, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in CASES])
def test_out_of_range_options_exit_2_naming_the_option(graded, cli, args, option, detail):
    official = graded.parent / "official.json"
    official.write_text('{"strong": 1, "partial": 2, "middling": 3, "weak": 4}')
    args = [official if a == "OFFICIAL" else (graded.parent / "r" if a == "r" else a) for a in args]
    result = cli(*args, "--store", graded)
    assert result.code == 2 and option in result.err and detail in result.err, result.err
    assert result.out == "" and "Traceback" not in result.err


def _correlate(cli, folder, name: str, board: str, *extra: str):
    """`correlate` of the leaderboard `board` (written to FOLDER/NAME) against official ranks a, b, c; returns
    the Result and the leaderboard's path."""
    path = folder / name
    path.write_text(board)
    official = folder / "o.json"
    official.write_text('{"a": 1, "b": 2, "c": 3}')
    return cli("correlate", path, "--official", official, *extra), path


def test_correlate_bootstrap_must_not_be_negative(tmp_path, cli):
    result, _ = _correlate(cli, tmp_path, "lb.tsv", "system\tscore\na\t1\nb\t2\nc\t3\n", "--bootstrap", "-5")
    assert result.code == 2 and "--bootstrap" in result.err and "0 or more" in result.err


@pytest.mark.parametrize("row", ["c\tnan", "c\tinf", "c\t-inf"])
def test_correlate_refuses_a_score_that_is_not_a_finite_number(tmp_path, cli, row):
    result, board = _correlate(cli, tmp_path, "lb.tsv", f"system\tscore\na\t1\nb\t2\n{row}\n")
    assert result.code == 2 and f"{board}:4:" in result.err and "not a finite number" in result.err


def test_a_fully_tied_leaderboard_has_no_correlation_and_two_systems_warn(tmp_path, cli):
    import json

    result, _ = _correlate(cli, tmp_path, "tied.tsv", "a\t0.5\nb\t0.5\nc\t0.5\n", "--format", "json")
    data = json.loads(result.out)
    assert result.code == 0 and data["spearman"] is data["kendall"] is data["tau_ap"] is None
    assert "ranks every system the same" in result.err
    result, _ = _correlate(cli, tmp_path, "two.tsv", "a\t0.9\nb\t0.1\n", "--format", "json")
    assert result.code == 0 and "only 2 systems" in result.err and json.loads(result.out)["n_systems"] == 2


def test_a_system_with_no_evaluable_query_is_left_out_with_a_note(tmp_path, cli):
    store = seed_demo(tmp_path)
    stray = tmp_path / "stray.run"
    stray.write_text("q1 Q0 zzz 1 1.0 stray\n")
    assert cli("import", "runs", stray, "--store", store).code == 0
    qrels = tmp_path / "other.qrels"
    qrels.write_text("q2 0 d201 1\n")
    result = cli("leaderboard", "--store", store, "--measure", "P@3", "--qrels", qrels)
    assert result.code == 0 and not [row for row in result.out.splitlines() if row.startswith("stray")]
    assert "left out, no evaluable query" in result.err and "stray" in result.err
