"""`proctor bank generate|diff|impact|export`: question banks (phase 1), their versions and what a change does."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from proctor.cli.common import add_format, add_store, note, readable_store, writable_store
from proctor.errors import UsageError

GENERATE = """\
Generate a bank with an LLM: 10 questions per query (--per-query) with the prompts of RUBRIC Table 1 (DL:
break the query into questions; CAR: one bank line per query subtopic, query text "Title / Subtopic"), or
key facts with --nuggets. Replies are parsed robustly (JSON in code fences, bare lists, trailing text) and
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

    g = sub.add_parser("generate", help="generate questions or nuggets with an LLM", description=GENERATE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("--queries", required=True, help="query file (DL) or CAR topics JSONL")
    g.add_argument("--style", choices=("dl", "car"), default="dl", help="prompt style (default dl)")
    g.add_argument("--nuggets", action="store_true", help="generate nuggets (key facts) instead of questions")
    g.add_argument("--per-query", type=int, default=10, metavar="N", help="items per query (default 10)")
    g.add_argument("--llm", required=True, help="openai:MODEL, hf:PATH or llamacpp:PATH.gguf")
    g.add_argument("--base-url", help="openai: server URL")
    g.add_argument("--timeout", type=float, default=120.0, help="openai: seconds per request (default 120)")
    g.add_argument("--concurrency", type=int, default=4, help="openai: requests in flight (default 4)")
    g.add_argument("--max-retries", type=int, default=6, help="openai: retries on 429/5xx/timeouts (default 6)")
    g.add_argument("--backoff-max", type=float, default=30.0, help="openai: longest wait between retries (s)")
    g.add_argument("--retries", type=int, default=3, help="asks again when a reply holds no usable list (default 3)")
    g.add_argument("--out", required=True, help="bank file to write (JSONL, workbench `items` format)")
    add_format(g, ("text", "json"), "text")
    g.set_defaults(func=run_generate)

    d = sub.add_parser("diff", help="added, removed and reworded questions between two banks",
                       description="Compare two bank files (JSONL either format, or YAML): added, removed and "
                       "reworded items (same id with new text, or similar text under a new id).")
    d.add_argument("old", metavar="A")
    d.add_argument("new", metavar="B")
    add_format(d, ("text", "json", "md"), "text")
    d.set_defaults(func=run_diff)

    i = sub.add_parser("impact", help="what changing bank A into B does to labels, scores and correlation",
                       description="Grade only what bank B adds (cached grades and replies reused; needs --llm "
                       "when B has ungraded questions), then list the passages whose label changes and how "
                       "every system's score and the leaderboard correlation move.")
    i.add_argument("old", metavar="A")
    i.add_argument("new", metavar="B")
    add_store(i)
    i.add_argument("--llm", help="backend for questions of B that have no grade yet")
    i.add_argument("--base-url", help="openai: server URL")
    i.add_argument("--concurrency", type=int, default=8, help="openai: requests in flight")
    i.add_argument("--method", help="grading method (default: the store's only one)")
    i.add_argument("--model", help="model of the grades (default: the store's only one)")
    i.add_argument("--measure", default="P@20", help="leaderboard measure (default P@20)")
    i.add_argument("--min-grade", type=int, default=3, metavar="T", help="relevance level τ (default 3)")
    i.add_argument("--official", help="official leaderboard (JSON {run: rank} or TSV) for the correlation")
    i.add_argument("--name", help="name of bank B in the store (default: its file name)")
    i.add_argument("--limit", type=int, default=50, help="changed labels listed in text/md (default 50)")
    add_format(i, ("md", "json"), "md")
    i.set_defaults(func=run_impact)

    e = sub.add_parser("export", help="write a stored bank as workbench JSONL or YAML",
                       description="Write the questions and nuggets of the store's banks (or one bank) in the "
                       "workbench's current `items` format, its older `questions` format, or editable YAML.")
    add_store(e)
    e.add_argument("--bank", help="only this bank (default: all)")
    e.add_argument("--as", dest="fmt", choices=("items", "questions", "yaml"), default="items",
                   help="output format (default items)")
    e.add_argument("--out", required=True, help="file to write")
    e.set_defaults(func=run_export)


def run_generate(args: argparse.Namespace) -> int:
    """Generate a bank and report what never succeeded."""
    from proctor.bank.generate import generate, read_topics, write_bank
    from proctor.grading.progress import Progress
    from proctor.llm import make_backend

    if args.per_query < 1:
        raise UsageError("--per-query must be at least 1")
    if args.llm.split(":")[0] not in ("openai", "hf", "llamacpp"):
        raise UsageError("bank generation needs a text-generating backend: openai:MODEL, hf:PATH, llamacpp:PATH")
    topics = read_topics(args.queries, args.style)
    backend = make_backend(args.llm, method="generate", options={
        "base_url": args.base_url, "timeout": args.timeout, "concurrency": args.concurrency,
        "max_retries": args.max_retries, "backoff_max": args.backoff_max, "temperature": 0.0})
    progress = Progress(len(topics), None, "generating")
    kind = "nuggets" if args.nuggets else "questions"

    async def go():
        try:
            return await generate(topics, backend, style=args.style, kind=kind, n=args.per_query,
                                  retries=args.retries, progress=progress)
        finally:
            await backend.aclose()

    outcome = asyncio.run(go())
    progress.close()
    if outcome.lines:
        write_bank(outcome.lines, args.out)
    counts = [len(line["items"]) for line in outcome.lines]
    summary = {"out": args.out if outcome.lines else None, "topics": len(topics), "generated": len(outcome.lines),
               "items": sum(counts), "short_lines": sum(1 for c in counts if c < args.per_query),
               "llm_calls": outcome.attempts, "failed": outcome.failures}
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        note(f"{kind} for {len(outcome.lines)} of {len(topics)} topics ({sum(counts)} items, "
             f"{outcome.attempts} LLM calls) → {args.out if outcome.lines else 'nothing written'}")
        for failure in outcome.failures:
            note(f"never succeeded: query {failure['query_id']}"
                 + (f" facet {failure['facet_id']}" if failure["facet_id"] else "")
                 + f" after {len(failure['reasons'])} tries: {failure['reasons'][-1]}")
    return 0 if outcome.lines else 1


def run_diff(args: argparse.Namespace) -> int:
    """Print the diff of two bank files."""
    from proctor.bank.diff import diff_banks, render_diff
    from proctor.io.banks import load_bank

    result = diff_banks(load_bank(args.old).questions, load_bank(args.new).questions)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if args.format == "json" else render_diff(result, args.format))
    return 0


