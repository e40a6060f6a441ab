"""`proctor verify --store S REPORT`: reports that let a person check the rubric against judgments."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.cli.common import GRADE, add_format, add_store, emit, int_in, readable_store
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options

DESCRIPTION = """\
Human verification of the rubric (RUBRIC 6.7):
  answers       per question: passages that answer it, best grade first, with the extracted answer
  spurious      questions most often answered (grade >= T) by passages judged non-relevant
  uncovered     passages judged relevant that no question answers with grade >= T
  distribution  the grade histogram of every question"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `verify` command."""
    p = commands.add_parser("verify", help="reports to verify the rubric: answers, spurious, uncovered, distribution",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", choices=api.VERIFY_REPORTS, metavar="REPORT", help=" | ".join(api.VERIFY_REPORTS))
    add_store(p)
    p.add_argument("--grade-set", metavar="ID", help="the grade set to check (see `proctor info`)")
    p.add_argument("--method", help="narrow to grade sets of this method (needed when the store has several)")
    p.add_argument("--model", help="narrow to grade sets of this model")
    p.add_argument("--bank", metavar="NAME[@VERSION]", help="narrow to grade sets of this bank (version)")
    p.add_argument("--min-grade", type=GRADE, default=4, metavar="T", help="a question is answered at grade >= T (4)")
    add_options(p, EvaluationOptions, "judged_relevant")
    p.add_argument("--limit", type=int_in(1), default=5, help="passages per question / questions per query (default 5)")
    p.add_argument("--query", help="only this query")
    add_format(p, ("text", "json", "md"), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the report and print it."""
    with readable_store(args.store, args.lock_timeout) as store:
        report = api.verify(store, args.report, grade_set=args.grade_set, method=args.method, model=args.model,
                            bank=args.bank, min_grade=args.min_grade, judged_relevant=args.judged_relevant,
                            limit=args.limit, query=args.query)
    emit(report.render(args.format), args.format)
    return 0
