"""`replay:FILE[@MODEL|@GRADESET]`: replies taken from grades already recorded — an exam_pp graded file or
a Proctor store — so the pipeline runs against real recorded model behaviour without the model.

Replies are looked up by (step, query, passage, item), so every step of a multi-step method (and the LLM
verification of `qa --verify llm`) is replayed from its own recorded replies. The recorded reply text comes
back with a one-hot distribution on the recorded grade, so the method reproduces every recorded grade
exactly. A pair with no recorded grade is a recorded failure. Loading is the caller's (`llm/` never reads
the store): see `proctor.grading.recorded`."""

from __future__ import annotations

from typing import Any

from proctor.llm.base import Reply, Request

Key = tuple[str, str, str, str]


class ReplayBackend:
    """Look up (step, query, passage, item) in recorded grades."""

    kind = "replay"
    batch_size = 512
    concurrency = 1
    uses_cache = False

    def __init__(self, recorded: dict[Key, tuple[int | None, str | None]], model: str, origin: str) -> None:
        self.recorded, self.model, self.origin = recorded, model, origin

    def params(self) -> dict[str, Any]:
        return {"replayed_from": self.origin}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return context, False

    async def complete(self, requests: list[Request]) -> list[Reply]:
        out = []
        for r in requests:
            hit = self.recorded.get((r.step, r.query_id, r.passage_id, r.question_id))
            if hit is None:
                out.append(Reply(error="no recorded grade for this pair", attempts=0))
                continue
            grade, text = hit
            out.append(Reply(text=text, probabilities={grade: 1.0} if grade is not None else None, attempts=0,
                             info={"replayed_from": self.origin}))
        return out

    async def aclose(self) -> None:
        return None
