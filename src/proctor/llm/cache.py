"""The response cache's logic: replies keyed by backend, model, exact prompt and decoding parameters (the
store keeps them in its `llm_cache` table, or a response cache file of its own keeps them: `--cache-dir`), so
re-runs and re-grading after a bank edit only ask for prompts not seen before. Errors are never cached, nor
replies their caller could not use. `Recording` gives the same to callers that ask a backend directly (bank
generation)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Protocol

from proctor.llm.base import Backend, Reply, Request


class ReplyCache(Protocol):
    """Where replies are kept: the store's `caches`, or a `proctor.store.ResponseCache`."""

    def cache_get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """Cached replies (as stored dicts) for the keys that have one."""
        ...

    def cache_put(self, rows: list[tuple[str, str, str, dict[str, Any]]], *, replace: bool = False) -> None:
        """Remember (key, backend, model, reply) rows; `replace` writes over a reply already kept."""
        ...


def cache_key(backend: str, model: str, prompt: str, params: dict[str, Any]) -> str:
    """SHA-256 over everything that determines a reply."""
    blob = json.dumps([backend, model, prompt, params], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def cache_keys(backend: str, model: str, prompts: list[str], params: dict[str, Any]) -> list[str]:
    """`cache_key` of many prompts at once (the same keys: only the prompt is encoded per prompt)."""
    head = json.dumps([backend, model], ensure_ascii=False)[:-1].encode("utf-8") + b", "
    tail = b", " + json.dumps(params, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"]"
    sha256 = hashlib.sha256
    return [sha256(head + encode_basestring(prompt).encode("utf-8") + tail).hexdigest() for prompt in prompts]


def from_cache(data: dict[str, Any]) -> Reply:
    """A reply as the cache stored it."""
    probabilities = data.get("probabilities")
    return Reply(text=data.get("text"), score=data.get("score"), tokens=data.get("tokens", 0),
                 probabilities={int(k): v for k, v in probabilities.items()} if probabilities else None,
                 cached=True, attempts=0)


def cacheable(reply: Reply) -> bool:
    """Only successful replies are cached."""
    return reply.error is None


class Recording:
    """A backend whose replies are read from a response cache and kept in it: `complete` answers what the cache
    holds (nothing while `refresh`) and asks the backend for the rest; the caller `keep`s a reply once it has
    found it usable, so a failure is never kept. Every reply carries in `info["time"]` when it was received
    (a cached one: when it was first received), so what is built from it is the same on every run."""

    def __init__(self, backend: Backend, cache: ReplyCache, *, refresh: bool = False) -> None:
        self.backend, self.cache, self.refresh = backend, cache, refresh
        self.kind, self.model = backend.kind, backend.model
        self.batch_size, self.concurrency, self.uses_cache = backend.batch_size, backend.concurrency, True

    def params(self) -> dict[str, Any]:
        """The backend's decoding parameters."""
        return self.backend.params()

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        """The backend's fitting."""
        return self.backend.fit(before, context, after)

    def key(self, request: Request) -> str:
        """The request's cache key (as the grading engine keys its prompts)."""
        return cache_key(self.kind, self.model, request.text(), {**self.params(), "max_tokens": request.max_tokens})

    async def complete(self, requests: list[Request]) -> list[Reply]:
        """Cached replies where the cache has them, the backend's for the others (in order)."""
        keys = [self.key(r) for r in requests]
        hits = {} if self.refresh else self.cache.cache_get_many(keys)
        out: list[Reply | None] = [None] * len(requests)
        for n, key in enumerate(keys):
            if key in hits:
                out[n] = from_cache(hits[key])
                out[n].info["time"] = hits[key].get("time")  # type: ignore[union-attr]
        missing = [n for n, reply in enumerate(out) if reply is None]
        if missing:
            fresh = await self.backend.complete([requests[n] for n in missing])
            received = datetime.now(UTC).isoformat(timespec="seconds")
            for n, reply in zip(missing, fresh, strict=True):
                reply.info.setdefault("time", received)
                out[n] = reply
        return out  # type: ignore[return-value]

    def keep(self, request: Request, reply: Reply) -> None:
        """Keep a usable reply the backend gave (a cached one is kept already)."""
        if not reply.cached and cacheable(reply):
            self.cache.cache_put([(self.key(request), self.kind, self.model,
                                   {**reply.to_cache(), "time": reply.info.get("time")})], replace=self.refresh)

    async def aclose(self) -> None:
        """Close the backend."""
        await self.backend.aclose()


def keep(backend: Backend, request: Request, reply: Reply) -> None:
    """Keep a usable reply in the backend's response cache, when it reads from one (`Recording`)."""
    if isinstance(backend, Recording):
        backend.keep(request, reply)
