"""`proctor import KIND FILE... --store S`: read files into the store (idempotent, atomic)."""

from __future__ import annotations

import argparse

from proctor.cli.common import add_store, note, writable_store
from proctor.importing import KINDS, ImportOptions, import_files

HELP = """\
Import files into a store (created if missing). All files of one command go in together or not at all;
importing the same file twice changes nothing.

kinds:
  queries  JSON {id: text}, JSONL {"query_id", "text"}, or TSV id<TAB>text
  runs     TREC runs `qid Q0 docid rank score tag` (plain or .gz); the run name is the tag column
  qrels    TREC qrels `qid iter docid relevance`
  corpus   passages: JSONL {"id", "text"} or TSV id<TAB>text
  bank     question/nugget banks of the Autograder Workbench (key `items` or the older `questions`)
  exampp   the Workbench's interchange file: passages, judgments, rankings and grades
"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `import` command."""
    p = commands.add_parser("import", help="import queries, runs, qrels, passages, banks or exam_pp files",
                            description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=KINDS, metavar="KIND", help="one of: " + ", ".join(KINDS))
    p.add_argument("files", nargs="+", metavar="FILE", help="files to import")
    add_store(p)
    p.add_argument("--no-grades", action="store_true", help="exampp: import everything but the grades")
    p.add_argument("--name", help="bank: the bank's name in the store (default: the file name)")
    p.add_argument("--skip-unknown-queries", action="store_true",
                   help="skip (and count) lines of queries the store does not know instead of failing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import and print one summary line per file on standard error."""
    options = ImportOptions(with_grades=not args.no_grades, bank_name=args.name,
                            skip_unknown_queries=args.skip_unknown_queries)
    with writable_store(args.store) as store:
        reports = import_files(store, args.kind, args.files, options)
    for report in reports:
        note(report.summary())
    return 0
