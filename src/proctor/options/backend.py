"""The backend options: one field each, from which the backend flags of every LLM-calling command, the
experiment file's backend keys (`[[grade]]`), the AutoJudge settings that pass them, `llm.config.BackendConfig`
and the backends' own options (`llm.openai_backend.OpenAIOptions`) are derived."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any

from proctor.errors import UsageError
from proctor.options.model import Checked, add_options, names, option, spec
from proctor.options.numeric import check_numbers

DTYPES = ("auto", "bfloat16", "float16", "float32")
"""`--dtype` (hf): `auto` is bfloat16 on CUDA where the device supports it, float32 otherwise."""


@dataclass(frozen=True, kw_only=True)
class BackendOptions(Checked):
    """Every backend option; each backend takes the ones that apply to it (`applies`)."""

    base_url: str | None = option(
        help="openai: server URL, e.g. http://127.0.0.1:8000/v1; several separated by commas form a fleet (least "
        "outstanding requests first, failing servers taken out for a while)", applies=("openai",))
    concurrency: int = option(8, help="openai: requests in flight per server (default {default})",
                              applies=("openai",))
    workers: int = option(1, help="openai: client processes sending the requests (default {default}); more when "
                          "one core cannot keep a fast server busy (--concurrency is shared out among them)",
                          applies=("openai",))
    timeout: float = option(60.0, help="openai: seconds per request (default {default:g})", applies=("openai",))
    max_retries: int = option(6, help="openai: retries on 429/5xx/timeouts (default {default})", applies=("openai",))
    backoff_max: float = option(30.0, help="openai: longest wait between retries (s)", applies=("openai",))
    rpm: float | None = option(help="openai: at most this many requests per minute", applies=("openai",))
    tpm: float | None = option(help="openai: at most this many tokens per minute (estimated)", applies=("openai",))
    max_context_chars: int = option(
        12000, help="openai: longest prompt in characters; the context is cut to fit (default {default})",
        applies=("openai",))
    device: str | None = option(help="hf/embed: cpu or cuda (default: cuda when available for hf, else cpu)",
                                applies=("hf", "hf-qa", "embed"))
    batch_size: int | None = option(
        help="hf: prompts per forward pass (default 8 on the CPU; on CUDA as many as fit in 262,144 padded "
        "tokens, at most 2,048; halved while out of memory); "
        "hf-qa: (default 8)", applies=("hf", "hf-qa"))
    dtype: str | None = option(
        help="hf: the weights' precision: auto (bfloat16 on CUDA where the device supports it, else float32), "
        "bfloat16, float16 or float32; any but float32 enters the grade set's parameters (default auto)",
        choices=DTYPES, applies=("hf",))
    probabilities: bool = option(
        False, flag="--grade-probabilities", action="store_true", applies=("hf", "openai"),
        help="hf, openai: read ratings from the probabilities of the tokens 0-5 of the first generated token "
        "(openai: needs a server that returns logprobs)")

    def check(self) -> None:
        """Refuse values no backend can use."""
        check_numbers(asdict(self))
        if self.dtype is not None:
            check_dtype(self.dtype)
        if self.base_url is not None and not all(u.strip() for u in self.base_url.split(",")):
            raise UsageError(f"{{base_url}} {self.base_url!r}: an empty URL in the list (URL1,URL2,...)",
                             params=("base_url",))
        for url in (self.base_url or "").split(","):
            if url.strip() and not url.strip().lower().startswith(("http://", "https://")):
                raise UsageError(f"{{base_url}} {url.strip()!r}: not an http:// or https:// URL", params=("base_url",))


def check_dtype(name: str) -> str:
    """A `--dtype` value, refused unless it is one of `DTYPES`."""
    if name not in DTYPES:
        raise UsageError(f"{{dtype}} {name!r}: choose one of {', '.join(DTYPES)}", params=("dtype",))
    return name


def add_backend_options(p: argparse.ArgumentParser, **defaults: object) -> None:
    """The backend flags every LLM-calling command takes (`defaults`: this command's own, e.g. `concurrency=4`)."""
    add_options(p.add_argument_group("backend"), BackendOptions, **defaults)


def applying_to(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options given (not None) that apply to backends of `kind` (`openai`, `hf`, ...)."""
    return {k: v for k, v in options.items()
            if v is not None and k in names(BackendOptions) and kind in spec(BackendOptions, k).applies}


def given(args: argparse.Namespace) -> dict[str, Any]:
    """The backend options a parsed command line gives (those not None)."""
    return {k: getattr(args, k) for k in names(BackendOptions) if getattr(args, k, None) is not None}


def backend_options(args: argparse.Namespace) -> BackendOptions:
    """The backend options a parsed command line gives (defaults for the rest), checked."""
    options = BackendOptions(**given(args))
    options.check()
    return options
