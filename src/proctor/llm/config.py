"""One backend configuration, built once from the command line (or an experiment file) and used by every
command that calls an LLM (`grade`, `bank generate`, `bank impact`, `verify`): every backend flag works in
every one of them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Backend
from proctor.numeric_options import check_numbers

Recorded = dict[tuple[str, str, str, str], tuple[int | None, str | None]]
RecordedLoader = Callable[[str, str, str | None], tuple[Recorded, str, str]]
"""(source, method, model or grade set id) → ({(step, query, passage, item): (grade, reply)}, model, origin)."""


@dataclass(frozen=True)
class BackendConfig:
    """Every backend option; each backend takes the ones that apply to it."""

    spec: str | None = None
    base_url: str | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 6
    backoff_max: float = 30.0
    rpm: float | None = None
    tpm: float | None = None
    max_context_chars: int = 12000
    device: str | None = None
    batch_size: int | None = None
    probabilities: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace, spec: str | None = None) -> BackendConfig:
        """The configuration the backend options of a command give (see `add_backend_options`)."""
        config = cls(spec=spec if spec is not None else getattr(args, "llm", None),
                     **{k: getattr(args, k) for k in _OPTIONS if getattr(args, k, None) is not None})
        config.check()
        return config

    def check(self) -> None:
        """Refuse values no backend can use."""
        check_numbers(asdict(self))
        if self.base_url is not None and not all(u.strip() for u in self.base_url.split(",")):
            raise UsageError(f"--base-url {self.base_url!r}: an empty URL in the list (URL1,URL2,...)")
        for url in (self.base_url or "").split(","):
            if url.strip() and not url.strip().lower().startswith(("http://", "https://")):
                raise UsageError(f"--base-url {url.strip()!r}: not an http:// or https:// URL")

    def options(self) -> dict[str, Any]:
        """The options as a plain dict (for `make_backend` and manifests)."""
        return {k: v for k, v in asdict(self).items() if k != "spec"}

    def build(self, method: str, *, spec: str | None = None, recorded: RecordedLoader | None = None) -> Backend:
        """The backend for `method` (its spec, or `spec`); replay backends read recorded grades via `recorded`."""
        from proctor.llm import make_backend

        chosen = spec or self.spec
        if chosen is None:
            raise UsageError("--llm SPEC is required, e.g. openai:MODEL, hf:PATH, replay:FILE, embed:minilm")
        return make_backend(chosen, method=method, options=self.options(), recorded=recorded)


_OPTIONS = ("base_url", "concurrency", "timeout", "max_retries", "backoff_max", "rpm", "tpm", "max_context_chars",
            "device", "batch_size", "probabilities")


def add_backend_options(p: argparse.ArgumentParser, *, concurrency: int = 8, timeout: float = 60.0) -> None:
    """The backend flags every LLM-calling command takes."""
    g = p.add_argument_group("backend")
    g.add_argument("--base-url", help="openai: server URL, e.g. http://127.0.0.1:8000/v1; several separated by "
                   "commas form a fleet (least outstanding requests first, failing servers taken out for a while)")
    g.add_argument("--concurrency", type=int, default=concurrency,
                   help=f"openai: requests in flight per server (default {concurrency})")
    g.add_argument("--timeout", type=float, default=timeout, help=f"openai: seconds per request (default {timeout:g})")
    g.add_argument("--max-retries", type=int, default=6, help="openai: retries on 429/5xx/timeouts (default 6)")
    g.add_argument("--backoff-max", type=float, default=30.0, help="openai: longest wait between retries (s)")
    g.add_argument("--rpm", type=float, help="openai: at most this many requests per minute")
    g.add_argument("--tpm", type=float, help="openai: at most this many tokens per minute (estimated)")
    g.add_argument("--max-context-chars", type=int, default=12000,
                   help="openai: longest prompt in characters; the context is cut to fit (default 12000)")
    g.add_argument("--device", help="hf/embed: cpu or cuda (default: cuda when available for hf, else cpu)")
    g.add_argument("--batch-size", type=int, help="hf: prompts per forward pass (default 8)")
    g.add_argument("--grade-probabilities", dest="probabilities", action="store_true",
                   help="hf, openai: read ratings from the probabilities of the tokens 0-5 of the first generated "
                   "token (openai: needs a server that returns logprobs)")
