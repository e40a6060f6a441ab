"""Ensembles of grade sets (JudgeBlender, arXiv 2412.13268; umbrela#1's voting): a derived grade set whose grade
for each cell is its members' grades combined by a rule, kept like any other grade set so that every reading
command takes it. Each cell keeps the members' grades and their spread (largest minus smallest) in `extra`.

Cells are (query, passage, question) when every member grades the same bank version (a direct method's
"question" is the query itself); otherwise each member's label of the passage (its largest grade over the
questions) is one cell per (query, passage). Members must grade on one scale (docs/trust.md)."""

from __future__ import annotations

import json
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proctor.errors import UsageError
from proctor.methods import ANSWER_METHODS, method_scale
from proctor.records import GradeSet
from proctor.store import Store

if TYPE_CHECKING:  # numpy is imported by the functions that combine grades: checking a grade needs none
    import numpy as np

RULES = ("mean", "median", "max", "min", "majority")
"""How members' grades become one: mean and median rounded half up; majority ties go to the lowest grade."""
METHOD = STEP = "ensemble"
COMBINED, PARTIAL, FAILED = "combined", "combined-partial", "failed"
"""A cell every member graded; one some member did not grade (or failed); one no member graded usably."""


@dataclass
class Cells:
    """Members' grades per cell: `grades[cell, member]` (NaN where the member has no usable grade)."""

    keys: list[tuple[str, str, str]]
    grades: np.ndarray
    members: list[str] = field(default_factory=list)


def scale_of(grade_set: GradeSet) -> tuple[int, int]:
    """The grade scale (low, high) of a grade set: an ensemble's, a user template's declared one, else its
    method's (docs/trust.md lists them)."""
    for where in (grade_set.params, grade_set.info):
        if "scale" in where:
            low, high = where["scale"]
            return int(low), int(high)
    try:
        return method_scale(grade_set.step)
    except UsageError:
        raise UsageError(f"grade set {grade_set.id} ({grade_set.method}, step {grade_set.step}): no declared grade "
                         "scale for this step, so it cannot be combined with others") from None


def check_min_grade(grade_set: GradeSet, min_grade: int | None, param: str = "min_grade") -> None:
    """Refuse a relevance threshold that no grade of the grade set's scale reaches (e.g. 4 on Thomas' 0-2
    scale: every label would be non-relevant and every score a silent 0); unknown scales pass. The message names
    the parameter `param` (or, when it is no identifier, says `param` as it is: `P@20: rel=`)."""
    if min_grade is None:
        return
    try:
        low, high = scale_of(grade_set)
    except UsageError:
        return
    if not low < min_grade <= high:
        named = "{" + param + "}" if param.isidentifier() else param
        named += f"{'' if param.endswith('=') else ' '}{min_grade}"
        raise UsageError(f"{named}: grade set {grade_set.id} ({grade_set.method}) grades {low}-{high}, "
                         f"so the threshold must be {low + 1}..{high}", params=(param,) if param.isidentifier() else ())


def check_members(members: list[GradeSet], rule: str) -> tuple[tuple[int, int], str]:
    """Refuse what cannot be combined; returns the common scale and the level (`question` or `label`)."""
    if rule not in RULES:
        raise UsageError(f"{{rule}} {rule}: choose one of {', '.join(RULES)}", params=("rule",))
    ids = [m.id for m in members]
    if len(set(ids)) < 2:
        raise UsageError("an ensemble needs at least two different grade sets ({grade_set} A {grade_set} B)",
                         params=("grade_set",))
    for member in members:
        if member.is_ensemble:
            raise UsageError(f"grade set {member.id} is itself an ensemble: combine its members instead")
        if member.method in ANSWER_METHODS or member.intermediate:
            raise UsageError(f"grade set {member.id} ({member.method}) does not grade passages into labels; it "
                             "cannot be a member of an ensemble")
    scales = {m.id: scale_of(m) for m in members}
    if len(set(scales.values())) > 1:
        listed = ", ".join(f"{gid} ({m.method}, step {m.step}) grades {lo}-{hi}"
                           for (gid, (lo, hi)), m in zip(scales.items(), members, strict=True))
        raise UsageError(f"these grade sets grade on different scales and cannot be combined: {listed}. "
                         "Combine grade sets of one scale (docs/trust.md, \"Ensembles\")")
    level = "question" if len({(m.bank, m.bank_version) for m in members}) == 1 else "label"
    return next(iter(scales.values())), level


