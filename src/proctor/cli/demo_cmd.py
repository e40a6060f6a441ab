"""`proctor demo`: the whole phase-3 pipeline on the example collection that ships with Proctor."""

from __future__ import annotations

import argparse

from proctor.options.model import add_options
from proctor.options.run import DemoOptions


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `demo` command."""
    p = commands.add_parser("demo", help="run Proctor end to end on its small example collection",
                            description="Write the bundled example collection (queries, passages, runs, "
                            "judgments and a question bank) and the bundled experiment file demo.toml into --out, and "
                            "run it (as `proctor run OUT/demo.toml`): import, grade with the embedded default grader "
                            "(embed:minilm), then print EXAM-Qrels and EXAM-Cover leaderboards next to the "
                            "human-judgment leaderboards with the commands that make each. A second demo in the same "
                            "folder finds nothing changed and does nothing new.")
    add_options(p, DemoOptions)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo (the bundled experiment file, through the Python API)."""
    import proctor

    return proctor.run_demo(args.out)
