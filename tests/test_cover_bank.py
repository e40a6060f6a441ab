"""EXAM-Cover scores every topic of the grade set's bank: a system that answered (and was graded on) one of two
banked topics cannot score more than one half."""

from __future__ import annotations

import json

import pytest

from proctor.cli import main
from proctor.demo.write import write_collection
from proctor.evaluate.cover import CoverTable, cover_per_query


def test_banked_topics_without_grades_count_zero():
    table = CoverTable.build([("A", "p1", "a1", 5), ("A", "p1", "a2", 5)], tau=4,
                             bank={"A": {"a1", "a2"}, "B": {"b1", "b2"}})
    scores, _ = cover_per_query({"A": ["p1"]}, table)
    assert scores == {"A": 1.0, "B": 0.0}
    assert cover_per_query({"A": ["p1"]}, table, missing="skip")[0] == {"A": 1.0}
    assert table.add_bank({"C": {"c1"}}) == ["C"]


def test_a_banked_question_nobody_graded_still_counts_in_its_topic():
    table = CoverTable.build([("A", "p1", "a1", 5)], tau=4, bank={"A": {"a1", "a2"}})
    assert cover_per_query({"A": ["p1"]}, table)[0] == {"A": 0.5}


@pytest.fixture
def one_topic_store(tmp_path):
    """A bank of two topics (q1, q2); grades and a run for q1 only."""
    paths = write_collection(tmp_path / "c")
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(line + "\n" for line in paths["bank"].read_text().splitlines()
                            if json.loads(line)["query_id"] in ("q1", "q2")))
    grades = tmp_path / "grades.jsonl"
    grades.write_text("".join(line + "\n" for line in paths["exampp"].read_text().splitlines()
                              if json.loads(line)[0] == "q1"))
    run = tmp_path / "only-q1.run"
    run.write_text("".join(line + "\n" for line in (paths["runs"] / "strong.run").read_text().splitlines()
                           if line.startswith("q1 ")))
    store = tmp_path / "s.db"
    for args in (["bank", bank], ["exampp", grades, "--bank", "bank"], ["runs", run]):
        assert main(["import", args[0], *map(str, args[1:]), "--store", str(store)]) == 0
    return store


def test_a_system_answering_one_of_two_banked_topics_scores_at_most_half(one_topic_store, cli):
    result = cli("leaderboard", "--store", one_topic_store, "--metric", "cover", "--min-grade", "4",
                 "--missing", "zero", "--format", "json", "--per-query")
    assert result.code == 0, result.err
    [system] = json.loads(result.out)["systems"]
    assert system["n_queries"] == 2 and system["per_query"]["q2"] == 0.0
    assert 0 < system["score"] <= 0.5
    assert system["score"] == pytest.approx(system["per_query"]["q1"] / 2)
    assert "2 topics of bank bank@" in result.err and "1 banked topics have no grade" in result.err
    skipped = cli("leaderboard", "--store", one_topic_store, "--metric", "cover", "--min-grade", "4",
                  "--missing", "skip", "--format", "json")
    assert json.loads(skipped.out)["systems"][0]["n_queries"] == 1