def ensemble_grade_set(members: list[GradeSet], rule: str, name: str | None = None) -> GradeSet:
    """The derived grade set's identity: its members (in id order) and the rule."""
    members = sorted(members, key=lambda m: m.id)
    scale, level = check_members(members, rule)
    same_bank = level == "question"
    return GradeSet(METHOD, "+".join(dict.fromkeys(m.model for m in members)), rule,
                    members[0].bank if same_bank else None, members[0].bank_version if same_bank else None,
                    {"members": [m.id for m in members], "rule": rule, "level": level, "scale": list(scale)},
                    STEP, {"ensemble": True, **({"name": name} if name else {})})


def read_cells(store: Store, members: list[GradeSet], level: str, scale: tuple[int, int]) -> Cells:
    """Every member's grades per cell (label level: the member's largest grade of the passage)."""
    import numpy as np

    index: dict[tuple[str, str, str], int] = {}
    columns: list[dict[int, float]] = []
    for member in members:
        column: dict[int, float] = {}
        for qid, pid, question, grade in store.grades.grade_rows(member.id, member.step):
            key = (qid, pid, question if level == "question" else "")
            row = index.setdefault(key, len(index))
            if grade is None:
                continue
            if not scale[0] <= grade <= scale[1]:
                raise UsageError(f"grade set {member.id} holds grade {grade} (query {qid}, passage {pid}) outside "
                                 f"its scale {scale[0]}-{scale[1]}; it cannot be combined")
            column[row] = max(column.get(row, -1.0), float(grade)) if level == "label" else float(grade)
        columns.append(column)
    grades = np.full((len(index), len(members)), np.nan)
    for j, column in enumerate(columns):
        if column:
            rows = np.fromiter(column, dtype=np.int64)
            grades[rows, j] = np.fromiter(column.values(), dtype=float)
    return Cells(list(index), grades, [m.id for m in members])


def combine(grades: np.ndarray, rule: str, scale: tuple[int, int]) -> np.ndarray:
    """One grade per row of `grades` (cells x members, NaN = no grade) by `rule`; NaN where no member graded."""
    import numpy as np

    usable = ~np.isnan(grades).all(axis=1)
    out = np.full(len(grades), np.nan)
    part = grades[usable]
    if rule == "majority":
        values = np.arange(scale[0], scale[1] + 1)
        votes = (part[:, :, None] == values[None, None, :]).sum(axis=1)
        out[usable] = values[votes.argmax(axis=1)]  # argmax takes the first: ties go to the lowest grade
        return out
    pick = {"mean": np.nanmean, "median": np.nanmedian, "max": np.nanmax, "min": np.nanmin}[rule]
    out[usable] = np.floor(pick(part, axis=1) + 0.5)
    return out


def derive(store: Store, members: list[GradeSet], rule: str, name: str | None = None) -> tuple[GradeSet, dict]:
    """Make (or re-derive) the ensemble of `members` by `rule`; returns it with a summary of its cells."""
    target = ensemble_grade_set(members, rule, name)
    kept = next((s for s in store.grades.grade_sets() if s.id == target.id), None)
    if kept is not None and "summary" in kept.info and not is_stale(store, kept):  # the same again: unchanged
        if name and kept.info.get("name") != name:
            store.grades.update_grade_set_info(kept.id, {"name": name})
        return kept, kept.info["summary"]
    by_id = {m.id: m for m in members}
    ordered = [by_id[i] for i in target.params["members"]]
    scale = tuple(target.params["scale"])
    with nullcontext() if store.db.in_transaction else store.transaction():  # members read as they are written
        fingerprint = {m.id: store.grades.grade_fingerprint(m.id, m.step) for m in ordered}
        cells = read_cells(store, ordered, target.params["level"], scale)  # type: ignore[arg-type]
        combined = combine(cells.grades, rule, scale)  # type: ignore[arg-type]
        summary = summarize(cells, combined)
        store.grades.ensure_grade_set(target)
        store.grades.replace_step_grades(target.id, STEP, _rows(cells, combined))
        store.grades.update_grade_set_info(target.id, {"fingerprint": fingerprint, "summary": summary,
                                                **({"name": name} if name else {})})
    fresh = next(s for s in store.grades.grade_sets() if s.id == target.id)
    return fresh, summary


