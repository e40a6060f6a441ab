"""What the review app's routes share."""

from __future__ import annotations

from dataclasses import dataclass, field

from proctor.api import Store, commands
from proctor.review.jobs import Jobs
from proctor.review.pages import Cache, Thresholds


@dataclass
class ReviewState:
    """Everything the routes share: the store (one connection, used on the server's event loop), the backend
    configured at start-up, the official leaderboard, thresholds, caches and grading jobs."""

    store: Store
    config: commands.BackendConfig | None = None
    official: commands.LeaderboardFile | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    cache: Cache = field(default_factory=Cache)
    jobs: Jobs | None = None
