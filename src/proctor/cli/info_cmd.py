"""`proctor info --store S [--format text|json]`: what the store holds."""

from __future__ import annotations

import argparse
import json

from proctor.cli.common import add_format, add_store, readable_store


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `info` command."""
    p = commands.add_parser("info", help="counts of what the store holds",
                            description="Print counts: queries, passages, runs, judgments, banks and their "
                            "versions, questions, and every grade set (id, method, model, bank@version, prompt "
                            "version, grades, failures). --format json has them under `grade_sets`.")
    add_store(p)
    add_format(p, ("text", "json"), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the counts."""
    with readable_store(args.store, args.lock_timeout) as store:
        counts = store.counts()
    if args.format == "json":
        print(json.dumps(counts, indent=2))
        return 0
    for key in ("store", "queries", "passages", "runs", "generated_runs", "rankings", "judgments", "banks", "questions",
                "grades", "failures"):
        print(f"{key:<14} {counts[key]}")
    for bank in counts["bank_versions"]:
        latest = " (latest)" if bank["latest"] else ""
        print(f"bank           {bank['bank']}@{bank['version']}{latest}: {bank['questions']} items "
              f"({bank['nuggets']} nuggets) from {bank['source']}")
    for s in counts["grade_sets"]:
        hidden = " (intermediate)" if s.get("intermediate") else ""
        print(f"grade set      {s['id']}  {s['method']} / {s['model']}  bank {s['bank']}  prompt {s['prompt_version']}"
              f"  {s['grades']} grades ({s['failures']} failed){hidden}")
    return 0
