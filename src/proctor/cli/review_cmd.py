"""`proctor review --store S`: the review app in a browser (see docs/review.md)."""

from __future__ import annotations

import argparse

from proctor.cli.common import add_store
from proctor.options.backend import add_backend_options, backend_options
from proctor.options.model import add_options, from_args
from proctor.options.review import ReviewOptions


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `review` command."""
    p = parsers.add_parser("review", help="review and edit the question bank in a browser, and see the impact",
                           description="Serve the review app: the overview of every query, the question bank and "
                           "grade matrix of each, editing into a draft published as a new bank version, reviewer "
                           "judgments, and 'grade what is new' with its impact on the leaderboard.")
    add_store(p)
    add_options(p, ReviewOptions, "host", "port", "token", "generate_token", "official", "min_grade",
                "judged_relevant", "depth", "llm")
    add_backend_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the options, then serve until interrupted."""
    import proctor

    proctor.review_app(args.store, from_args(ReviewOptions, args), backend_options(args) if args.llm else None)
    return 0
