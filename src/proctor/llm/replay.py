"""`replay:FILE`: replies taken from grades already recorded — an exam_pp graded file or a Proctor store —
so the pipeline runs against real recorded model behaviour without the model.

The recorded reply text comes back together with a one-hot distribution on the recorded grade, so the
method reproduces every recorded grade exactly (and records where re-parsing the text would differ). A pair
with no recorded grade is a recorded failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request
from proctor.store import Store

Key = tuple[str, str, str]


class ReplayBackend:
    """Look up (query, passage, question) in recorded grades of one method."""

    kind = "replay"
    batch_size = 512
    concurrency = 1
    uses_cache = False

    def __init__(self, source: str, method: str, model: str | None = None) -> None:
        self.source = source
        self.recorded, self.model = _load(Path(source), method, model)

    def params(self) -> dict[str, Any]:
        return {"source": self.source}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return context, False

    async def complete(self, requests: list[Request]) -> list[Reply]:
        out = []
        for r in requests:
            hit = self.recorded.get((r.query_id, r.passage_id, r.question_id))
            if hit is None:
                out.append(Reply(error="no recorded grade for this pair", attempts=0))
                continue
            grade, text = hit
            out.append(Reply(text=text, probabilities={grade: 1.0} if grade is not None else None, attempts=0,
                             info={"replayed_from": self.source}))
        return out

    async def aclose(self) -> None:
        return None


def _load(path: Path, method: str, model: str | None) -> tuple[dict[Key, tuple[int | None, str | None]], str]:
    if not path.exists():
        raise UsageError(f"{path}: no such file to replay")
    if _is_sqlite(path):
        store = Store.open(path)
        try:
            grades = list(store.grades(method, model))
        finally:
            store.close()
    else:
        from proctor.io.exampp import read_exampp

        grades = [g for query in read_exampp(path) for g in query.grades
                  if g.method == method and (model is None or g.model == model)]
    models = sorted({g.model for g in grades})
    if not models:
        which = f"method {method!r}" + (f" and model {model!r}" if model else "")
        raise UsageError(f"{path}: no recorded grades of {which}")
    if len(models) > 1:
        raise UsageError(f"{path}: grades of several models ({', '.join(models)}); name one: replay:{path}@MODEL")
    return {(g.query_id, g.passage_id, g.question_id): (g.grade, g.raw_reply) for g in grades}, models[0]


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"
