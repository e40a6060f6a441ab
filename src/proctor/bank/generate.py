"""Generate question (or nugget) banks with an LLM (003 Table 1, 004 Table 1): one prompt per query (DL) or
per query subtopic (CAR, query text "Title / Subtopic"), replies parsed robustly, retried when unusable,
duplicates removed, ids as the workbench computes them, and the prompt, model, parameters and time
recorded in the bank."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from proctor.bank.importance import provenance, score_importance
from proctor.bank.parse import extract_items
from proctor.errors import InputError
from proctor.io.ids import item_id
from proctor.io.queries import read_queries
from proctor.io.textfile import iter_jsonl
from proctor.llm.base import Backend, Request
from proctor.llm.cache import Recording, keep
from proctor.options.banks import BankGenerationOptions
from proctor.outputs import file_target, write_text
from proctor.store import now
from proctor.store.response_cache import ResponseCache

if TYPE_CHECKING:
    from proctor.llm.config import BackendConfig


@dataclass(frozen=True)
class Topic:
    """What one bank line is generated for."""

    query_id: str
    facet_id: str | None
    title: str
    subtopic: str | None = None

    @property
    def text(self) -> str:
        """The query text as the bank records it ("Title / Subtopic" for CAR)."""
        return f"{self.title} / {self.subtopic}" if self.subtopic else self.title


@dataclass
class Outcome:
    """Generated lines and the topics that never gave a usable reply."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0
    importance_failures: list[dict[str, Any]] = field(default_factory=list)
    """Topics with nuggets left without importance (no usable scorer reply)."""


def prompts() -> dict[str, Any]:
    """The packaged generation prompts."""
    text = resources.files("proctor.bank").joinpath("templates", "generate.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def read_topics(path: str | Path, style: str) -> list[Topic]:
    """DL: any query file. CAR: JSONL `{query_id, facet_id, title, subtopic}` or `{..., text: "Title / Sub"}`."""
    if style == "dl":
        return [Topic(qid, None, text) for _, qid, text in read_queries(path)]
    topics = []
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict) or "query_id" not in obj or "facet_id" not in obj:
            raise InputError(str(path), line, "CAR topics need query_id, facet_id and title/subtopic (or text)")
        title, subtopic = obj.get("title"), obj.get("subtopic")
        if not (isinstance(title, str) and isinstance(subtopic, str)):
            text = obj.get("text") or obj.get("query_text")
            if not isinstance(text, str) or " / " not in text:
                raise InputError(str(path), line, "expected title and subtopic, or text \"Title / Subtopic\"")
            title, _, subtopic = text.partition(" / ")
        topics.append(Topic(str(obj["query_id"]), str(obj["facet_id"]), title.strip(), subtopic.strip()))
    return topics


def render(topic: Topic, style: str, kind: str, n: int) -> str:
    """The generation prompt for one topic, JSON instruction appended."""
    table = prompts()
    text = table[style][kind].replace("{query_title}", topic.title).replace("{n}", str(n))
    if topic.subtopic is not None:
        text = text.replace("{query_subtopic}", topic.subtopic)
    return text + table["json_instruction"][kind]


async def generate(topics: list[Topic], backend: Backend, *, style: str, kind: str, n: int,
                   retries: int = BankGenerationOptions.retries,
                   progress=None, importance: bool = False) -> Outcome:
    """Generate every topic's items (up to `n`), concurrently as the backend allows; with `importance`, then
    label every nugget vital/okay (`proctor.bank.importance`)."""
    outcome = Outcome()
    gate = asyncio.Semaphore(max(1, backend.concurrency))
    item_kind = "nugget" if kind == "nuggets" else "question"
    params = {**backend.params(), "n": n, "style": style, "kind": kind}

    async def one(topic: Topic) -> None:
        prompt = render(topic, style, kind, n)
        reasons = []
        for _attempt in range(retries + 1):
            request = Request(topic.query_id, "", "", prompt, "", "", 1024)
            async with gate:
                reply = (await backend.complete([request]))[0]
            outcome.attempts += 1
            items = None if reply.error else extract_items(reply.text)
            if items:
                keep(backend, request, reply)
                line = _line(topic, items[:n], item_kind, prompt, backend.model, params, reply.info.get("time"))
                if importance and item_kind == "nugget":
                    await _label(line, topic, backend, gate, retries, outcome)
                outcome.lines.append(line)
                break
            reasons.append(reply.error or f"unusable reply: {(reply.text or '')[:80]!r}")
        else:
            outcome.failures.append({"query_id": topic.query_id, "facet_id": topic.facet_id, "reasons": reasons})
        if progress is not None:
            progress.update(1)

    await asyncio.gather(*(one(t) for t in topics))
    order = {(t.query_id, t.facet_id): i for i, t in enumerate(topics)}
    outcome.lines.sort(key=lambda line: order[(line["query_id"], line["facet_id"])])
    return outcome


