"""`proctor bank generate|diff|impact|export`: question banks (phase 1), their versions and what a change does."""

from __future__ import annotations

import argparse
import sys

from proctor import api
from proctor.cli.common import (
    GRADE,
    add_format,
    add_response_cache,
    add_store,
    cache_options,
    emit,
    note,
    readable_store,
    writable_store,
)
from proctor.options.backend import add_backend_options, backend_options

GENERATE = """\
Generate a bank with an LLM: 10 questions per query (--per-query) with the prompts of RUBRIC Table 1 (DL:
break the query into questions; CAR: one bank line per query subtopic, query text "Title / Subtopic"), or
key facts with --nuggets (then labelled vital/okay with nuggetizer's scorer prompt unless --no-importance).
Replies are parsed robustly (JSON in code fences, bare lists, trailing text) and
retried when unusable; duplicates are removed; ids are query[/facet]/md5(text) as the Workbench computes
them; the prompt, model, parameters and time are recorded. Topics that never gave a usable reply are
reported. The output loads with `proctor import bank`.
CAR topics: JSONL {query_id, facet_id, title, subtopic} (or text "Title / Subtopic")."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add `bank` and its sub-commands."""
    bank = commands.add_parser("bank", help="question banks: generate, diff, impact, export",
                               description="Question banks (phase 1): generate them with an LLM, compare "
                               "versions, see what a change does to labels and leaderboards, export them.")
    sub = bank.add_subparsers(dest="bank_command", metavar="SUBCOMMAND", required=True)
    _register_generate(sub)
    _register_diff(sub)
    _register_impact(sub)
    _register_export(sub)


