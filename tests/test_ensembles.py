"""Ensembles: a derived grade set whose grades are its members' combined by a rule (checked here against
Python's own statistics), with the members' spread per cell; usable by every reading command; derived again
when a member gains grades; refused across scales."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import grades_of, seed_demo
from fake_openai import FakeOpenAI
from inprocess import copy_store, run_cli
from proctor.errors import UsageError
from proctor.store import Store

V2 = """\
name: self-rating
version: v2
source: a second wording (a test)
template: |-
  Rate from 0 to 5 how well the context answers the question.
  Question: {question}
  Context: {context}
"""


def _grade(cli, store: Path, server, *extra: str, method: str = "self-rating") -> str:
    result = cli("grade", "--store", store, "--method", method, "--llm", "openai:judge", "--base-url",
                 server.base_url, "--format", "json", *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)["grade_set"]["id"]


@pytest.fixture(scope="module")
def two_prompts_store(tmp_path_factory) -> tuple[Path, str, str]:
    """The demo store graded by the test server with two prompt versions (which disagree: the server's grade is
    a digest of the prompt), graded once for the module: read only (`two_prompts` gives each test a copy)."""
    folder = tmp_path_factory.mktemp("two-prompts")
    store = seed_demo(folder)
    template = folder / "v2.yaml"
    template.write_text(V2)
    with FakeOpenAI() as server:
        first = _grade(run_cli, store, server)
        second = _grade(run_cli, store, server, "--template", template)
    return store, first, second


@pytest.fixture
def two_prompts(two_prompts_store, tmp_path) -> tuple[Path, str, str]:
    """A fresh copy of `two_prompts_store` (the store and its two grade sets), for a test that writes to it."""
    store, first, second = two_prompts_store
    return copy_store(store, tmp_path / "s.db"), first, second


def _members(store: Path, first: str, second: str) -> dict[tuple[str, str, str], list[int]]:
    out: dict[tuple[str, str, str], list[int]] = {}
    for prompt in (first, second):
        with _opened(store) as opened:
            grade_set = next(s for s in opened.grades.grade_sets() if s.id == prompt)
            for g in opened.grades.records(grade_set, grade_set.step):
                out.setdefault((g.query_id, g.passage_id, g.question_id), []).append(g.grade)
    return out


class _opened:
    def __init__(self, path: Path) -> None:
        self.store = Store.open(path)

    def __enter__(self) -> Store:
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def _half_up(x: float) -> int:
    return math.floor(x + 0.5)


EXPECTED = {
    "mean": lambda gs: _half_up(statistics.fmean(gs)),
    "median": lambda gs: _half_up(statistics.median(gs)),
    "max": max,
    "min": min,
    "majority": lambda gs: min(g for g, n in Counter(gs).items() if n == max(Counter(gs).values())),
}


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_an_ensemble_combines_each_cell_by_its_rule_and_keeps_the_spread(cli, two_prompts, rule):
    store, first, second = two_prompts
    made = cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", second, "--rule", rule,
               "--format", "json", "--show", "1000")
    assert made.code == 0, made.err
    result = json.loads(made.out)
    members = _members(store, *sorted([first, second]))
    ensemble = {(g.query_id, g.passage_id, g.question_id): g for g in grades_of(store, "ensemble")}
    assert set(ensemble) == set(members) and len(members) == 72
    for cell, grades in members.items():
        assert ensemble[cell].grade == EXPECTED[rule](grades), (cell, grades)
        assert ensemble[cell].extra == {"members": grades, "spread": max(grades) - min(grades)}
    differing = [cell for cell, grades in members.items() if grades[0] != grades[1]]
    summary = result["summary"]
    assert summary["cells"] == summary["complete"] == summary["compared"] == 72
    assert summary["disagreeing"] == len(differing) > 30
    assert sum(summary["spread"].values()) == 72 and summary["spread"]["0"] == 72 - len(differing)
    assert len(result["disagreements"]) == len(differing)
    assert result["disagreements"][0]["spread"] == max(abs(a - b) for a, b in members.values())
    assert result["grade_set"]["method"] == "ensemble" and result["rule"] == rule
    assert result["grade_set"]["params"]["members"] == sorted([first, second])


def test_the_ensembles_identity_is_its_members_and_rule(cli, two_prompts):
    store, first, second = two_prompts
    ids = [json.loads(cli("ensemble", "--store", store, *args, "--format", "json").out)["grade_set"]["id"]
           for args in (("--grade-set", first, "--grade-set", second, "--rule", "mean"),
                        ("--grade-set", second, "--grade-set", first, "--rule", "mean", "--name", "both"),
                        ("--grade-set", first, "--grade-set", second, "--rule", "max"))]
    assert ids[0] == ids[1] != ids[2]
    listed = json.loads(cli("info", "--store", store, "--format", "json").out)["grade_sets"]
    assert sorted(s["id"] for s in listed) == sorted({first, second, *ids})


def test_an_ensemble_is_told_apart_in_one_way(cli, two_prompts):
    store, first, second = two_prompts
    made = json.loads(cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", second, "--rule", "mean",
                          "--format", "json").out)["grade_set"]["id"]
    opened = Store.open(store)
    sets = {s.id: s for s in opened.grades.grade_sets()}
    opened.close()
    assert sets[made].is_ensemble and sets[made].members == sorted([first, second])
    assert not sets[first].is_ensemble and sets[first].members == []
    lookalike = replace(sets[made], info={})  # method "ensemble" but not derived by Proctor: not an ensemble
    assert not lookalike.is_ensemble and lookalike.members == []


def test_reading_commands_take_an_ensemble(cli, two_prompts):
    store, first, second = two_prompts
    eid = json.loads(cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", second, "--rule", "max",
                         "--format", "json").out)["grade_set"]["id"]
    members = _members(store, *sorted([first, second]))
    labels: dict[tuple[str, str], int] = {}
    for (qid, pid, _), grades in members.items():
        labels[(qid, pid)] = max(labels.get((qid, pid), 0), *grades)
    qrels = cli("qrels", "--store", store, "--grade-set", eid)
    assert qrels.code == 0, qrels.err
    got = {(q, p): int(rel) for q, _, p, rel in (line.split() for line in qrels.out.splitlines())}
    assert got == labels
    board = cli("leaderboard", "--store", store, "--grade-set", eid, "--measure", "P@3", "--min-grade", "4",
                "--format", "json")
    assert board.code == 0 and json.loads(board.out)["grade_set"] == eid
    agreement = cli("agreement", "--store", store, "--judged-relevant", "1", "--grade-set", eid)
    assert agreement.code == 0 and '"ensemble"' in agreement.out


def test_an_ensemble_is_derived_again_when_a_member_gains_grades(cli, tmp_path):
    store = seed_demo(tmp_path)
    template = tmp_path / "v2.yaml"
    template.write_text(V2)
    with FakeOpenAI() as server:
        first = _grade(cli, store, server, "--max-queries", "2")
        second = _grade(cli, store, server, "--template", template)
        made = json.loads(cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", second,
                              "--rule", "mean", "--format", "json").out)
        before = cli("qrels", "--store", store, "--grade-set", made["grade_set"]["id"])  # fills the label cache
        _grade(cli, store, server)  # the first member gains the grades of the other queries
    partial = [g for g in grades_of(store, "ensemble") if g.parse_status == "combined-partial"]
    assert made["summary"]["partial"] == len(partial) > 0 and made["summary"]["cells"] == 72
    assert all(g.extra["members"].count(None) == 1 for g in partial)
    assert all(g.grade == next(x for x in g.extra["members"] if x is not None) for g in partial)
    board = cli("leaderboard", "--store", store, "--grade-set", made["grade_set"]["id"], "--measure", "P@3",
                "--min-grade", "3", "--format", "json")
    assert board.code == 0, board.err
    after = grades_of(store, "ensemble")
    assert len(after) == 72 and all(g.parse_status == "combined" for g in after)
    members = _members(store, *sorted([first, second]))
    assert {(g.query_id, g.passage_id, g.question_id): g.extra["members"] for g in after} == members
    labels: dict[tuple[str, str], int] = {}
    for (qid, pid, _), grades in members.items():
        labels[(qid, pid)] = max(labels.get((qid, pid), 0), EXPECTED["mean"](grades))
    qrels = cli("qrels", "--store", store, "--grade-set", made["grade_set"]["id"])
    assert qrels.out != before.out
    assert {(q, p): int(rel) for q, _, p, rel in (line.split() for line in qrels.out.splitlines())} == labels


def test_an_ensemble_across_scales_is_refused_with_a_clear_message(cli, demo_store):
    with FakeOpenAI() as server:
        rating = _grade(cli, demo_store, server)
        thomas = _grade(cli, demo_store, server, method="thomas")
    before = Store.open(demo_store).dump()
    refused = cli("ensemble", "--store", demo_store, "--grade-set", rating, "--grade-set", thomas, "--rule", "mean")
    assert refused.code == 2 and "Traceback" not in refused.err
    assert "different scales" in refused.err and "0-5" in refused.err and "0-2" in refused.err
    assert rating in refused.err and thomas in refused.err
    assert Store.open(demo_store).dump() == before


def test_an_ensemble_needs_two_members_and_a_known_rule(cli, two_prompts):
    store, first, second = two_prompts
    refused = cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", first, "--rule", "mean")
    assert refused.code == 2 and "at least two different grade sets" in refused.err
    from proctor import api

    opened = api.open_store(store)
    with pytest.raises(UsageError, match="^rule vote: choose one of mean, median, max, min, majority"):
        api.ensemble(opened, [first, second], "vote")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^an ensemble needs at least two different grade sets \(grade_set A"):
        api.ensemble(opened, [first, first], "mean")
    opened.close()
    assert "needs at least two different grade sets (--grade-set A --grade-set B)" in refused.err


def test_an_ensemble_is_not_a_member(cli, two_prompts):
    store, first, second = two_prompts
    eid = json.loads(cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", second, "--rule", "max",
                         "--format", "json").out)["grade_set"]["id"]
    refused = cli("ensemble", "--store", store, "--grade-set", first, "--grade-set", eid, "--rule", "max")
    assert refused.code == 2 and "itself an ensemble" in refused.err


def test_a_user_templates_own_scale_is_the_one_compared(cli, demo_store, tmp_path):
    template = tmp_path / "three.yaml"
    template.write_text(V2.replace("version: v2", "version: three").replace("from 0 to 5", "from 0 to 3")
                        + "parser: range\nscale: [0, 3]\n")
    with FakeOpenAI() as server:
        packaged = _grade(cli, demo_store, server)
        three = _grade(cli, demo_store, server, "--template", template)
    refused = cli("ensemble", "--store", demo_store, "--grade-set", packaged, "--grade-set", three, "--rule", "max")
    assert refused.code == 2 and "different scales" in refused.err
    assert f"{three} (self-rating, step self-rating) grades 0-3" in refused.err and "grades 0-5" in refused.err


def test_the_same_ensemble_again_changes_nothing(cli, two_prompts):
    store, first, second = two_prompts
    args = ("ensemble", "--store", store, "--grade-set", first, "--grade-set", second, "--rule", "median",
            "--format", "json")
    made = cli(*args)
    eid = json.loads(made.out)["grade_set"]["id"]
    assert cli("qrels", "--store", store, "--grade-set", eid).code == 0  # keeps the ensemble's labels
    before = Store.open(store).dump()
    again = cli(*args)
    assert again.code == 0 and json.loads(again.out) == json.loads(made.out)
    opened = Store.open(store)
    assert opened.dump() == before
    kept = opened.caches.kept_grade_sets("label_cache")
    assert eid in kept  # no grade of the ensemble was written again (that would drop its kept labels)
