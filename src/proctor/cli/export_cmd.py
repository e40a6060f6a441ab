"""`proctor export exampp --store S --out F`: write the store in the Workbench's interchange format."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from proctor.cli.common import add_store, note, readable_store
from proctor.io.exampp import write_exampp


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `export` command."""
    p = commands.add_parser("export", help="export the store (exam_pp interchange format)",
                            description="Write passages, judgments, rankings and grades as an exam_pp file "
                            "that the Autograder Workbench reads (gzipped when OUT ends in .gz).")
    p.add_argument("kind", choices=("exampp",), help="export format")
    add_store(p)
    p.add_argument("--out", required=True, help="output file (.jsonl or .jsonl.gz)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write to a temporary file and rename it, so a failed export leaves nothing half-written."""
    out = Path(args.out)
    tmp = out.with_name(f".{out.name}.partial" + (".gz" if out.suffix == ".gz" else ""))
    with readable_store(args.store) as store:
        try:
            n = write_exampp(store, tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    os.replace(tmp, out)
    note(f"wrote {n} queries to {out}")
    return 0
