"""`proctor export exampp --store S --out F`: write the store in the Workbench's interchange format;
`proctor export runs --store S --out DIR`: the runs as TREC run files; `proctor export judgments --store S`:
the imported qrels."""

from __future__ import annotations

import argparse
import sys

from proctor.api import commands
from proctor.cli.common import add_store, note, readable_store
from proctor.options.inputs import ExportOptions
from proctor.options.model import add_options
from proctor.options.selection import LabelChoice


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `export` command."""
    p = parsers.add_parser("export", help="export the store (exam_pp file, TREC runs, qrels)",
                            description="exampp: passages, judgments, rankings and grades as an exam_pp file that "
                            "the Autograder Workbench reads (gzipped when OUT ends in .gz). runs: one TREC run file "
                            "per stored run (`qid Q0 docid rank score run`, named as the run) in the folder --out "
                            "DIR, for trec_eval and other tools. judgments: the imported human judgments as qrels "
                            "(`qid 0 docid rel`), to --out FILE or standard output.")
    p.add_argument("kind", choices=commands.EXPORT_KINDS, help="what to export")
    add_store(p)
    add_options(p, ExportOptions, "out")
    add_options(p, ExportOptions, "grade_sets")
    add_options(p, LabelChoice, "method", "model", "bank")
    add_options(p, ExportOptions, "grades")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export; a failed export leaves nothing half-written."""
    request = commands.export_request(args.kind, args.out, grade_sets=args.grade_sets or (), method=args.method,
                                      model=args.model, bank=args.bank, grades=args.grades)
    with readable_store(args.store, args.lock_timeout) as store:
        done = request.run(store)
    for line in done.said():
        note(line)
    if done.kind == "judgments" and done.out is None:
        sys.stdout.write(done.render("text"))
    return 0