def _register_generate(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("generate", help="generate questions or nuggets with an LLM", description=GENERATE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("--queries", help="query file (DL) or CAR topics JSONL (not with --from-pool)")
    g.add_argument("--from-pool", action="store_true",
                   help="with --nuggets and --store: AutoNuggetizer-style nuggets from each query's judged relevant "
                   "passages (nuggetizer's creator prompt over windows of 10 passages), then importance")
    g.add_argument("--store", help="--from-pool: the store with queries, passages and judgments")
    g.add_argument("--min-relevance", type=int, default=2, metavar="R",
                   help="--from-pool: passages judged R or more are read (default 2, as nuggetizer's --min-judgment)")
    g.add_argument("--max-nuggets", type=int, default=30, metavar="N",
                   help="--from-pool: most nuggets kept per query (default 30, as nuggetizer)")
    g.add_argument("--dedup", action="store_true",
                   help="--from-pool: drop a nugget the creator's reply repeats before the next window's prompt "
                   "(Proctor's own; nuggetizer, the default, keeps the reply's list as it is); recorded in the "
                   "bank's creator info")
    g.add_argument("--style", choices=("dl", "car"), default="dl", help="prompt style (default dl)")
    g.add_argument("--nuggets", action="store_true", help="generate nuggets (key facts) instead of questions")
    g.add_argument("--importance", action=argparse.BooleanOptionalAction, default=True,
                   help="with --nuggets: label every nugget vital or okay with nuggetizer's scorer prompt "
                   "(AutoNuggetizer; default on)")
    g.add_argument("--per-query", type=int, default=10, metavar="N", help="items per query (default 10)")
    g.add_argument("--llm", required=True, help="openai:MODEL, hf:PATH or llamacpp:PATH.gguf")
    add_backend_options(g, concurrency=4, timeout=120.0)
    add_response_cache(g)
    g.add_argument("--retries", type=int, default=3, help="asks again when a reply holds no usable list (default 3)")
    g.add_argument("--out", required=True, help="bank file to write (JSONL, workbench `items` format)")
    add_format(g, ("text", "json"), "text")
    g.set_defaults(func=run_generate)


def _register_diff(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("diff", help="added, removed and reworded questions between two banks",
                       description="Compare two bank files (JSONL either format, or YAML): added, removed and "
                       "reworded items (same id with new text, or similar text under a new id).")
    d.add_argument("old", metavar="A")
    d.add_argument("new", metavar="B")
    add_format(d, ("text", "json", "md"), "text")
    d.set_defaults(func=run_diff)


def _register_impact(sub: argparse._SubParsersAction) -> None:
    i = sub.add_parser("impact", help="what changing bank A into B does to labels, scores and correlation",
                       description="Grade only what bank B adds (cached grades and replies reused; needs --llm "
                       "when B has ungraded questions), then list the passages whose label changes and how "
                       "every system's score and the leaderboard correlation move.")
    i.add_argument("old", metavar="A")
    i.add_argument("new", metavar="B")
    add_store(i)
    i.add_argument("--llm", help="backend for questions of B that have no grade yet (same model as the grade set)")
    i.add_argument("--grade-set", metavar="ID", help="the grade set of bank A (see `proctor info`)")
    i.add_argument("--method", help="narrow to grade sets of this method (default: the store's only one)")
    i.add_argument("--model", help="narrow to grade sets of this model")
    i.add_argument("--bank", metavar="NAME[@VERSION]", help="narrow to grade sets of this bank (version)")
    i.add_argument("--measure", default="P@20", help="leaderboard measure (default P@20)")
    i.add_argument("--min-grade", type=GRADE, default=3, metavar="T", help="relevance level τ (default 3)")
    i.add_argument("--official", help="official leaderboard (JSON {run: rank} or TSV) for the correlation")
    i.add_argument("--name", help="name of bank B in the store (default: the name of A's bank, so B becomes its "
                   "next version; else the bank that holds B's ids; else B's file name)")
    i.add_argument("--limit", type=int, default=50, help="changed labels listed in text/md (default 50)")
    add_backend_options(i)
    i.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar while grading (default: when standard error is a terminal)")
    add_format(i, ("md", "json"), "md")
    i.set_defaults(func=run_impact)


def _register_export(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("export", help="write a stored bank as workbench JSONL, YAML, nuggetizer or AutoJudge",
                       description="Write the questions and nuggets of the store's banks (or one bank) in the "
                       "workbench's current `items` format, its older `questions` format, editable YAML, "
                       "castorini/nuggetizer's nuggets JSONL (nuggets only) or the TREC AutoJudge nugget-bank "
                       "JSONL (questions in nugget_bank, nuggets in claim_bank).")
    add_store(e)
    e.add_argument("--bank", metavar="NAME[@VERSION]",
                   help="only this bank (its latest version unless named; default: every bank's latest version)")
    e.add_argument("--as", dest="fmt", choices=api.BANK_FORMATS,
                   default="items",
                   help="output format (default items)")
    e.add_argument("--out", required=True, help="file to write")
    e.set_defaults(func=run_export)


def run_generate(args: argparse.Namespace) -> int:
    """Generate a bank and report what never succeeded."""
    request = api.generation_request(args.llm, args.out, queries=args.queries, from_pool=args.from_pool,
                                     store=args.store, style=args.style, nuggets=args.nuggets,
                                     importance=args.importance, per_query=args.per_query, retries=args.retries,
                                     min_relevance=args.min_relevance, max_nuggets=args.max_nuggets,
                                     dedup=args.dedup, backend=backend_options(args), **cache_options(args))
    generated = api.generate_bank_file(request, log=note)
    if args.format == "json":
        sys.stdout.write(generated.render("json"))
    else:
        for line in generated.said():
            note(line)
    return 0 if generated.written else 1


def run_diff(args: argparse.Namespace) -> int:
    """Print the diff of two bank files."""
    emit(api.diff_banks(args.old, args.new, log=note).render(args.format), args.format)
    return 0


def run_impact(args: argparse.Namespace) -> int:
    """Grade what is new (a grade set for bank B beside A's), then compare labels and leaderboards."""
    request = api.impact_request(args.old, args.new, llm=args.llm,
                                 backend=backend_options(args) if args.llm else None,
                                 grade_set=args.grade_set, method=args.method, model=args.model, bank=args.bank,
                                 measure=args.measure, min_grade=args.min_grade, official=args.official,
                                 name=args.name, limit=args.limit, progress=args.progress, log=note)
    with writable_store(args.store, args.lock_timeout) as store:
        impact = request.run(store)
    if impact.graded is not None:
        graded = impact.graded
        note(f"graded {graded.graded} new pairs into grade set {impact.grade_set.id} ({graded.cached} from the cache, "
             f"{graded.failures} failures)")
    emit(impact.render(args.format), args.format)
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write the stored bank(s)."""
    with readable_store(args.store, args.lock_timeout) as store:
        written = api.export_bank(store, args.out, args.fmt, bank=args.bank)
    for line in written.said():
        note(line)
    return 0
