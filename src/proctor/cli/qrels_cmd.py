"""`proctor qrels --store S ...`: EXAM-Qrels (relevance labels from grades) in trec_eval's qrels format."""

from __future__ import annotations

import argparse
import sys

from proctor import api
from proctor.cli.common import (
    GRADE,
    add_floor_options,
    add_store,
    floor_of,
    note,
    readable_store,
    warn_coverage,
)
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options


def add_label_options(p: argparse.ArgumentParser) -> None:
    """Options that choose a grade set and turn its grades into labels (shared with `leaderboard`)."""
    p.add_argument("--grade-set", metavar="ID",
                   help="the grade set to use (see `proctor info`; a unique prefix will do)")
    p.add_argument("--method", help="narrow to grade sets of this method (needed when the store has several)")
    p.add_argument("--model", help="narrow to grade sets of this model")
    p.add_argument("--bank", metavar="NAME[@VERSION]", help="narrow to grade sets of this bank (version)")
    add_options(p, EvaluationOptions, "min_questions")
    p.add_argument("--facets", action="store_true",
                   help="one label per query facet (query_id/facet_id), for banks with facets (CAR)")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `qrels` command."""
    p = commands.add_parser(
        "qrels", help="write EXAM-Qrels: relevance labels from grades, as trec_eval qrels",
        description="Turn grades into relevance labels and write them as qrels (`qid 0 docid label`) on "
        "standard output. The label of a passage is the largest grade any of its query's questions gives it "
        "(0-5), or the M-th largest with --min-questions M; 1/0 with --binary --min-grade T.")
    add_store(p)
    add_label_options(p)
    p.add_argument("--binary", action="store_true", help="write 1 for labels >= --min-grade, else 0")
    p.add_argument("--min-grade", type=GRADE, metavar="T", help="with --binary: the smallest relevant label")
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the qrels to standard output; how they were made goes to standard error."""
    labels = api.LabelChoice(args.grade_set, args.method, args.model, args.bank, args.min_questions, args.facets)
    with readable_store(args.store, args.lock_timeout) as store:
        report = api.qrels_report(store, labels, binary=args.binary, min_grade=args.min_grade, floor=floor_of(args))
    sys.stdout.write(api.render(report))
    note(report.summary())
    note(f"rests on: {report.coverage.summary()}")
    warn_coverage(report.coverage)
    return 0
