"""Nugget importance (AutoNuggetizer): nuggets labelled `vital` or `okay` with nuggetizer's scorer prompt, in
windows of 10 nuggets as nuggetizer sends them; replies parsed as Python lists (one label per nugget),
asked again when unusable. A window that never gives a usable reply leaves its nuggets without importance
and is reported (nuggetizer would silently call them `okay`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

from proctor.io.banks import IMPORTANCE
from proctor.llm.base import Backend, Request
from proctor.llm.cache import keep
from proctor.methods.label_lists import parse_labels, python_list
from proctor.options.banks import BankGenerationOptions


@cache
def nuggetizer_prompts() -> dict[str, Any]:
    """nuggetizer's creator and scorer prompts (packaged data, source named in the file)."""
    text = resources.files("proctor.bank").joinpath("templates", "nuggetizer.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def fill(text: str, **values: Any) -> str:
    """Fill `{name}` placeholders as `str.format` would, leaving every other character alone."""
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


@dataclass
class Labelled:
    """Labels of one list of items (None where no usable reply came), calls made, reasons of failures."""

    labels: list[str | None]
    calls: int = 0
    failures: list[str] = field(default_factory=list)


async def ask_labels(backend: Backend, gate: asyncio.Semaphore, request: Request, count: int,
                     allowed: tuple[str, ...], retries: int) -> tuple[list[str] | None, int, list[str]]:
    """Ask until the reply is a list of `count` labels of `allowed` (at most 1 + `retries` calls)."""
    reasons: list[str] = []
    for attempt in range(retries + 1):
        async with gate:
            reply = (await backend.complete([request]))[0]
        if reply.error is None:
            labels, reason = parse_labels(reply.text, count, allowed)
            if labels is not None:
                keep(backend, request, reply)
                return labels, attempt + 1, reasons
            reasons.append(f"{reason}: {(reply.text or '')[:80]!r}")
        else:
            reasons.append(reply.error)
    return None, retries + 1, reasons


async def score_importance(query_id: str, query: str, nuggets: list[str], backend: Backend,
                           gate: asyncio.Semaphore, retries: int = BankGenerationOptions.retries) -> Labelled:
    """`vital`/`okay` for every nugget of one query (nuggetizer's scorer prompt, windows of 10)."""
    spec = nuggetizer_prompts()["score"]
    out = Labelled([])
    for start in range(0, len(nuggets), spec["window"]):
        window = nuggets[start:start + spec["window"]]
        prompt = fill(spec["user"], query=query, nuggets=python_list(window), num_nuggets=len(window))
        request = Request(query_id, "", "", prompt, "", "", 256, system=spec["system"], step="importance")
        labels, calls, reasons = await ask_labels(backend, gate, request, len(window), IMPORTANCE, retries)
        out.calls += calls
        if labels is None:
            out.failures.append(f"nuggets {start + 1}-{start + len(window)}: {reasons[-1]}")
        out.labels.extend(labels or [None] * len(window))
    return out


def provenance(model: str, params: dict[str, Any]) -> dict[str, Any]:
    """What the bank records about its importance labels."""
    spec = nuggetizer_prompts()
    return {"prompt": spec["score"]["version"], "source": spec["source"], "window": spec["score"]["window"],
            "model": model, "params": params}
