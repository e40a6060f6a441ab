"""The response cache: replies keyed by backend, model, exact prompt and decoding parameters, kept in the
store (table `llm_cache`), so re-runs and re-grading after a bank edit only ask for prompts not seen before."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from proctor.llm.base import Reply
from proctor.store import Store, now

SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, reply TEXT NOT NULL, created TEXT NOT NULL
) WITHOUT ROWID;
"""


def cache_key(backend: str, model: str, prompt: str, params: dict[str, Any]) -> str:
    """SHA-256 over everything that determines a reply."""
    blob = json.dumps([backend, model, prompt, params], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Get and put replies; writes go in the caller's transaction."""

    def __init__(self, store: Store) -> None:
        self.db = store.db
        self.db.executescript(SCHEMA)

    def get_many(self, keys: list[str]) -> dict[str, Reply]:
        """Cached replies for the keys that have one."""
        out: dict[str, Reply] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self.db.execute(f"SELECT key, reply FROM llm_cache WHERE key IN ({marks})", chunk):
                data = json.loads(blob)
                probabilities = data.get("probabilities")
                out[key] = Reply(text=data.get("text"), score=data.get("score"), tokens=data.get("tokens", 0),
                                 probabilities={int(k): v for k, v in probabilities.items()} if probabilities else None,
                                 cached=True, attempts=0)
        return out

    def put(self, key: str, backend: str, model: str, reply: Reply) -> None:
        """Remember a successful reply."""
        if reply.error is None:
            self.db.execute("INSERT OR IGNORE INTO llm_cache VALUES (?, ?, ?, ?, ?)",
                            (key, backend, model, json.dumps(reply.to_cache()), now()))

    def count(self) -> int:
        """Cached replies."""
        return self.db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]
