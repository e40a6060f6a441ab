"""`proctor grade-sets list | drop ID --yes | retry-failed ID`: manage the grade sets of a store."""

from __future__ import annotations

import argparse
import sys
from typing import get_args

from proctor import api
from proctor.api.types import TextFormat
from proctor.cli.common import add_format, add_store, note, readable_store, writable_store
from proctor.options.gradesets import DropOptions
from proctor.options.model import add_options


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
    add_format(listing, get_args(TextFormat), "text")
    listing.set_defaults(func=run_list)
    drop = sub.add_parser("drop", help="delete a grade set with all its grades (needs --yes)",
                          description="Delete one grade set with the grades of every step. Cached replies stay, "
                          "so grading it again asks the server only for prompts it has not seen. Refused while "
                          "a `grade` of it is running, and for a member of an ensemble unless --cascade drops the "
                          "ensembles with it.")
    drop.add_argument("grade_set", metavar="ID")
    add_options(drop, DropOptions)
    add_store(drop)
    drop.set_defaults(func=run_drop, param_flags={"grade_set": "--grade-set"})
    retry = sub.add_parser("retry-failed", help="forget failed grades so the next grade sends them again",
                           description="Delete the failed grades of one grade set (every step), also those "
                           "given up after --max-attempts, so that the next `proctor grade` with the same "
                           "options sends those pairs again. Usable grades are kept.")
    retry.add_argument("grade_set", metavar="ID")
    add_store(retry)
    retry.set_defaults(func=run_retry, param_flags={"grade_set": "--grade-set"})


def run_list(args: argparse.Namespace) -> int:
    """Print every grade set."""
    with readable_store(args.store, args.lock_timeout) as store:
        listing = api.grade_sets(store)
    if not listing.grade_sets and args.format != "json":
        note(f"{args.store}: no grade sets")
    sys.stdout.write(api.render(listing, args.format))
    return 0


def run_drop(args: argparse.Namespace) -> int:
    """Delete one grade set (with --yes; without it, say what would be deleted)."""
    opened = writable_store if args.yes else readable_store
    with opened(args.store, args.lock_timeout) as store:
        change = api.drop_grade_set(store, args.grade_set, yes=args.yes, cascade=args.cascade)
    note(api.render(change))
    return 0


def run_retry(args: argparse.Namespace) -> int:
    """Forget the failed grades of one grade set."""
    with writable_store(args.store, args.lock_timeout) as store:
        change = api.retry_failed(store, args.grade_set)
    note(api.render(change))
    return 0
