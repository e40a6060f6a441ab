"""Which grade set a command reads: `--grade-set ID` (a unique prefix) or the `--method/--model/--bank` filters
that must leave exactly one (an ensemble whose members changed is derived again first), and the description
every report carries of how its labels were made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.errors import UsageError
from proctor.methods import ANSWER_METHODS
from proctor.records import GradeSet
from proctor.store import Store


def resolve_grade_set(store: Store, grade_set: str | None = None, method: str | None = None,
                      model: str | None = None, bank: str | None = None, *, fresh: bool = True) -> GradeSet:
    """The one grade set that `--grade-set ID` (or a unique prefix) names or `--method/--model/--bank` leave;
    none or several is a usage error that lists the candidates (id, method, model, bank@version, prompt version,
    grades, failures). `--bank NAME` is the bank's latest version; a grade set without a single grade (a `grade`
    that failed before its first) is left out unless named by id, and listed as such. An ensemble whose members
    changed is derived again first (`fresh`; not for dropping it)."""
    sets = store.grades.grade_sets()
    if not sets:
        raise UsageError(f"{store.path}: the store holds no grades (import an exam_pp file or run `proctor grade`)")
    matching, empty = grade_sets_matching(store, sets, grade_set, method, model, bank)
    asked = f"{{grade_set}} {grade_set}" if grade_set is not None else ", ".join(
        f"{{{k}}} {v}" for k, v in (("method", method), ("model", model), ("bank", bank)) if v)
    chosen = _one(sets, matching, asked or "(grade sets of generated answers are read with {metric} "
                  "nuggets|citations)", empty)
    if not fresh:
        return chosen
    from proctor.gradesets.ensemble import refreshed

    return refreshed(store, chosen)


def grade_sets_matching(store: Store, sets: list[GradeSet], grade_set: str | None = None, method: str | None = None,
                        model: str | None = None, bank: str | None = None) -> tuple[list[GradeSet], list[GradeSet]]:
    """(the grade sets an id prefix names, or that the filters leave; the grade sets without a single grade the
    filters left out). `--bank NAME` is the bank's latest version; intermediate grade sets and (unless
    `--method` names them) grade sets of generated answers are left out unless named by id."""
    if grade_set is not None:
        return [s for s in sets if s.id.startswith(grade_set)], []
    name, _, version = (bank or "").partition("@")
    if bank is not None and not version:
        version = next((b["version"] for b in store.banks.versions() if b["bank"] == name and b["latest"]), "")
    matching = [s for s in sets if not s.intermediate and method_matches(s, method, sets)
                and (method is not None or s.method not in ANSWER_METHODS)
                and (model is None or s.model == model) and (bank is None or s.bank == name)
                and (not version or s.bank_version == version)]
    return [s for s in matching if s.grades], [s for s in matching if not s.grades]


def _one(sets: list[GradeSet], matching: list[GradeSet], asked: str, empty: Sequence[GradeSet] = ()) -> GradeSet:
    """The only grade set in `matching`, else a usage error listing the candidates (and the empty ones left
    out)."""
    if len(matching) == 1:
        return matching[0]
    listing = "\n".join("  " + s.describe() for s in (matching or sets))
    if empty:
        listing += "\nleft out, without a single grade (a `grade` that failed before its first):\n" + "\n".join(
            "  " + s.describe() for s in empty)
    if not matching:
        raise UsageError(f"no grade set matches {asked}; the store has:\n{listing}", params=_FILTERS)
    raise UsageError("several grade sets match; name one with {grade_set} ID (or narrow with {method}, {model}, "
                     f"{{bank}}):\n{listing}", params=_FILTERS)


_FILTERS = ("grade_set", "method", "model", "bank", "metric")
"""The parameters that choose a grade set, named in the messages of `resolve_grade_set`."""


def method_matches(grade_set: GradeSet, method: str | None, sets: list[GradeSet]) -> bool:
    """`--method M` names a variant (`four-prompts-sum`) where one is called so, else a method."""
    if method is None:
        return True
    if any(s.variant == method for s in sets):
        return grade_set.variant == method
    return grade_set.method == method


def describe(store: Store, grade_set: GradeSet | None) -> dict[str, Any]:
    """How labels were made: grade set id, method, model, prompt version, bank version, parameters."""
    if grade_set is None:
        return {"labels": "human judgments", "labels_id": "official"}
    return {
        "labels": "EXAM grades",
        "grade_set": grade_set.id,
        "labels_id": grade_set.id,
        "method": grade_set.method,
        "model": grade_set.model,
        "prompt_version": grade_set.prompt_version,
        "bank": grade_set.bank_label if grade_set.bank else "none",
        "params": grade_set.params,
        "grades": grade_set.grades,
        "failed_grades": grade_set.failures,
        **({"flagged_pairs": flagged} if (flagged := len(store.probes.pool_flags(grade_set.id))) else {}),
    }
