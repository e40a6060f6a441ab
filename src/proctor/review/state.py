"""What the review app's routes share."""

from __future__ import annotations

from dataclasses import dataclass, field

from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.llm.config import BackendConfig
from proctor.review.jobs import Jobs
from proctor.review.pages import Cache, Thresholds
from proctor.store import Store


@dataclass
class ReviewState:
    """Everything the routes share: the store (one connection, used on the server's event loop), the backend
    configured at start-up, the official leaderboard, thresholds, caches and grading jobs."""

    store: Store
    config: BackendConfig | None = None
    official: LeaderboardFile | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    cache: Cache = field(default_factory=Cache)
    jobs: Jobs | None = None
