"""`llamacpp:PATH.gguf`: a local GGUF model through llama-cpp-python (optional extra `proctor[llamacpp]`;
it builds from source, ~7 minutes). Greedy chat completion, one request at a time."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request


class LlamaCppBackend:
    """A GGUF model in-process."""

    kind = "llamacpp"
    batch_size = 1
    concurrency = 1
    uses_cache = True

    def __init__(self, path: str, *, context_window: int = 2048, threads: int | None = None) -> None:
        if not os.path.isfile(path):
            raise UsageError(f"llamacpp:{path}: no such GGUF file")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise UsageError("llamacpp: needs llama-cpp-python (in a Proctor checkout: "
                             "pip install -e '.[llamacpp]')") from None
        self._load = lambda: Llama(model_path=path, n_ctx=context_window, n_threads=threads, verbose=False, seed=0)
        self._vocab = lambda: Llama(model_path=path, vocab_only=True, verbose=False)
        self._llm: Any = None
        self._tokenizer: Any = None
        self.model = os.path.basename(path)
        self.context_window = context_window

    @property
    def llm(self) -> Any:
        """The model, loaded on first use: building the backend (a dry run, a grade set's id) loads nothing."""
        if self._llm is None:
            self._llm = self._load()
        return self._llm

    def _tokens(self) -> Any:
        """Tokenizer and detokenizer: the loaded model's, else the GGUF's vocabulary alone (no weights)."""
        if self._llm is not None:
            return self._llm
        if self._tokenizer is None:
            self._tokenizer = self._vocab()
        return self._tokenizer

    def params(self) -> dict[str, Any]:
        return {"temperature": 0.0, "n_ctx": self.context_window}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        vocabulary = self._tokens()
        budget = self.context_window - len(vocabulary.tokenize((before + after).encode())) - 64
        ids = vocabulary.tokenize(context.encode(), add_bos=False)
        if len(ids) <= budget:
            return context, False
        return vocabulary.detokenize(ids[:max(0, budget)]).decode("utf-8", "ignore"), True

    async def complete(self, requests: list[Request]) -> list[Reply]:
        return [await asyncio.to_thread(self._one, r) for r in requests]

    def _one(self, request: Request) -> Reply:
        try:
            messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
                {"role": "user", "content": request.prompt}]
            out = self.llm.create_chat_completion(messages=messages,
                                                  temperature=0.0, max_tokens=request.max_tokens)
        except Exception as exc:  # one failing prompt is a recorded failure
            return Reply(error=f"{type(exc).__name__}: {exc}")
        text = out["choices"][0]["message"].get("content") or ""
        return Reply(text=text, tokens=out.get("usage", {}).get("total_tokens", 0))

    async def aclose(self) -> None:
        return None
