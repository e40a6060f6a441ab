"""`proctor bank generate|diff|impact|export`: question banks (phase 1), their versions and what a change does."""

from __future__ import annotations

import argparse
import asyncio
import json

from proctor.cli.common import GRADE, add_format, add_store, emit, note, readable_store, writable_store
from proctor.errors import UsageError
from proctor.llm.config import BackendConfig, add_backend_options

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
    e.add_argument("--as", dest="fmt", choices=("items", "questions", "yaml", "nuggetizer", "autojudge"),
                   default="items",
                   help="output format (default items)")
    e.add_argument("--out", required=True, help="file to write")
    e.set_defaults(func=run_export)


def run_generate(args: argparse.Namespace) -> int:
    """Generate a bank and report what never succeeded."""
    from proctor.bank.generate import generate, read_topics
    from proctor.grading.progress import Progress
    from proctor.outputs import file_target

    if args.per_query < 1:
        raise UsageError("--per-query must be at least 1")
    file_target(args.out)  # before any LLM call
    if args.llm.split(":")[0] not in ("openai", "hf", "llamacpp"):
        raise UsageError("bank generation needs a text-generating backend: openai:MODEL, hf:PATH, llamacpp:PATH")
    if args.from_pool:
        return _from_pool(args)
    if not args.queries or args.store:
        raise UsageError("bank generate takes --queries FILE (or --from-pool --store S --nuggets)")
    topics = read_topics(args.queries, args.style)
    backend = BackendConfig.from_args(args).build("generate")
    progress = Progress(len(topics), None, "generating")
    kind = "nuggets" if args.nuggets else "questions"

    async def go():
        try:
            return await generate(topics, backend, style=args.style, kind=kind, n=args.per_query,
                                  retries=args.retries, progress=progress, importance=args.importance)
        finally:
            await backend.aclose()

    outcome = asyncio.run(go())
    progress.close()
    return _report(args, outcome, len(topics), kind)


def _from_pool(args: argparse.Namespace) -> int:
    """AutoNuggetizer-style nuggets from the store's judged relevant passages."""
    from proctor.bank.pool_nuggets import create_from_pool, pool_topics
    from proctor.grading.progress import Progress

    if not args.nuggets or not args.store or args.queries:
        raise UsageError("--from-pool goes with --nuggets and --store S (and no --queries)")
    if args.max_nuggets < 1:
        raise UsageError("--max-nuggets must be at least 1")
    with readable_store(args.store) as store:
        topics, left_out = pool_topics(store.corpus.queries(), store.corpus.judgments(), store.corpus.passage_texts(),
                                       args.min_relevance)
    if left_out:
        note(f"{len(left_out)} judged queries have no query text or no passage with text judged "
             f">= {args.min_relevance}: no nuggets for them ({', '.join(left_out[:10])})")
    if not topics:
        raise UsageError(f"{args.store}: no query with a text and passages judged >= {args.min_relevance}")
    backend = BackendConfig.from_args(args).build("generate")
    progress = Progress(len(topics), None, "nuggets from the pool")

    async def go():
        try:
            return await create_from_pool(topics, backend, max_nuggets=args.max_nuggets, retries=args.retries,
                                          importance=args.importance, dedup=args.dedup, progress=progress)
        finally:
            await backend.aclose()

    outcome = asyncio.run(go())
    progress.close()
    return _report(args, outcome, len(topics), "nuggets")


def _report(args: argparse.Namespace, outcome, n_topics: int, kind: str) -> int:
    """Write the generated lines and say what never succeeded."""
    from proctor.bank.generate import write_bank

    if outcome.lines:
        write_bank(outcome.lines, args.out)
    counts = [len(line["items"]) for line in outcome.lines]
    limit = args.max_nuggets if args.from_pool else args.per_query
    summary = {"out": args.out if outcome.lines else None, "topics": n_topics, "generated": len(outcome.lines),
               "items": sum(counts), "short_lines": sum(1 for c in counts if c < limit),
               "llm_calls": outcome.attempts, "failed": outcome.failures,
               "importance_failed": outcome.importance_failures}
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        note(f"{kind} for {len(outcome.lines)} of {n_topics} topics ({sum(counts)} items, "
             f"{outcome.attempts} LLM calls) → {args.out if outcome.lines else 'nothing written'}")
        for failure in outcome.failures:
            if failure.get("windows"):
                note(f"query {failure['query_id']}: windows without a usable reply (the nugget list was kept as it "
                     f"was): {'; '.join(failure['reasons'])}")
                continue
            note(f"never succeeded: query {failure['query_id']}"
                 + (f" facet {failure['facet_id']}" if failure["facet_id"] else "")
                 + f" after {len(failure['reasons'])} tries: {failure['reasons'][-1]}")
        for failure in outcome.importance_failures:
            note(f"no importance for query {failure['query_id']}: {'; '.join(failure['reasons'])}")
    return 0 if outcome.lines else 1


