"""Where a grading run reads and keeps its replies: the store's own response cache (kept in the transaction
that commits the grades), or a response cache of its own (`--cache-dir`, `proctor.store.ResponseCache`, shared
by runs and stores: kept first, in a transaction of its own, so no grade is committed without its reply). With
`refresh_cache` nothing is read and the new replies are kept over the old."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proctor.llm.cache import ReplyCache
from proctor.store import Store


class Replies:
    """The response cache of one grading run."""

    def __init__(self, store: Store, shared: ReplyCache | None = None, refresh: bool = False) -> None:
        self.store, self.shared, self.refresh = store, shared, refresh

    def lookup(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Cached replies of the keys that have one (none while refreshing)."""
        if self.refresh or not keys:
            return {}
        return (self.shared or self.store.caches).cache_get_many(keys)

    def commit(self, write_grades: Callable[[], None], rows: list[tuple[str, str, str, dict[str, Any]]]) -> None:
        """Commit the grades `write_grades` writes together with the replies `rows` they were parsed from."""
        if self.shared is not None and rows:
            self.shared.cache_put(rows, replace=self.refresh)
        with self.store.transaction():
            write_grades()
            if self.shared is None and rows:
                self.store.caches.cache_put(rows, replace=self.refresh)