async def _label(line: dict[str, Any], topic: Topic, backend: Backend, gate: asyncio.Semaphore, retries: int,
                 outcome: Outcome) -> None:
    """Add nuggetizer's vital/okay importance to a generated line's nuggets; failures are reported."""
    texts = [item["nugget_text"] for item in line["items"]]
    labelled = await score_importance(topic.query_id, topic.text, texts, backend, gate, retries)
    outcome.attempts += labelled.calls
    for item, label in zip(line["items"], labelled.labels, strict=True):
        if label is not None:
            item["importance"] = label
    line["info"]["importance"] = provenance(backend.model, backend.params())
    if labelled.failures:
        outcome.importance_failures.append({"query_id": topic.query_id, "facet_id": topic.facet_id,
                                            "reasons": labelled.failures})


def _line(topic: Topic, items: list[str], kind: str, prompt: str, model: str, params: dict,
          time: str | None = None) -> dict[str, Any]:
    """One bank line; `time`: when the reply was received (a cached reply's first receipt), else now."""
    id_key, text_key = ("nugget_id", "nugget_text") if kind == "nugget" else ("question_id", "question_text")
    return {
        "query_id": topic.query_id, "facet_id": topic.facet_id, "test_collection": "proctor",
        "query_text": topic.text,
        "info": {"generator": "proctor bank generate", "prompt": prompt, "prompt_version": prompts()["version"],
                 "model": model, "params": params, "time": time or now(), "prompt_target": f"{kind}s"},
        "items": [{"query_id": topic.query_id, "facet_id": topic.facet_id, id_key: item_id(topic.query_id, text,
                                                                                           topic.facet_id),
                   text_key: text} for text in items],
    }


def generate_bank(topics: list[tuple[str, str]], llm: str, *, kind: str = "questions", n: int = 10,
                    style: str = BankGenerationOptions.style, importance: bool = False,
                    retries: int = BankGenerationOptions.retries, **backend: Any) -> Outcome:
    """Generate questions (or nuggets, with vital/okay `importance`) for `(query_id, text)` topics with a
    text-generating backend (`BackendConfig` fields in `backend`)."""
    from proctor.errors import UsageError
    from proctor.llm.config import BackendConfig

    if llm.split(":")[0] not in ("openai", "hf", "llamacpp"):
        raise UsageError("bank generation needs a text-generating backend: openai:MODEL, hf:PATH, llamacpp:PATH")
    config = BackendConfig(spec=llm, **backend)
    config.check()
    engine, cache = cached_backend(config, "generate")

    async def go() -> Outcome:
        try:
            return await generate([Topic(qid, None, text) for qid, text in topics], engine, style=style, kind=kind,
                                  n=n, retries=retries, importance=importance)
        finally:
            await engine.aclose()

    try:
        return asyncio.run(go())
    finally:
        if cache is not None:
            cache.close()


def cached_backend(config: BackendConfig, method: str) -> tuple[Backend, ResponseCache | None]:
    """The configuration's backend; when it names a response cache folder (`cache_dir`), one that answers from
    and keeps its usable replies there (`proctor.llm.cache.Recording`), with that cache (the caller closes it)."""
    cache = ResponseCache.in_folder(config.cache_dir) if config.cache_dir else None
    try:
        backend = config.build(method)
    except BaseException:
        if cache is not None:
            cache.close()
        raise
    if cache is None:
        return backend, None
    return Recording(backend, cache, refresh=config.cache_refresh), cache


def write_bank(lines: list[dict[str, Any]], out: str | Path) -> None:
    """Write bank lines (the workbench's current `items` format), atomically."""
    write_text(file_target(out), "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
