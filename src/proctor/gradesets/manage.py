"""Grade-set management (`proctor grade-sets list | drop ID | retry-failed ID`): list every grade set, delete
one with all its grades, or forget its failed grades so the next `grade` sends those pairs again. Both
changes take the grade set's grading lock, so a running `grade` is never pulled from under."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.gradesets.resolve import resolve_grade_set
from proctor.grading.runner import grading_lock
from proctor.records import GradeSet
from proctor.store import Store


@dataclass(frozen=True)
class Change:
    """What a management command did to one grade set."""

    grade_set: GradeSet
    grades: int
    by_step: dict[str, int]


def list_grade_sets(store: Store) -> list[tuple[GradeSet, dict[str, dict[str, int]]]]:
    """Every grade set with `{step: {parse_status: count}}`."""
    return [(s, store.grades.step_statuses(s.id)) for s in store.grades.grade_sets()]


def drop(store: Store, grade_set_id: str) -> Change:
    """Delete the grade set `grade_set_id` (a unique prefix) with the grades of every step; cached replies stay,
    so grading it again asks the server only for prompts it has not seen."""
    grade_set = resolve_grade_set(store, grade_set=grade_set_id, fresh=False)
    by_step = {step: sum(counts.values()) for step, counts in store.grades.step_statuses(grade_set.id).items()}
    with grading_lock(store, grade_set), store.transaction():
        deleted = store.grades.drop_grade_set(grade_set.id)
    return Change(grade_set, deleted, by_step)


def retry_failed(store: Store, grade_set_id: str) -> Change:
    """Forget the failed grades of a grade set (every step), including those given up after `--max-attempts`,
    so that the next `grade` with the same options sends those pairs again."""
    grade_set = resolve_grade_set(store, grade_set=grade_set_id, fresh=False)
    with grading_lock(store, grade_set), store.transaction():
        by_step = store.grades.forget_failed(grade_set.id)
    return Change(grade_set, sum(by_step.values()), by_step)
