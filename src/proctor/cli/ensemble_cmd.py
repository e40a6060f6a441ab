"""`proctor ensemble --grade-set A --grade-set B --rule R`: a derived grade set combining others."""

from __future__ import annotations

import argparse
import sys

from proctor import api
from proctor.api.types import Ensemble
from proctor.cli.common import add_format, add_store, readable_store
from proctor.options.gradesets import EnsembleOptions
from proctor.options.model import add_options

DESCRIPTION = """\
Combine grade sets into an ensemble: a derived grade set (its identity is its members and the rule) that every
command reading grades takes with --grade-set ID. Per cell (query, passage, question; or per passage when the
members grade different banks) the members' grades are combined by the rule:
  mean, median   rounded half up (3.5 -> 4)      max, min   the largest / smallest grade
  majority       the most frequent grade, ties to the lowest
Each cell keeps its members' grades and their spread, so disagreement is counted and listed. Members must
grade on one scale (docs/trust.md). Run again after a member gained grades (reading commands also derive a
changed ensemble again by themselves)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `ensemble` command."""
    p = commands.add_parser("ensemble", help="combine grade sets into a derived grade set (mean, majority, ...)",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    members, = add_options(p, EnsembleOptions, "grade_sets")
    members.required = True
    rule, = add_options(p, EnsembleOptions, "rule")
    rule.required = True
    add_options(p, EnsembleOptions, "name", "show")
    add_format(p, Ensemble.formats, "text")
    p.set_defaults(func=run, param_flags={"grade_set": "--grade-set"})


def run(args: argparse.Namespace) -> int:
    """Derive and print the summary."""
    with readable_store(args.store, args.lock_timeout) as store:
        result = api.ensemble(store, args.grade_sets, args.rule, name=args.name, show=args.show)
    sys.stdout.write(api.render(result, args.format))
    return 0
