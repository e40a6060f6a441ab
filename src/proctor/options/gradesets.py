"""The grade-set options: combining grade sets into an ensemble (`proctor ensemble`, `api.ensemble`) and
dropping one (`proctor grade-sets drop`, `api.drop_grade_set`), one field each."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.inputs import ExportOptions
from proctor.options.model import NOT_IN_TOML, Checked, borrow, int_in, option

RULES = ("mean", "median", "max", "min", "majority")
"""How an ensemble's members' grades of a cell become one."""


@dataclass(frozen=True, kw_only=True)
class EnsembleOptions(Checked):
    """How an ensemble combines its members, and what is shown of their disagreement."""

    grade_sets: tuple[str, ...] | None = borrow(ExportOptions, "grade_sets",
                                                help="a member grade set (id or unique prefix); give two or more")
    rule: str | None = option(choices=RULES, toml=NOT_IN_TOML, help="how the members' grades of a cell become one")
    name: str | None = option(toml=NOT_IN_TOML,
                              help="a name to remember the ensemble by (not part of its identity)")
    show: int = option(10, parse=int_in(0), metavar="N", toml=NOT_IN_TOML,
                       help="list the N cells whose members disagree most (default {default})")


@dataclass(frozen=True, kw_only=True)
class DropOptions(Checked):
    """Whether a drop really deletes, and whether it takes the ensembles built on the grade set with it."""

    yes: bool = option(False, action="store_true", toml=NOT_IN_TOML,
                       help="really delete (without it nothing is deleted)")
    cascade: bool = option(False, action="store_true", toml=NOT_IN_TOML,
                           help="a member of ensembles: drop those ensembles with it (without it, dropping a member "
                           "is refused, listing them)")


__all__ = ["RULES", "DropOptions", "EnsembleOptions"]
