"""`proctor import KIND FILE... --store S`: read files into the store (idempotent, atomic)."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.cli.common import add_store, note, writable_store

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


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `import` command."""
    p = commands.add_parser("import", help="import queries, runs, qrels, passages, banks or exam_pp files",
                            description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=api.IMPORT_KINDS, metavar="KIND", help="one of: " + ", ".join(api.IMPORT_KINDS))
    p.add_argument("files", nargs="+", metavar="FILE", help="files to import")
    add_store(p)
    p.add_argument("--no-grades", action="store_true", help="exampp: import everything but the grades")
    p.add_argument("--name", help="bank: the bank's name in the store (default: the file name); a changed file under "
                   "a known name adds a version")
    p.add_argument("--bank", metavar="NAME[@VERSION]",
                   help="exampp: the bank the recorded grades graded (every graded question must be in it); their "
                   "grade sets then name that bank version")
    p.add_argument("--format", dest="response_format", default="auto",
                   choices=("auto", "jsonl", "rag24", "rag25", "text-dir"), help="responses: input format")
    p.add_argument("--word-budget", type=int, metavar="N",
                   help="responses: keep the first N words of every response (the same budget for all systems)")
    p.add_argument("--on-error", choices=("fail", "skip"), default="fail",
                   help="responses, bank (JSONL): a malformed record fails the import (default) or is skipped and "
                   "reported with its file and line")
    p.add_argument("--replace", action="store_true",
                   help="replace what the store holds where the file contradicts it (a run is replaced whole); "
                   "the grades made from a replaced text become stale")
    p.add_argument("--skip-unknown-queries", action="store_true",
                   help="skip (and count) lines of queries the store does not know instead of failing")
    p.set_defaults(func=run, param_flags={"grades_bank": "--bank", "bank_name": "--name"})


def run(args: argparse.Namespace) -> int:
    """Import and print one summary line per file on standard error."""
    request = api.import_request(args.kind, args.files, with_grades=not args.no_grades, bank_name=args.name,
                                 skip_unknown_queries=args.skip_unknown_queries,
                                 response_format=args.response_format, word_budget=args.word_budget,
                                 on_error=args.on_error, grades_bank=args.bank, replace=args.replace)
    with writable_store(args.store, args.lock_timeout) as store:
        reports = request.run(store)
    for report in reports:
        for problem in report.skipped_records:
            note(f"skipped: {problem}")
        for line in report.notes:
            note(line)
        note(report.summary())
    return 0