def _rows(cells: Cells, combined: np.ndarray):
    """The ensemble's grade rows, each cell's members' grades and spread in `extra`."""
    import numpy as np

    present = ~np.isnan(cells.grades)
    spread = np.where(present.any(axis=1), np.nanmax(np.where(present, cells.grades, -np.inf), axis=1)
                      - np.nanmin(np.where(present, cells.grades, np.inf), axis=1), np.nan)
    for i, (qid, pid, question) in enumerate(cells.keys):
        grades = [None if np.isnan(g) else int(g) for g in cells.grades[i]]
        if np.isnan(combined[i]):
            yield (STEP, qid, pid, question, None, None, FAILED, None, None, json.dumps({"members": grades}))
            continue
        status = COMBINED if present[i].all() else PARTIAL
        extra = json.dumps({"members": grades, "spread": int(spread[i])})
        yield (STEP, qid, pid, question, None, int(combined[i]), status, None, None, extra)


def summarize(cells: Cells, combined: np.ndarray) -> dict[str, Any]:
    """Counts of the cells: complete, partial, failed, and how many members disagree by how much."""
    import numpy as np

    present = ~np.isnan(cells.grades)
    usable = present.any(axis=1)
    high = np.nanmax(np.where(present, cells.grades, -np.inf), axis=1)
    low = np.nanmin(np.where(present, cells.grades, np.inf), axis=1)
    spreads = (high - low)[usable & (present.sum(axis=1) > 1)].astype(int)
    histogram = Counter(spreads.tolist())
    return {"members": cells.members, "cells": len(cells.keys), "complete": int(present.all(axis=1).sum()),
            "partial": int((usable & ~present.all(axis=1)).sum()), "failed": int((~usable).sum()),
            "compared": int(len(spreads)), "disagreeing": int((spreads > 0).sum()),
            "spread": {str(k): histogram[k] for k in sorted(histogram)},
            "queries_disagreeing": len({cells.keys[i][0] for i in np.flatnonzero(usable & (high - low > 0))})}


def is_stale(store: Store, grade_set: GradeSet) -> bool:
    """Whether a member of an ensemble changed since it was derived."""
    members = {s.id: s for s in store.grades.grade_sets()}
    kept = grade_set.info.get("fingerprint") or {}
    for member_id in grade_set.members:
        member = members.get(member_id)
        if member is None:
            raise UsageError(f"ensemble {grade_set.id}: its member grade set {member_id} is no longer in the store; "
                             "drop the ensemble (`proctor grade-sets drop`) or import the member again")
        if kept.get(member_id) != store.grades.grade_fingerprint(member_id, member.step):
            return True
    return False


def refreshed(store: Store, grade_set: GradeSet) -> GradeSet:
    """An ensemble whose members changed, derived again (other grade sets as they are)."""
    if not grade_set.is_ensemble or not is_stale(store, grade_set):
        return grade_set
    if store.read_only:
        raise UsageError(f"ensemble {grade_set.id}: a member gained or changed grades since it was derived, and "
                         f"{store.path} cannot be written to derive it again; run `proctor ensemble` on a copy")
    members = {s.id: s for s in store.grades.grade_sets()}
    fresh, _ = derive(store, [members[i] for i in grade_set.members], grade_set.params["rule"],
                      grade_set.info.get("name"))
    return fresh


def disagreements(store: Store, grade_set: GradeSet, limit: int | None = None) -> list[dict[str, Any]]:
    """The cells of an ensemble whose members disagree, largest spread first (then query, passage, question)."""
    if not grade_set.is_ensemble:
        raise UsageError(f"grade set {grade_set.id} is not an ensemble (made by `proctor ensemble`)")
    members = grade_set.members
    cells = [{"query_id": g.query_id, "passage_id": g.passage_id, "question_id": g.question_id, "grade": g.grade,
              "spread": g.extra["spread"], "members": dict(zip(members, g.extra["members"], strict=True))}
             for g in store.grades.records(grade_set, STEP) if g.extra and g.extra.get("spread")]
    cells.sort(key=lambda c: (-c["spread"], c["query_id"], c["passage_id"], c["question_id"]))
    return cells if limit is None else cells[:limit]


def fresh_grade_sets(store: Store) -> list[GradeSet]:
    """`store.grade_sets()`, every ensemble whose members changed derived again first."""
    sets = store.grades.grade_sets()
    if not any(s.is_ensemble for s in sets):
        return sets
    return [refreshed(store, s) for s in sets]
