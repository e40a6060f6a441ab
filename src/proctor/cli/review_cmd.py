"""`proctor review --store S`: the review app in a browser (see docs/review.md)."""

from __future__ import annotations

import argparse

from proctor.cli.common import GRADE, add_store, int_in
from proctor.options.backend import add_backend_options, backend_options
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `review` command."""
    p = commands.add_parser("review", help="review and edit the question bank in a browser, and see the impact",
                            description="Serve the review app: the overview of every query, the question bank and "
                            "grade matrix of each, editing into a draft published as a new bank version, reviewer "
                            "judgments, and 'grade what is new' with its impact on the leaderboard.")
    add_store(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other needs a token)")
    p.add_argument("--port", type=int_in(1, 65535), default=8765, help="port (default 8765)")
    p.add_argument("--token", help="access token every request must carry (required for a non-loopback --host)")
    p.add_argument("--generate-token", action="store_true",
                   help="make up a random token (printed) when --host is not loopback and no --token is given")
    p.add_argument("--official", metavar="FILE", help="official leaderboard to correlate with in the impact view")
    p.add_argument("--min-grade", type=GRADE, default=4, metavar="T",
                   help="a question is answered at grade >= T (flags; default 4)")
    add_options(p, EvaluationOptions, "judged_relevant")
    p.add_argument("--llm", metavar="SPEC", help="backend for 'grade what is new' (without it the app cannot grade)")
    add_backend_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the options, then serve until interrupted."""
    import proctor

    proctor.review_app(args.store, host=args.host, port=args.port, token=args.token,
                       generate_token=args.generate_token, official=args.official, min_grade=args.min_grade,
                       judged_relevant=args.judged_relevant, llm=args.llm,
                       backend=backend_options(args) if args.llm else None)
    return 0
