"""`proctor grade-sets list | drop ID --yes | retry-failed ID`: manage the grade sets of a store."""

from __future__ import annotations

import argparse
import json

from proctor.cli.common import add_format, add_store, note, readable_store, writable_store
from proctor.errors import UsageError


def register(commands: argparse._SubParsersAction) -> None:
    """Add `grade-sets` and its sub-commands."""
    p = commands.add_parser("grade-sets", help="list grade sets, drop one, retry its failed pairs",
                            description="Manage the store's grade sets (see docs/grade-sets.md). IDs may be "
                            "given as a unique prefix.")
    sub = p.add_subparsers(dest="grade_sets_command", metavar="SUBCOMMAND", required=True)
    listing = sub.add_parser("list", help="every grade set with its grades per step and status",
                             description="Every grade set: id, method / model, bank@version, prompt version, "
                             "grades and failures, and per step the grades by how they were parsed.")
    add_store(listing)
    add_format(listing, ("text", "json"), "text")
    listing.set_defaults(func=run_list)
    drop = sub.add_parser("drop", help="delete a grade set with all its grades (needs --yes)",
                          description="Delete one grade set with the grades of every step. Cached replies stay, "
                          "so grading it again asks the server only for prompts it has not seen. Refused while "
                          "a `grade` of it is running.")
    drop.add_argument("grade_set", metavar="ID")
    drop.add_argument("--yes", action="store_true", help="really delete (without it nothing is deleted)")
    add_store(drop)
    drop.set_defaults(func=run_drop)
    retry = sub.add_parser("retry-failed", help="forget failed grades so the next grade sends them again",
                           description="Delete the failed grades of one grade set (every step), also those "
                           "given up after --max-attempts, so that the next `proctor grade` with the same "
                           "options sends those pairs again. Usable grades are kept.")
    retry.add_argument("grade_set", metavar="ID")
    add_store(retry)
    retry.set_defaults(func=run_retry)


def run_list(args: argparse.Namespace) -> int:
    """Print every grade set."""
    from proctor.gradesets.manage import list_grade_sets

    with readable_store(args.store, args.lock_timeout) as store:
        sets = list_grade_sets(store)
        stale = store.imports.stale_counts()
    if args.format == "json":
        print(json.dumps([{**s.as_dict(), "steps": steps, "stale": stale.get(s.id, {})} for s, steps in sets],
                         indent=2))
        return 0
    if not sets:
        note(f"{args.store}: no grade sets")
    for grade_set, steps in sets:
        print(grade_set.describe())
        for step, counts in sorted(steps.items()):
            print(f"    {step}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if stale.get(grade_set.id):
            print("    stale (not counted; graded again by the next `grade`): "
                  + ", ".join(f"{why} {n}" for why, n in stale[grade_set.id].items()))
    return 0


def run_drop(args: argparse.Namespace) -> int:
    """Delete one grade set."""
    from proctor.gradesets.manage import drop
    from proctor.gradesets.resolve import resolve_grade_set

    if not args.yes:
        with readable_store(args.store, args.lock_timeout) as store:
            grade_set = resolve_grade_set(store, grade_set=args.grade_set, fresh=False)
        raise UsageError(f"drop {grade_set.id} ({grade_set.method} / {grade_set.model}, {grade_set.grades} grades): "
                         "add --yes to delete it with all its grades")
    with writable_store(args.store, args.lock_timeout) as store:
        change = drop(store, args.grade_set)
    note(f"dropped grade set {change.grade_set.id} ({change.grade_set.method} / {change.grade_set.model}): "
         f"{change.grades} grades deleted")
    return 0


def run_retry(args: argparse.Namespace) -> int:
    """Forget the failed grades of one grade set."""
    from proctor.gradesets.manage import retry_failed

    with writable_store(args.store, args.lock_timeout) as store:
        change = retry_failed(store, args.grade_set)
    steps = ", ".join(f"{step} {n}" for step, n in sorted(change.by_step.items())) or "none"
    note(f"grade set {change.grade_set.id}: {change.grades} failed grades forgotten ({steps}); the next "
         "`proctor grade` with the same options sends those pairs again")
    return 0
