"""`proctor verify --store S REPORT`: reports that let a person check the rubric against judgments."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.api import commands
from proctor.cli.common import add_format, add_store, emit, readable_store
from proctor.options.analysis import VerifyOptions
from proctor.options.model import add_options, from_args
from proctor.options.selection import LabelChoice

DESCRIPTION = """\
Human verification of the rubric (RUBRIC 6.7):
  answers       per question: passages that answer it, best grade first, with the extracted answer
  spurious      questions most often answered (grade >= T) by passages judged non-relevant
  uncovered     passages judged relevant that no question answers with grade >= T
  distribution  the grade histogram of every question"""


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `verify` command."""
    p = parsers.add_parser("verify", help="reports to verify the rubric: answers, spurious, uncovered, distribution",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    reports = commands.VERIFY_REPORTS
    p.add_argument("report", choices=reports, metavar="REPORT", help=" | ".join(reports))
    add_store(p)
    add_options(p, LabelChoice, "grade_set", "method", "model", "bank")
    add_options(p, VerifyOptions, "min_grade", "judged_relevant", "shown", "query")
    add_format(p, ("text", "json", "md"), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the report and print it."""
    with readable_store(args.store, args.lock_timeout) as store:
        report = api.verify(store, args.report, from_args(VerifyOptions, args), grade_set=args.grade_set,
                            method=args.method, model=args.model, bank=args.bank)
    emit(report.render(args.format), args.format)
    return 0
