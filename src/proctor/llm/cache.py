"""The response cache's logic: replies keyed by backend, model, exact prompt and decoding parameters (the
store keeps them in its `llm_cache` table), so re-runs and re-grading after a bank edit only ask for prompts
not seen before. Errors are never cached."""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from proctor.llm.base import Reply


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
