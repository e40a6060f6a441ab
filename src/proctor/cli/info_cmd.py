"""`proctor info --store S [--format text|json]`: what the store holds."""

from __future__ import annotations

import argparse
import sys
from typing import get_args

from proctor import api
from proctor.api.types import TextFormat
from proctor.cli.common import add_format, add_store, readable_store


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `info` command."""
    p = commands.add_parser("info", help="counts of what the store holds",
                            description="Print counts: queries, passages, runs, judgments, banks and their "
                            "versions, questions, and every grade set (id, method, model, bank@version, prompt "
                            "version, grades, failures). --format json has them under `grade_sets`.")
    add_store(p)
    add_format(p, get_args(TextFormat), "text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the counts."""
    with readable_store(args.store, args.lock_timeout) as store:
        info = api.info(store)
    sys.stdout.write(api.render(info, args.format))
    return 0
