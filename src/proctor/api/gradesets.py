"""Grade sets: listing them, dropping one, forgetting its failed grades (`proctor grade-sets`), and ensembles,
derived grade sets that combine others (`proctor ensemble`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from proctor.api.modes import Rule, TextFormat
from proctor.api.results import JSON, Report, format_of, json_text
from proctor.api.stores import stale_fate
from proctor.errors import UsageError
from proctor.gradesets.manage import Change
from proctor.gradesets.resolve import resolve_grade_set
from proctor.options.gradesets import EnsembleOptions
from proctor.records import GradeSet, frozen
from proctor.store import Store


@dataclass(frozen=True)
class GradeSetListing:
    """Every grade set of a store with its grades per step (`{step: {parse_status: count}}`) and its stale
    grades by reason."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    grade_sets: tuple[tuple[GradeSet, dict[str, dict[str, int]]], ...]
    stale: dict[str, dict[str, int]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "grade_sets", tuple((s, frozen(steps)) for s, steps in self.grade_sets))
        object.__setattr__(self, "stale", frozen(self.stale))

    def to_json(self) -> JSON:
        """A list of objects: each grade set with its `steps` and `stale` grades."""
        return json.loads(self.render("json"))

    def render(self, fmt: TextFormat | None = None) -> str:
        """`text` (default): each grade set and its steps; `json`: a list of objects."""
        if format_of(self, fmt) == "json":
            return json_text([{**s.as_dict(), "steps": steps, "stale": self.stale.get(s.id, {})}
                              for s, steps in self.grade_sets])
        lines = []
        for grade_set, steps in self.grade_sets:
            lines.append(grade_set.describe())
            lines += [f"    {step}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                      for step, counts in sorted(steps.items())]
            if self.stale.get(grade_set.id):
                lines.append(f"    stale (not counted; {stale_fate(grade_set.method)}): "
                             + ", ".join(f"{why} {n}" for why, n in self.stale[grade_set.id].items()))
        return "".join(line + "\n" for line in lines)


@dataclass(frozen=True)
class GradeSetChange:
    """What `drop_grade_set` or `retry_failed` did to one grade set."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    action: Literal["dropped", "retried"]
    change: Change

    def to_json(self) -> JSON:
        """What changed: the action, the grade set, its grades deleted or forgotten (per step when forgotten) and
        the ensembles dropped with it."""
        g, change = self.change.grade_set, self.change
        return {"action": self.action, "grade_set": g.id, "method": g.method, "model": g.model,
                "grades": change.grades, "by_step": dict(sorted(change.by_step.items())),
                "cascaded": [{"grade_set": e.id, "grades": n} for e, n in change.cascaded]}

    def render(self, fmt: str | None = None) -> str:
        """One line saying what changed (`text`), or its JSON."""
        if format_of(self, fmt) == "json":
            return json_text(self.to_json())
        g, change = self.change.grade_set, self.change
        if self.action == "dropped":
            return (f"dropped grade set {g.id} ({g.method} / {g.model}): {change.grades} grades deleted"
                    + "".join(f"; with it ensemble {e.id}: {n} grades deleted" for e, n in change.cascaded))
        steps = ", ".join(f"{step} {n}" for step, n in sorted(change.by_step.items())) or "none"
        return (f"grade set {g.id}: {change.grades} failed grades forgotten ({steps}); the next `proctor grade` with "
                "the same options sends those pairs again")


def grade_sets(store: Store) -> GradeSetListing:
    """Every grade set with its grades per step and its stale grades (`proctor grade-sets list`)."""
    from proctor.gradesets.manage import list_grade_sets

    return GradeSetListing(list_grade_sets(store), store.imports.stale_counts())


def drop_grade_set(store: Store, grade_set: str, *, yes: bool = False, cascade: bool = False) -> GradeSetChange:
    """Delete a grade set (id or unique prefix) with the grades of every step; a member of an ensemble only with
    `cascade` (its ensembles are dropped with it). Without `yes` nothing is deleted and the refusal names what
    would be."""
    from proctor.gradesets.manage import drop, ensembles_of, refuse_dropping_member

    if not yes:
        chosen = resolve_grade_set(store, grade_set=grade_set, fresh=False)
        ensembles = ensembles_of(store, chosen.id)
        if not cascade:
            refuse_dropping_member(chosen, ensembles)
        with_them = "".join(f", with ensemble {e.id} ({e.grades} grades)" for e in ensembles)
        raise UsageError(f"drop {chosen.id} ({chosen.method} / {chosen.model}, {chosen.grades} grades){with_them}: "
                         "add {yes} to delete it with all its grades", params=("yes",))
    return GradeSetChange("dropped", drop(store, grade_set, cascade=cascade))


def retry_failed(store: Store, grade_set: str) -> GradeSetChange:
    """Forget the failed grades of a grade set (every step), so the next `grade` sends those pairs again."""
    from proctor.gradesets.manage import retry_failed as forget

    return GradeSetChange("retried", forget(store, grade_set))


class Ensemble(Report):
    """An ensemble: its grade set, rule, level, scale, members, counts of disagreeing cells and the cells of
    largest spread (what `proctor ensemble --format json` prints)."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")

    def as_text(self, fmt: str) -> str:
        """The summary as lines a person reads."""
        s, g = self["summary"], self["grade_set"]
        lines = [f"ensemble {g['id']}  rule {self['rule']}  level {self['level']}  scale "
                 f"{self['scale'][0]}-{self['scale'][1]}" + (f"  name {self['name']}" if self["name"] else ""),
                 *(f"  member {m['id']}  {m['method']} / {m['model']}  prompt {m['prompt_version']}  "
                   f"{m['grades']} grades" for m in self["members"]),
                 f"cells {s['cells']}: {s['complete']} graded by every member, {s['partial']} by some, "
                 f"{s['failed']} by none",
                 f"members disagree on {s['disagreeing']} of {s['compared']} cells graded by two or more "
                 f"({s['queries_disagreeing']} queries); by spread: "
                 + ", ".join(f"{k}: {v}" for k, v in s["spread"].items())]
        if self["disagreements"]:
            lines.append("largest disagreements (query, passage, question: members -> grade):")
            lines += [f"  {c['query_id']}  {c['passage_id']}  {c['question_id'] or '-'}: "
                      + " ".join("-" if v is None else str(v) for v in c["members"].values()) + f" -> {c['grade']}"
                      for c in self["disagreements"]]
        return "\n".join(lines) + "\n"


def ensemble(store: Store, grade_sets: Sequence[str], rule: Rule, *, name: str | None = None,
             show: int = EnsembleOptions.show) -> Ensemble:
    """Make (or derive again) the ensemble of grade sets (ids or unique prefixes) combined by `rule` (mean,
    median, max, min, majority): a grade set like any other. Returns it with its members, the counts of cells
    where members disagree, and the `show` cells of largest spread."""
    from proctor.gradesets.ensemble import derive, disagreements

    members = [resolve_grade_set(store, g) for g in grade_sets]
    if store.read_only:
        raise UsageError(f"{store.path}: the store cannot be written (read-only file or folder)")
    grade_set, summary = derive(store, members, rule, name)
    return Ensemble({"grade_set": grade_set.as_dict(), "name": name, "rule": rule, "level": grade_set.params["level"],
                     "scale": grade_set.params["scale"],
                     "members": [m.as_dict() for m in sorted(members, key=lambda m: m.id)], "summary": summary,
                     "disagreements": disagreements(store, grade_set, show)})
