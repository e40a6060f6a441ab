"""The review app's options (`proctor review`, `proctor.review_app`): where it listens and who may use it,
its thresholds, the official leaderboard of its impact view and the backend that grades what is new, one
field each. The thresholds and the pool's depth are borrowed from the models that declare them."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import Checked, borrow, int_in, option


@dataclass(frozen=True, kw_only=True)
class ReviewOptions(Checked):
    """Every option of the review app but the store and the backend's options."""

    host: str = option("127.0.0.1", help="address to bind (default {default}; any other needs a token)")
    port: int = option(8765, parse=int_in(1, 65535), help="port (default {default})")
    token: str | None = option(help="access token every request must carry (required for a non-loopback --host)")
    generate_token: bool = option(False, action="store_true",
                                  help="make up a random token (printed) when --host is not loopback and no --token "
                                  "is given")
    official: str | None = borrow(EvaluationOptions, "official")
    min_grade: int = borrow(EvaluationOptions, "min_grade")
    judged_relevant: int = borrow(EvaluationOptions, "judged_relevant")
    depth: int = borrow(GradingOptions, "depth")
    llm: str | None = option(metavar="SPEC",
                             help="backend for 'grade what is new' (without it the app cannot grade)")
