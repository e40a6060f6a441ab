"""`proctor export exampp --store S --out F`: write the store in the Workbench's interchange format;
`proctor export runs --store S --out DIR`: the runs as TREC run files; `proctor export judgments --store S`:
the imported qrels."""

from __future__ import annotations

import argparse
import os
import sys

from proctor.cli.common import add_store, note, readable_store
from proctor.errors import UsageError
from proctor.exporting import write_exampp
from proctor.gradesets.resolve import resolve_grade_set
from proctor.outputs import file_target, temporary_path


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `export` command."""
    p = commands.add_parser("export", help="export the store (exam_pp file, TREC runs, qrels)",
                            description="exampp: passages, judgments, rankings and grades as an exam_pp file that "
                            "the Autograder Workbench reads (gzipped when OUT ends in .gz). runs: one TREC run file "
                            "per stored run (`qid Q0 docid rank score run`, named as the run) in the folder --out "
                            "DIR, for trec_eval and other tools. judgments: the imported human judgments as qrels "
                            "(`qid 0 docid rel`), to --out FILE or standard output.")
    p.add_argument("kind", choices=("exampp", "runs", "judgments"), help="what to export")
    add_store(p)
    p.add_argument("--out", help="exampp: output file (.jsonl or .jsonl.gz); runs: output folder (created when "
                   "missing); judgments: output file (default: standard output)")
    p.add_argument("--grade-set", metavar="ID", action="append",
                   help="export this grade set's grades (repeat for several; default: the store's only grade set)")
    p.add_argument("--method", help="narrow to grade sets of this method")
    p.add_argument("--model", help="narrow to grade sets of this model")
    p.add_argument("--bank", metavar="NAME[@VERSION]", help="narrow to grade sets of this bank (version)")
    p.add_argument("--no-grades", action="store_true", help="passages, judgments and rankings only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write to a temporary file and rename it, so a failed export leaves nothing half-written."""
    if args.kind != "exampp":
        return _trec(args)
    if not args.out:
        raise UsageError("export exampp needs --out FILE")
    out = file_target(args.out)
    tmp = temporary_path(out)
    with readable_store(args.store, args.lock_timeout) as store:
        if args.no_grades:
            sets = []
        elif args.grade_set:
            sets = [resolve_grade_set(store, g) for g in args.grade_set]
        elif store.grades.grade_sets() or args.method or args.model or args.bank:
            sets = [resolve_grade_set(store, None, args.method, args.model, args.bank)]
        else:
            sets = []
        try:
            n = write_exampp(store, tmp, sets)
            if n == 0:  # an empty file, which `import exampp` refuses: say so instead, as runs and judgments do
                raise UsageError(f"{store.path}: no passages in the store: nothing to export")
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    note(f"wrote {n} queries to {out}" + (f" with grade set(s) {', '.join(s.id for s in sets)}" if sets else ""))
    return 0


def _trec(args: argparse.Namespace) -> int:
    """`export runs` (a folder of run files) or `export judgments` (qrels to a file or standard output)."""
    from proctor import api
    from proctor.outputs import write_text

    if args.kind == "runs" and not args.out:
        raise UsageError("export runs needs --out DIR (one run file per run is written there)")
    with readable_store(args.store, args.lock_timeout) as store:
        if args.kind == "runs":
            written = api.export_runs(store, args.out)
            note(f"wrote {len(written)} run files ({sum(written.values())} lines) to {args.out}")
            return 0
        text = api.export_judgments(store)
    if args.out:
        write_text(file_target(args.out), text)
        note(f"wrote {text.count(chr(10))} judgments to {args.out}")
    else:
        sys.stdout.write(text)
    return 0
