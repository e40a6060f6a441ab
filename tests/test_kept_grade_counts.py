"""The counts per parse status an import keeps for a grade set are those of its stored grades, even when a line
gives the same grade twice (one stored row)."""

from __future__ import annotations

import json

from conftest import opened_store
from proctor.records import GradeSet


def _line(grades_of_p1: list[list]) -> str:
    """An exam_pp line of query q1: passage p1 with `grades_of_p1` and p2 with one grade, in a named grade set."""
    grade_set = GradeSet("direct", "m", "v1", None, None, {}, "", {})
    named = {"id": grade_set.id, "method": "direct", "model": "m", "prompt_version": "v1", "bank": None,
             "bank_version": None, "params": {}, "label_step": "", "info": {}}
    grade = ["", 2, "ok", "reply", None, None, None]
    return json.dumps(["q1", [
        {"paragraph_id": "p1", "text": "one", "grades": [{"proctor": {"grade_set": named, "grades": grades_of_p1}}]},
        {"paragraph_id": "p2", "text": "two", "grades": [{"proctor": {"grade_set": named, "grades": [grade]}}]},
    ]]) + "\n"


def test_a_grade_given_twice_in_a_line_is_counted_once(cli, tmp_path):
    grade = ["", 2, "ok", "reply", None, None, None]
    (tmp_path / "grades.jsonl").write_text(_line([grade, grade]))
    assert cli("import", "exampp", str(tmp_path / "grades.jsonl"), "--store", str(tmp_path / "s.db")).code == 0
    with opened_store(tmp_path / "s.db") as store:
        kept = store.tallies.kept_counts()
        (grade_set_id,) = kept
        assert kept[grade_set_id] == store.tallies.recount(grade_set_id) == {"direct": {"ok": 2}}


def test_a_line_of_distinct_grades_keeps_its_counts(cli, tmp_path):
    (tmp_path / "grades.jsonl").write_text(_line([["", None, "failed", "?", None, None, None]]))
    assert cli("import", "exampp", str(tmp_path / "grades.jsonl"), "--store", str(tmp_path / "s.db")).code == 0
    with opened_store(tmp_path / "s.db") as store:
        kept = store.tallies.kept_counts()
        (grade_set_id,) = kept
        assert kept[grade_set_id] == store.tallies.recount(grade_set_id) == {"direct": {"failed": 1, "ok": 1}}
