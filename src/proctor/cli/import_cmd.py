"""`proctor import KIND FILE... --store S`: read files into the store (idempotent, atomic)."""

from __future__ import annotations

import argparse

from proctor.api import commands
from proctor.cli.common import add_store, note, writable_store
from proctor.options.inputs import ImportOptions
from proctor.options.model import add_options, from_args

HELP = """\
Import files into a store (created if missing). All files of one command go in together or not at all;
importing the same file twice changes nothing. A file that contradicts what the store holds (another query or
passage text, judgment, grade, or a run that exists with other rankings) is refused, naming its line, what the
store holds and which import wrote it; --replace replaces it instead (counted on standard error and in the
store's import log), and the grades made from a replaced text become stale (graded again by the next `grade`).

kinds:
  queries  JSON {id: text}, JSONL {"query_id", "text"}, or TSV id<TAB>text
  runs     TREC runs `qid Q0 docid rank score tag` (plain or .gz); the run name is the tag column
  qrels    TREC qrels `qid iter docid relevance`
  corpus   passages: JSONL {"id", "text"} or TSV id<TAB>text
  bank     question/nugget banks: the Autograder Workbench's JSONL (key `items` or the older `questions`),
           YAML, castorini/nuggetizer nuggets JSONL, or TREC AutoJudge nugget banks (detected)
  exampp   the Workbench's interchange file: passages, judgments, rankings and grades
  responses generated answers: JSONL {run_id, query_id, text}, TREC RAG 2024/2025 answer records, or a
           folder SYSTEM/QUERY.txt|md; cut into passages (sentences up to ~400 tokens; one passage per
           answer sentence for RAG records, with its citations), kept in order as the system's ranking
"""


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `import` command."""
    p = parsers.add_parser("import", help="import queries, runs, qrels, passages, banks or exam_pp files",
                            description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=commands.IMPORT_KINDS, metavar="KIND",
                   help="one of: " + ", ".join(commands.IMPORT_KINDS))
    p.add_argument("files", nargs="+", metavar="FILE", help="files to import")
    add_store(p)
    add_options(p, ImportOptions)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import and print one summary line per file on standard error."""
    request = commands.import_request(args.kind, args.files, from_args(ImportOptions, args))
    with writable_store(args.store, args.lock_timeout) as store:
        reports = request.run(store)
    for report in reports:
        for problem in report.skipped_records:
            note(f"skipped: {problem}")
        for line in report.notes:
            note(line)
        note(report.summary())
    return 0