def run_impact(args: argparse.Namespace) -> int:
    """Grade what is new, then compare labels and leaderboards."""
    from proctor.bank.impact import bank_impact, render_impact
    from proctor.evaluate.sources import choose_grade_set, load_runs
    from proctor.io.banks import load_bank
    from proctor.io.leaderboards import read_official

    old, new = load_bank(args.old), load_bank(args.new)
    official = read_official(args.official) if args.official else None
    old_ids = {q["question_id"] for q in old.questions}
    new_ids = {q["question_id"] for q in new.questions}
    with writable_store(args.store) as store:
        grade_set = choose_grade_set(store, args.method, args.model)
        graded = {row[0] for row in store.db.execute(
            "SELECT DISTINCT question_id FROM grades WHERE method = ? AND model = ?",
            (grade_set["method"], grade_set["model"]))}
        missing = new_ids - graded
        if missing:
            if not args.llm:
                raise UsageError(f"bank B has {len(missing)} questions without grades for {grade_set['method']} / "
                                 f"{grade_set['model']}: pass --llm SPEC to grade them")
            _grade_new(store, args, grade_set["method"])
        runs = load_runs(store, None)
        result = bank_impact(store, grade_set["method"], grade_set["model"], old_ids, new_ids, runs,
                             measure=args.measure, min_grade=args.min_grade, official=official, limit=args.limit)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if args.format == "json" else render_impact(result))
    return 0


def _grade_new(store, args: argparse.Namespace, method_name: str) -> None:
    from proctor.grading.engine import Engine, GradeOptions
    from proctor.importing import ImportOptions, import_files
    from proctor.llm import make_backend
    from proctor.methods import get_method

    name = args.name or Path(args.new).name.split(".")[0]
    import_files(store, "bank", [args.new], ImportOptions(bank_name=name))
    method = get_method(method_name)
    backend = make_backend(args.llm, method=method.name, options={"base_url": args.base_url,
                                                                  "concurrency": args.concurrency})
    summary = Engine(store, method, backend, GradeOptions(bank=name)).run()
    note(f"graded {summary.graded} new pairs for bank {name} ({summary.cached} from the cache, "
         f"{summary.failures} failures)")


def run_export(args: argparse.Namespace) -> int:
    """Write the stored bank(s)."""
    from proctor.bank.generate import write_bank
    from proctor.bank.manual import bank_lines, yaml_text

    with readable_store(args.store) as store:
        sql = "SELECT question_id, query_id, facet_id, kind, text, answers, info FROM questions"
        rows = store.db.execute(sql + (" WHERE bank_id = ?" if args.bank else "") + " ORDER BY question_id",
                                (args.bank,) if args.bank else ())
        questions = [{"question_id": q, "query_id": qid, "facet_id": f, "kind": k, "text": t,
                      "answers": json.loads(a) if a else None, "info": json.loads(i) if i else None}
                     for q, qid, f, k, t, a, i in rows]
        texts = {k: v for k, v in store.queries().items() if v}
    if not questions:
        raise UsageError(f"{args.store}: no bank questions" + (f" in bank {args.bank!r}" if args.bank else ""))
    if args.fmt == "yaml":
        out = Path(args.out)
        tmp = out.with_name(f".{out.name}.partial")
        tmp.write_text(yaml_text(questions, texts, args.bank), encoding="utf-8")
        tmp.replace(out)
    else:
        write_bank(bank_lines(questions, texts, args.fmt), args.out)
    note(f"wrote {len(questions)} items to {args.out} ({args.fmt})")
    return 0