def _load(path: str):  # noqa: ANN202 - a Bank, imported lazily
    """A bank file, its reader's notes (merged identical repeats) on standard error."""
    from proctor.io.bank_files import load_bank

    bank = load_bank(path)
    for line in bank.notes:
        note(line)
    return bank


def run_diff(args: argparse.Namespace) -> int:
    """Print the diff of two bank files."""
    from proctor.bank.diff import diff_banks, render_diff

    result = diff_banks(_load(args.old).questions, _load(args.new).questions)
    text = json.dumps(result, indent=2) + "\n" if args.format == "json" else render_diff(result, args.format)
    emit(text, args.format)
    return 0


def run_impact(args: argparse.Namespace) -> int:
    """Grade what is new (a grade set for bank B beside A's), then compare labels and leaderboards."""
    from proctor.analyze.bank_impact import bank_impact, prepare_impact, render_impact
    from proctor.evaluate.leaderboard_files import read_official
    from proctor.evaluate.sources import load_runs
    from proctor.gradesets.resolve import resolve_grade_set

    old, new = _load(args.old), _load(args.new)
    official = read_official(args.official) if args.official else None
    config = BackendConfig.from_args(args) if args.llm else None
    with writable_store(args.store, args.lock_timeout) as store:
        old_set = resolve_grade_set(store, args.grade_set, args.method, args.model, args.bank)
        new_set, graded = prepare_impact(store, old_set, args.new, new, config, name=args.name,
                                         progress=args.progress)
        if graded is not None:
            note(f"graded {graded.graded} new pairs into grade set {new_set.id} ({graded.cached} from the cache, "
                 f"{graded.failures} failures)")
        runs = load_runs(store, None)
        old_ids = {q["question_id"] for q in old.questions}
        new_ids = {q["question_id"] for q in new.questions}
        result = bank_impact(store, old_set, new_set, old_ids, new_ids, runs, measure=args.measure,
                             min_grade=args.min_grade, official=official, limit=args.limit)
    emit(json.dumps(result, indent=2) + "\n" if args.format == "json" else render_impact(result), args.format)
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write the stored bank(s)."""
    from proctor.bank.generate import write_bank
    from proctor.bank.manual import bank_lines, yaml_text
    from proctor.outputs import file_target, write_text

    with readable_store(args.store, args.lock_timeout) as store:
        bank = store.banks.bank_version(args.bank) if args.bank else None
        questions = store.banks.bank_questions(*bank) if bank else store.banks.bank_questions()
        texts = {k: v for k, v in store.corpus.queries().items() if v}
    if not questions:
        raise UsageError(f"{args.store}: no bank questions" + (f" in bank {args.bank!r}" if args.bank else ""))
    if args.fmt == "yaml":
        write_text(file_target(args.out), yaml_text(questions, texts, bank[0] if bank else None))
    elif args.fmt in ("nuggetizer", "autojudge"):
        from proctor.io.nugget_banks import autojudge_lines, nuggetizer_lines

        lines = (nuggetizer_lines if args.fmt == "nuggetizer" else autojudge_lines)(questions, texts)
        if not lines:
            raise UsageError(f"{args.store}: no nuggets to write in nuggetizer's format (it holds no questions)")
        skipped = len(questions) - sum(len(line.get("nuggets", [])) for line in lines)
        if args.fmt == "nuggetizer" and skipped:
            note(f"nuggetizer's format holds nuggets only: {skipped} questions left out")
        write_bank(lines, args.out)
    else:
        write_bank(bank_lines(questions, texts, args.fmt), args.out)
    note(f"wrote {len(questions)} items to {args.out} ({args.fmt})")
    return 0
