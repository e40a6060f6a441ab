"""LLM backends behind one protocol (`proctor.llm.base.Backend`), chosen by a spec string:
`openai:MODEL`, `openai-batch:MODEL`, `hf:PATH`, `hf-qa:PATH` (extractive QA, `--method qa` only), `llamacpp:PATH.gguf`,
`replay:FILE[@MODEL]`, `embed:minilm|PATH`."""

from __future__ import annotations

from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Backend, Reply, Request

SPECS = ("openai:MODEL", "openai-batch:MODEL", "hf:PATH", "hf-qa:PATH", "llamacpp:PATH.gguf", "replay:FILE[@MODEL]",
         "embed:minilm")


def make_backend(spec: str, *, method: str, options: dict[str, Any] | None = None,
                 recorded: Any = None) -> Backend:
    """Build the backend a spec names (heavy libraries are imported only here, only for that backend)."""
    options = options or {}
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise UsageError(f"{{llm}} {spec!r}: expected one of {', '.join(SPECS)}", params=("llm",))
    if kind == "openai-batch":
        raise UsageError(f"{{llm}} {spec}: the OpenAI Batch API grades through `proctor grade` only", params=("llm",))
    if kind == "openai":
        from proctor.llm.openai_backend import OpenAIBackend, OpenAIOptions
        from proctor.options.backend import applying_to

        backend = OpenAIBackend(rest, OpenAIOptions(**applying_to("openai", options)))
        if backend.options.workers > 1:
            from proctor.llm.workers import WorkerPool

            return WorkerPool(backend, backend.options.workers)
        return backend
    if kind == "hf":
        from proctor.llm.hf import HFBackend

        return HFBackend(rest, device=options.get("device"), batch_size=options.get("batch_size"),
                         probabilities=bool(options.get("probabilities")), dtype=options.get("dtype"))
    if kind == "hf-qa":
        if method != "qa":
            raise UsageError(f"{{llm}} {spec}: an extractive QA model answers questions with spans; it grades "
                             f"{{method}} qa only, not {method}", params=("llm", "method"))
        from proctor.llm.hf_qa import ExtractiveQABackend

        return ExtractiveQABackend(rest, device=options.get("device"), batch_size=options.get("batch_size") or 8)
    if kind == "llamacpp":
        from proctor.llm.llamacpp import LlamaCppBackend

        return LlamaCppBackend(rest)
    if kind == "replay":
        from proctor.llm.replay import ReplayBackend

        if recorded is None:
            raise UsageError(f"{{llm}} {spec}: replay is not available in this command", params=("llm",))
        source, _, model = rest.partition("@")
        return ReplayBackend(*recorded(source, method, model or None))
    if kind == "embed":
        from proctor.llm.embed import EmbeddingBackend

        return EmbeddingBackend(rest, device=options.get("device"))
    raise UsageError(f"{{llm}} {spec!r}: unknown backend {kind!r}; expected one of {', '.join(SPECS)}",
                     params=("llm",))


__all__ = ["Backend", "Reply", "Request", "SPECS", "make_backend"]
