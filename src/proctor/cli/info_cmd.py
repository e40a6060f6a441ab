"""`proctor info --store S [--format text|json]`: what the store holds."""

from __future__ import annotations

import argparse
import json

from proctor.cli.common import add_format, add_store, readable_store


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `info` command."""
    p = commands.add_parser("info", help="counts of what the store holds",
                            description="Print counts: queries, passages, runs, judgments, banks, questions, "
                            "grades by method and model, and failed grades.")
    add_store(p)
    add_format(p, ("text", "json"), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the counts."""
    with readable_store(args.store) as store:
        counts = store.counts()
    if args.format == "json":
        print(json.dumps(counts, indent=2))
        return 0
    for key in ("store", "queries", "passages", "runs", "generated_runs", "rankings", "judgments", "banks", "questions",
                "grades", "failures"):
        print(f"{key:<14} {counts[key]}")
    for bank in counts["bank_versions"]:
        print(f"bank           {bank['bank']}@{bank['version']}: {bank['questions']} items "
              f"({bank['nuggets']} nuggets) from {bank['source']}")
    for s in counts["grades_by_method"]:
        print(f"grades         {s['method']} / {s['model']}: {s['grades']} ({s['failures']} failed); "
              f"prompt {', '.join(s['prompt_versions'])}")
    return 0
