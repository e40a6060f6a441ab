"""Grade-set management (`proctor grade-sets list | drop ID | retry-failed ID`): list every grade set, delete
one with all its grades, or forget its failed grades so the next `grade` sends those pairs again. Both
changes take the grade set's grading lock, so a running `grade` is never pulled from under."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.errors import UsageError
from proctor.gradesets.resolve import resolve_grade_set
from proctor.grading.runner import grading_lock
from proctor.records import GradeSet
from proctor.store import Store


@dataclass(frozen=True)
class Change:
    """What a management command did to one grade set (and, dropped with it, to the ensembles made of it)."""

    grade_set: GradeSet
    grades: int
    by_step: dict[str, int]
    cascaded: tuple[tuple[GradeSet, int], ...] = ()
    """Ensembles dropped with it (`--cascade`) and their grades."""


def list_grade_sets(store: Store) -> list[tuple[GradeSet, dict[str, dict[str, int]]]]:
    """Every grade set with `{step: {parse_status: count}}`."""
    return [(s, store.grades.step_statuses(s.id)) for s in store.grades.grade_sets()]


def ensembles_of(store: Store, grade_set_id: str) -> list[GradeSet]:
    """The ensembles that have the grade set `grade_set_id` as a member."""
    return [s for s in store.grades.grade_sets()
            if grade_set_id in s.members]


def refuse_dropping_member(grade_set: GradeSet, ensembles: list[GradeSet]) -> None:
    """An ensemble whose member is gone can no longer be read (nor derived again): dropping a member is refused
    unless its ensembles go with it (`cascade`)."""
    if ensembles:
        listed = ", ".join(f"{e.id} ({e.prompt_version} of {len(e.params.get('members', []))} grade sets, "
                           f"{e.grades} grades)" for e in ensembles)
        raise UsageError(f"grade set {grade_set.id} ({grade_set.method} / {grade_set.model}) is a member of "
                         f"{len(ensembles)} ensemble(s): {listed}; without it they could not be read. Drop them "
                         "first, or add {cascade} to drop them with it", params=("cascade",))


def drop(store: Store, grade_set_id: str, *, cascade: bool = False) -> Change:
    """Delete the grade set `grade_set_id` (a unique prefix) with the grades of every step, and with `cascade` the
    ensembles made of it (without it, a member of an ensemble is refused); cached replies stay, so grading it
    again asks the server only for prompts it has not seen."""
    grade_set = resolve_grade_set(store, grade_set=grade_set_id, fresh=False)
    ensembles = ensembles_of(store, grade_set.id)
    if not cascade:
        refuse_dropping_member(grade_set, ensembles)
    by_step = {step: sum(counts.values()) for step, counts in store.grades.step_statuses(grade_set.id).items()}
    with grading_lock(store, grade_set), store.transaction():
        cascaded = tuple((e, store.grades.drop_grade_set(e.id)) for e in ensembles)
        deleted = store.grades.drop_grade_set(grade_set.id)
    return Change(grade_set, deleted, by_step, cascaded)


def retry_failed(store: Store, grade_set_id: str) -> Change:
    """Forget the failed grades of a grade set (every step), including those given up after `--max-attempts`,
    so that the next `grade` with the same options sends those pairs again."""
    grade_set = resolve_grade_set(store, grade_set=grade_set_id, fresh=False)
    with grading_lock(store, grade_set), store.transaction():
        by_step = store.grades.forget_failed(grade_set.id)
    return Change(grade_set, sum(by_step.values()), by_step)
