"""`proctor bank generate|diff|impact|export`: question banks (phase 1), their versions and what a change does."""

from __future__ import annotations

import argparse
import sys

from proctor import api
from proctor.api import commands
from proctor.cli.common import (
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
from proctor.options.banks import BankExportOptions, BankGenerationOptions, BankImpactOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import add_options, from_args
from proctor.options.selection import LabelChoice
from proctor.options.store import StoreOptions

GENERATE = """\
Generate a bank with an LLM: 10 questions per query (--per-query) with the prompts of RUBRIC Table 1 (DL:
break the query into questions; CAR: one bank line per query subtopic, query text "Title / Subtopic"), or
key facts with --nuggets (then labelled vital/okay with nuggetizer's scorer prompt unless --no-importance).
Replies are parsed robustly (JSON in code fences, bare lists, trailing text) and
retried when unusable; duplicates are removed; ids are query[/facet]/md5(text) as the Workbench computes
them; the prompt, model, parameters and time are recorded. Topics that never gave a usable reply are
reported. The output loads with `proctor import bank`.
CAR topics: JSONL {query_id, facet_id, title, subtopic} (or text "Title / Subtopic")."""


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `bank` and its sub-commands."""
    bank = parsers.add_parser("bank", help="question banks: generate, diff, impact, export",
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
    add_options(g, BankGenerationOptions, "queries", "from_pool")
    add_options(g, StoreOptions, "store")
    add_options(g, BankGenerationOptions, "min_relevance", "max_nuggets", "dedup", "style", "nuggets", "importance",
                "per_query")
    llm, = add_options(g, GradingOptions, "llm")
    llm.required = True
    add_backend_options(g, concurrency=4, timeout=120.0)
    add_response_cache(g)
    out = add_options(g, BankGenerationOptions, "retries", "out")[1]
    out.required = True
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
    add_options(i, GradingOptions, "llm")
    add_options(i, LabelChoice, "grade_set", "method", "model", "bank")
    add_options(i, BankImpactOptions)
    add_backend_options(i)
    add_options(i, GradingOptions, "progress")
    add_format(i, ("md", "json"), "md")
    i.set_defaults(func=run_impact)


def _register_export(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("export", help="write a stored bank as workbench JSONL, YAML, nuggetizer or AutoJudge",
                       description="Write the questions and nuggets of the store's banks (or one bank) in the "
                       "workbench's current `items` format, its older `questions` format, editable YAML, "
                       "castorini/nuggetizer's nuggets JSONL (nuggets only) or the TREC AutoJudge nugget-bank "
                       "JSONL (questions in nugget_bank, nuggets in claim_bank).")
    add_store(e)
    add_options(e, BankExportOptions, "bank")
    out, = add_options(e, BankExportOptions, "bank_format", "out")[1:]
    out.required = True
    e.set_defaults(func=run_export, param_flags={"fmt": "--as"})


def run_generate(args: argparse.Namespace) -> int:
    """Generate a bank and report what never succeeded."""
    request = commands.generation_request(args.llm, generation=from_args(BankGenerationOptions, args),
                                          store=args.store, backend=backend_options(args), cache=cache_options(args))
    generated = commands.generate_bank_file(request, log=note)
    if args.format == "json":
        sys.stdout.write(generated.render("json"))
    else:
        for line in generated.said():
            note(line)
    return 0 if generated.written else 1


def run_diff(args: argparse.Namespace) -> int:
    """Print the diff of two bank files."""
    emit(api.bank_diff(args.old, args.new, log=note).render(args.format), args.format)
    return 0


def run_impact(args: argparse.Namespace) -> int:
    """Grade what is new (a grade set for bank B beside A's), then compare labels and leaderboards."""
    request = commands.impact_request(args.old, args.new, llm=args.llm,
                                      backend=backend_options(args) if args.llm else None,
                                      grade_set=args.grade_set, method=args.method, model=args.model, bank=args.bank,
                                      impact=from_args(BankImpactOptions, args), progress=args.progress, log=note)
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
        written = commands.export_bank(store, args.out, args.bank_format, bank=args.bank)
    for line in written.said():
        note(line)
    return 0
