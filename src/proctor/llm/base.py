"""The one small protocol every backend speaks: a batch of requests in, replies out (text, or the
probabilities of the grade tokens, or a similarity score), never an exception for one bad reply."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Request:
    """One (passage, question) pair to grade, with its rendered prompt."""

    query_id: str
    passage_id: str
    question_id: str
    prompt: str
    question: str
    context: str
    max_tokens: int = 32
    system: str | None = None
    step: str = ""
    """The method step asking (replay looks replies up by it)."""
    rating: bool = False
    """The step reads a 0–5 rating (`Method.kind` `rating`): asked for the grade tokens' probabilities, a local
    backend may read them in one forward pass instead of generating a reply (`llm.hf`)."""

    def text(self) -> str:
        """System message and prompt as one text, for backends without chat roles."""
        return f"{self.system}\n\n{self.prompt}" if self.system else self.prompt


@dataclass
class Reply:
    """What a backend answered: text and/or grade-token probabilities and/or a score, or an error."""

    text: str | None = None
    probabilities: dict[int, float] | None = None
    score: float | None = None
    error: str | None = None
    tokens: int = 0
    attempts: int = 1
    cached: bool = False
    info: dict[str, Any] = field(default_factory=dict)

    def to_cache(self) -> dict[str, Any]:
        """The part of a reply worth caching (errors are not cached)."""
        return {"text": self.text, "probabilities": self.probabilities, "score": self.score, "tokens": self.tokens}


class Backend(Protocol):
    """An LLM (or embedding model) that grades batches of requests."""

    kind: str
    """`openai`, `hf`, `llamacpp`, `replay`, `embed`."""
    model: str
    """The model name recorded with every grade."""
    batch_size: int
    """Requests per `complete` call."""
    concurrency: int
    """How many `complete` calls may be in flight at once."""
    uses_cache: bool
    """False for backends whose replies are not worth caching (replay, embeddings are cheap)."""

    def params(self) -> dict[str, Any]:
        """Decoding parameters that change replies (part of the cache key)."""
        ...

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        """The context cut so that `before + context + after` fits the model's window; True when cut."""
        ...

    async def complete(self, requests: list[Request]) -> list[Reply]:
        """Replies for a batch, in order; failures are replies with `error` set."""
        ...

    async def aclose(self) -> None:
        """Release connections or models."""
        ...


def fit_by_chars(before: str, context: str, after: str, max_chars: int) -> tuple[str, bool]:
    """Cut the context (never the instruction or question) so the whole prompt has at most `max_chars`."""
    room = max_chars - len(before) - len(after)
    if len(context) <= room:
        return context, False
    return context[:max(0, room)], True
