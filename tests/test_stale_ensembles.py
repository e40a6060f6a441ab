"""Stale grades of an ensemble are described as what becomes of them: an ensemble is never graded, it is derived
again from its members' grades, so `info` and `grade-sets list` no longer say "the next `grade` grades those
pairs again" of it (which never happens) — that stays the words for the members'."""

from __future__ import annotations

import json

import pytest

from grade_set_kinds import every_kind
from inprocess import copy_store

GRADE_AGAIN = "the next `grade` grades those pairs again"
DERIVED = "an ensemble is never graded: it is derived again from its members' grades"


@pytest.fixture(scope="module")
def stale(tmp_path_factory):
    """The kinds store after passage d101's text was replaced (every grade of d101 is stale, the ensembles'
    too) and the ensembles were read (derived again)."""
    source, ids = every_kind(tmp_path_factory)
    folder = tmp_path_factory.mktemp("stale")
    store = copy_store(source, folder / "s.db")
    corpus = folder / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d101", "text": "Bees make honey; this text was edited."}) + "\n")
    from inprocess import run_cli

    assert run_cli("import", "corpus", corpus, "--store", store, "--replace").code == 0
    for kind in ("ensemble", "ensemble across bank versions"):
        assert run_cli("qrels", "--store", store, "--grade-set", ids[kind]).code == 0  # derived again
    return store, ids


def _line(text: str, grade_set: str) -> str:
    """The stale line of a grade set: `info`'s `stale grades   ID ...`, or the indented `stale (...)` line under
    the grade set's own line in `grade-sets list`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"stale grades   {grade_set}"):
            return line
        if line.startswith(grade_set):
            own = lines[i + 1:]
            own = own[:next((j for j, ln in enumerate(own) if not ln.startswith(" ")), len(own))]
            return next(ln for ln in own if ln.strip().startswith("stale"))
    raise AssertionError(f"no stale line of {grade_set} in:\n{text}")


CASES = [  # (command, grade set kind, words that must be there, words that must not)
    ("info", "ensemble", DERIVED, GRADE_AGAIN),
    ("info", "ensemble across bank versions", DERIVED, GRADE_AGAIN),
    ("info", "self-rating", GRADE_AGAIN, DERIVED),
    ("grade-sets list", "ensemble", DERIVED, GRADE_AGAIN),
    ("grade-sets list", "ensemble across bank versions", DERIVED, GRADE_AGAIN),
    ("grade-sets list", "self-rating", GRADE_AGAIN, DERIVED),
]


@pytest.mark.parametrize("command, kind, said, unsaid", CASES, ids=[f"{c[0]} {c[1]}" for c in CASES])
def test_stale_grades_say_what_becomes_of_them(cli, stale, command, kind, said, unsaid):
    store, ids = stale
    result = cli(*command.split(), "--store", store)
    assert result.code == 0, result.err
    line = _line(result.out, ids[kind])
    assert "passage text replaced" in line
    assert said in line and unsaid not in line
