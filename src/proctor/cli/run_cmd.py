"""`proctor run EXPERIMENT.toml [--dry-run] [--only STEP]`: one experiment from one file."""

from __future__ import annotations

import argparse
import json
import sys

from proctor.cli.common import add_format, note
from proctor.options.grading import GradingOptions
from proctor.options.model import add_options
from proctor.options.run import RunOptions

DESCRIPTION = """\
Run the experiment a TOML file declares (docs/experiments.md): import its inputs, grade with each
[[grade]] table, write qrels, leaderboards, correlations and the report into its out folder. A step runs
only when what it depends on changed (content hashes, kept in OUT/run.json), so running the same file again
does nothing; an interrupted grading step resumes. run.json records the Proctor version, input hashes,
grade sets, prompt versions, models, the equivalent `proctor` commands, timings and LLM usage.

--dry-run prints the plan before any LLM call: per grader the pairs in the pool, pairs already graded,
prompts to send, estimated prompt and completion tokens and, with --price-in/--price-out (per million
tokens), the cost. It writes nothing."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `run` command."""
    p = commands.add_parser("run", help="run an experiment file (import, grade, evaluate; only what changed)",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", metavar="EXPERIMENT.toml", help="the experiment file")
    add_options(p, RunOptions, "dry_run", "only")
    add_options(p, GradingOptions, "max_queries", "max_passages")
    add_options(p, RunOptions, "price_in", "price_out")
    add_options(p, GradingOptions, "progress")
    add_format(p, ("text", "json"), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run (or plan) the experiment and print what happened."""
    import proctor

    request = proctor.experiment_request(args.experiment, dry_run=args.dry_run, only=args.only,
                                         max_queries=args.max_queries, max_passages=args.max_passages,
                                         price_in=args.price_in, price_out=args.price_out, progress=args.progress)
    if request.dry_run:
        sys.stdout.write(request.plan().render(args.format))
        return 0
    result = request.run(log=note)
    if args.format == "json":
        print(json.dumps(result.manifest, indent=2, default=str))
    else:
        note(f"ran {', '.join(result.ran) or 'nothing'}; unchanged: {', '.join(result.skipped) or 'nothing'}; "
             f"manifest {result.manifest['out']}/run.json")
    return result.status
