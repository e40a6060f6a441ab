"""A refused `bank impact` changes nothing: a dead endpoint, a key the server refuses, another model, another
prompt or an ensemble as grade set A are refused (exit 2, the real reason) before bank B is imported or a grade
is carried, so the store's dump is the same — where before B was left imported as the latest version with a
partial grade set (and, for an ensemble, an `ensemble` grade set never derived again). And coverage counts
questions x passages: a grade set that lacks questions never says every pool pair is graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import seed_demo, store_dump
from fake_openai import FakeOpenAI
from grade_set_kinds import every_kind
from inprocess import copy_store, run_cli


def _bank_b(folder: Path) -> tuple[Path, Path]:
    """(A, B): the demo bank, and B with one question more for q1."""
    old = folder / "collection" / "bank.jsonl"
    lines = [json.loads(line) for line in old.read_text().splitlines()]
    lines[0]["items"].append({"query_id": "q1", "question_id": "q1/new", "question_text": "Do bees sleep?"})
    new = folder / "b.jsonl"
    new.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return old, new


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The demo store graded with self-rating by model `m` of the test server; the bank files A and B."""
    folder = tmp_path_factory.mktemp("impact")
    store = seed_demo(folder)
    with FakeOpenAI() as server:
        result = run_cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m", "--base-url",
                         server.base_url)
        assert result.code == 0, result.err
    return store, *_bank_b(folder)


DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
CASES = [  # (case, --llm, server: None (dead endpoint) / its key, the reason said)
    ("dead endpoint", "openai:m", None, "127.0.0.1:9"),
    ("key refused", "openai:m", "secret", "the API key was refused"),
    ("another model", "openai:other", "", "grades with model other"),
    ("no backend", None, "", "pass --llm SPEC"),
]


@pytest.mark.parametrize("case, llm, key, reason", CASES, ids=[c[0] for c in CASES])
def test_a_refused_impact_changes_nothing(cli, graded, tmp_path, case, llm, key, reason):
    source, old, new = graded
    store = copy_store(source, tmp_path / "s.db")
    before = store_dump(store)
    with FakeOpenAI(key=key or None) as server:
        url = DEAD if key is None else server.base_url
        result = cli("bank", "impact", old, new, "--store", store, *(("--llm", llm, "--base-url", url,
                                                                      "--max-retries", "0") if llm else ()))
    assert result.code == 2, result.err
    assert "Traceback" not in result.err and reason in result.err
    assert store_dump(store) == before
    banks = cli("info", "--store", store, "--format", "json")
    assert len(json.loads(banks.out)["bank_versions"]) == 1  # B was not imported


def test_an_ensemble_as_grade_set_a_is_refused_and_changes_nothing(cli, tmp_path_factory, tmp_path):
    source, ids = every_kind(tmp_path_factory)
    store = copy_store(source, tmp_path / "s.db")
    old, new = _bank_b(source.parent)
    before = store_dump(store)
    with FakeOpenAI() as server:
        result = cli("bank", "impact", old, new, "--store", store, "--grade-set", ids["ensemble"], "--llm",
                     "openai:judge", "--base-url", server.base_url)
    assert result.code == 2 and "Traceback" not in result.err
    assert f"grade set {ids['ensemble']} is an ensemble" in result.err and "on each member" in result.err
    assert store_dump(store) == before


def test_an_impact_that_may_go_on_still_grades_only_what_is_new(cli, graded, tmp_path):
    source, old, new = graded
    store = copy_store(source, tmp_path / "s.db")
    with FakeOpenAI() as server:
        result = cli("bank", "impact", old, new, "--store", store, "--llm", "openai:m", "--base-url",
                     server.base_url, "--format", "json")
        assert result.code == 0, result.err and server.requests == 6  # the new question x q1's 6 pool passages


def test_coverage_counts_pairs_with_part_of_their_questions_graded(cli, graded, tmp_path):
    """Grade set B whose new question failed on every passage (the server answers 500 to it): q1's pool pairs
    lack that question's grade. They still have a label (from q1's other questions), so they count as labelled
    pool pairs, as the labels do; the coverage counts them apart (`partly_graded`) and warns that their labels
    may be too low. (Before, B said "24 of 24 pool pairs graded" and nothing more; then its q1 pairs did not
    count at all, though the labels used them.)"""
    source, old, new = graded
    store = copy_store(source, tmp_path / "s.db")

    def new_question_fails(prompt: str, attempt: int) -> str:
        return "500" if "Do bees sleep?" in prompt else "ok"

    with FakeOpenAI(faults=new_question_fails) as server:
        result = cli("bank", "impact", old, new, "--store", store, "--llm", "openai:m", "--base-url",
                     server.base_url, "--max-retries", "0", "--format", "json")
    assert result.code == 0, result.err
    b = json.loads(result.out)["grade_sets"]["new"]
    a = json.loads(result.out)["grade_sets"]["old"]
    pairs, counts = {}, {}
    for grade_set in (a, b):
        board = cli("leaderboard", "--store", store, "--grade-set", grade_set, "--measure", "P@3", "--min-grade",
                    "3", "--format", "json")
        assert board.code == 0, board.err
        pairs[grade_set] = json.loads(board.out)["coverage"]["pairs"]
        counts[grade_set] = json.loads(board.out)["coverage"]["counts"]
    assert pairs[a]["graded"] == pairs[a]["pool"]  # A: every question of every pair graded
    assert pairs[b]["pool"] == pairs[a]["pool"]
    assert pairs[b]["graded"] == pairs[b]["pool"]  # every pool pair has a label
    assert counts[a].get("partly_graded") is None
    assert counts[b]["partly_graded"] == 6  # q1's 6 pool pairs lack the new question's grade
    qrels = cli("qrels", "--store", store, "--grade-set", b)
    assert qrels.code == 0 and "6 of the 24 labelled pool pairs have grades from only some" in qrels.err
