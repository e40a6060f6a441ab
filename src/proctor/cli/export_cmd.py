"""`proctor export exampp --store S --out F`: write the store in the Workbench's interchange format."""

from __future__ import annotations

import argparse
import os

from proctor.cli.common import add_store, note, readable_store
from proctor.evaluate.sources import resolve_grade_set
from proctor.exporting import write_exampp
from proctor.outputs import file_target, temporary_path


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `export` command."""
    p = commands.add_parser("export", help="export the store (exam_pp interchange format)",
                            description="Write passages, judgments, rankings and grades as an exam_pp file "
                            "that the Autograder Workbench reads (gzipped when OUT ends in .gz).")
    p.add_argument("kind", choices=("exampp",), help="export format")
    add_store(p)
    p.add_argument("--out", required=True, help="output file (.jsonl or .jsonl.gz)")
    p.add_argument("--grade-set", metavar="ID", action="append",
                   help="export this grade set's grades (repeat for several; default: the store's only grade set)")
    p.add_argument("--method", help="narrow to grade sets of this method")
    p.add_argument("--model", help="narrow to grade sets of this model")
    p.add_argument("--bank", metavar="NAME[@VERSION]", help="narrow to grade sets of this bank (version)")
    p.add_argument("--no-grades", action="store_true", help="passages, judgments and rankings only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write to a temporary file and rename it, so a failed export leaves nothing half-written."""
    out = file_target(args.out)
    tmp = temporary_path(out)
    with readable_store(args.store, args.lock_timeout) as store:
        if args.no_grades:
            sets = []
        elif args.grade_set:
            sets = [resolve_grade_set(store, g) for g in args.grade_set]
        elif store.grade_sets() or args.method or args.model or args.bank:
            sets = [resolve_grade_set(store, None, args.method, args.model, args.bank)]
        else:
            sets = []
        try:
            n = write_exampp(store, tmp, sets)
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    note(f"wrote {n} queries to {out}" + (f" with grade set(s) {', '.join(s.id for s in sets)}" if sets else ""))
    return 0
