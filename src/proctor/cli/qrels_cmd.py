"""`proctor qrels --store S ...`: EXAM-Qrels (relevance labels from grades) in trec_eval's qrels format."""

from __future__ import annotations

import argparse
import sys

from proctor import api
from proctor.api import commands
from proctor.cli.common import (
    add_floor_options,
    add_store,
    floor_of,
    note,
    readable_store,
    warn_coverage,
)
from proctor.options.evaluation import QrelsOptions
from proctor.options.model import add_options, from_args
from proctor.options.selection import LabelChoice


def add_label_options(p: argparse.ArgumentParser) -> None:
    """Options that choose a grade set and turn its grades into labels (`LabelChoice`'s flags)."""
    add_options(p, LabelChoice)


def label_choice(args: argparse.Namespace) -> LabelChoice:
    """The `LabelChoice` of a command that added `add_label_options`."""
    return from_args(LabelChoice, args)


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `qrels` command."""
    p = commands.add_parser(
        "qrels", help="write EXAM-Qrels: relevance labels from grades, as trec_eval qrels",
        description="Turn grades into relevance labels and write them as qrels (`qid 0 docid label`) on "
        "standard output. The label of a passage is the largest grade any of its query's questions gives it "
        "(0-5), or the M-th largest with --min-questions M; 1/0 with --binary --min-grade T.")
    add_store(p)
    add_label_options(p)
    add_options(p, QrelsOptions)
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the qrels to standard output; how they were made goes to standard error."""
    with readable_store(args.store, args.lock_timeout) as store:
        report = commands.qrels_report(store, label_choice(args), from_args(QrelsOptions, args), floor=floor_of(args))
    sys.stdout.write(api.render(report))
    note(report.summary())
    if report.coverage is not None:  # always counted for the command
        note(f"rests on: {report.coverage.summary()}")
        warn_coverage(report.coverage)
    return 0
