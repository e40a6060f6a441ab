"""One backend configuration, built once from the command line (or an experiment file) and used by every
command that calls an LLM (`grade`, `bank generate`, `bank impact`, `verify`): every backend flag works in
every one of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Backend
from proctor.options.backend import BackendOptions

Recorded = dict[tuple[str, str, str, str], tuple[int | None, str | None]]
CACHE_FIELDS = ("cache_dir", "cache_refresh")
"""Where replies are cached, not how the backend asks (never in a manifest, never passed to a backend)."""
RecordedLoader = Callable[[str, str, str | None], tuple[Recorded, str, str]]
"""(source, method, model or grade set id) → ({(step, query, passage, item): (grade, reply)}, model, origin)."""


@dataclass(frozen=True)
class BackendConfig(BackendOptions):
    """The backend a command names (`spec`) and every backend option (`proctor.options.backend`)."""

    spec: str | None = None
    cache_dir: str | None = None
    """A response cache of its own (`FOLDER/proctor-llm-cache.db`, shared by runs and stores) instead of the
    store's; bank generation caches its replies only there."""
    cache_refresh: bool = False
    """Ask again instead of answering from the response cache, and record the new replies over the old."""

    @classmethod
    def of(cls, options: BackendOptions | None = None, spec: str | None = None, **fields: Any) -> BackendConfig:
        """The configuration of backend `options` (a command's, or the defaults) with `spec` and any `fields`
        (backend options by name) set, checked once."""
        base = options if isinstance(options, BackendConfig) else cls(**asdict(options or BackendOptions()))
        config = replace(base, **({"spec": spec} if spec is not None else {}), **fields)
        config.check()
        return config

    def options(self) -> dict[str, Any]:
        """The options as a plain dict (for `make_backend` and manifests)."""
        return {k: v for k, v in asdict(self).items() if k not in ("spec", *CACHE_FIELDS)}

    def build(self, method: str, *, spec: str | None = None, recorded: RecordedLoader | None = None) -> Backend:
        """The backend for `method` (its spec, or `spec`); replay backends read recorded grades via `recorded`."""
        from proctor.llm import make_backend

        chosen = spec or self.spec
        if chosen is None:
            raise UsageError("{llm} SPEC is required, e.g. openai:MODEL, hf:PATH, replay:FILE, embed:minilm",
                             params=("llm",))
        return make_backend(chosen, method=method, options=self.options(), recorded=recorded)

