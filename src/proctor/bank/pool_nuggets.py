"""Nuggets from a judged pool, as AutoNuggetizer creates them (castorini/nuggetizer `Nuggetizer.create`): per
query, the relevant passages in windows of 10, each window's prompt (nuggetizer's creator prompt, exact
text) updating the nugget list so far, the reply's list kept as it is and cut to `max_nuggets` (30), as
nuggetizer does (`dedup=True`: Proctor's own variant, a nugget repeated in the reply dropped before the next
window; recorded in the bank's creator info); then every nugget labelled vital/okay
(`proctor.bank.importance`), the bank keeping the creator's order (nuggetizer's `create` at d00dc3e). An
unusable reply is asked again (`retries`); a window that never gives one keeps the list as it was (as
nuggetizer does) and is reported. A text the final list holds twice is one nugget (its first place), counted
in the creator info."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from proctor.bank.generate import Outcome
from proctor.bank.importance import fill, nuggetizer_prompts, provenance, score_importance
from proctor.io.ids import item_id
from proctor.llm.base import Backend, Request
from proctor.llm.cache import keep
from proctor.methods.label_lists import parse_text_list, python_list
from proctor.options.banks import BankGenerationOptions
from proctor.store import now


@dataclass(frozen=True)
class PoolTopic:
    """One query with its relevant passages, best judged first."""

    query_id: str
    text: str
    passages: list[tuple[str, str]]


def pool_topics(queries: dict[str, str | None], judgments: dict[str, dict[str, int]],
                texts: dict[str, str | None], min_relevance: int) -> tuple[list[PoolTopic], list[str]]:
    """Queries with judged passages at `min_relevance` or more (by judgment, then passage id) that have text;
    also the ids of queries left out (no text or no such passage)."""
    topics, left_out = [], []
    for qid in sorted(judgments):
        relevant = [(pid, rel) for pid, rel in judgments[qid].items() if rel >= min_relevance and texts.get(pid)]
        passages = sorted(relevant, key=lambda pr: (-pr[1], pr[0]))
        if not passages or not queries.get(qid):
            left_out.append(qid)
            continue
        topics.append(PoolTopic(qid, str(queries[qid]), [(pid, str(texts[pid])) for pid, _ in passages]))
    return topics, left_out


def create_prompt(topic: PoolTopic, start: int, end: int, nuggets: list[str], max_nuggets: int) -> str:
    """nuggetizer's creator prompt for passages `start:end` of a topic (context lines `[i] text`)."""
    spec = nuggetizer_prompts()["create"]
    context = "\n".join(f"[{i + 1}] {text}" for i, (_, text) in enumerate(topic.passages[start:end]))
    return fill(spec["user"], query=topic.text, context=context, nuggets=python_list(nuggets),
                nuggets_length=len(nuggets), creator_max_nuggets=max_nuggets)


async def create_from_pool(topics: list[PoolTopic], backend: Backend, *,
                           max_nuggets: int = BankGenerationOptions.max_nuggets,
                           retries: int = BankGenerationOptions.retries,
                           importance: bool = True, dedup: bool = False, progress=None) -> Outcome:
    """Every topic's nuggets (and importance), concurrently across topics, windows in order within one."""
    outcome = Outcome()
    gate = asyncio.Semaphore(max(1, backend.concurrency))
    spec = nuggetizer_prompts()["create"]

    async def one(topic: PoolTopic) -> None:
        nuggets: list[str] = []
        failed: list[str] = []
        for start in range(0, len(topic.passages), spec["window"]):
            end = min(start + spec["window"], len(topic.passages))
            prompt = create_prompt(topic, start, end, nuggets, max_nuggets)
            request = Request(topic.query_id, "", "", prompt, "", "", 2048, system=spec["system"], step="create")
            reasons = []
            for _ in range(retries + 1):
                async with gate:
                    reply = (await backend.complete([request]))[0]
                outcome.attempts += 1
                found, reason = (None, reply.error) if reply.error else parse_text_list(reply.text)
                if found is not None:
                    keep(backend, request, reply)
                    nuggets = (_unique(found) if dedup else found)[:max_nuggets]
                    break
                reasons.append(f"{reason}: {(reply.text or '')[:80]!r}" if not reply.error else str(reason))
            else:
                failed.append(f"passages {start + 1}-{end}: {reasons[-1]}")
        await _finish(topic, nuggets, failed, backend, gate, retries, importance, (max_nuggets, dedup), outcome)
        if progress is not None:
            progress.update(1)

    await asyncio.gather(*(one(t) for t in topics))
    order = {t.query_id: i for i, t in enumerate(topics)}
    outcome.lines.sort(key=lambda line: order[line["query_id"]])
    return outcome


def _unique(texts: list[str]) -> list[str]:
    seen, out = set(), []
    for text in texts:
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


async def _finish(topic: PoolTopic, nuggets: list[str], failed: list[str], backend: Backend,
                  gate: asyncio.Semaphore, retries: int, importance: bool, limits: tuple[int, bool],
                  outcome: Outcome) -> None:
    """The topic's bank line (or its failure), with importance labelled."""
    max_nuggets, dedup = limits
    repeats = len(nuggets) - len(_unique(nuggets))
    nuggets = _unique(nuggets)
    if failed:
        outcome.failures.append({"query_id": topic.query_id, "facet_id": None, "reasons": failed, "windows": True})
    if not nuggets:
        return
    spec = nuggetizer_prompts()
    info: dict[str, Any] = {"generator": "proctor bank generate --from-pool", "prompt": spec["create"]["version"],
                            "source": spec["source"], "model": backend.model, "params": backend.params(),
                            "max_nuggets": max_nuggets, "window": spec["create"]["window"], "dedup": dedup,
                            "repeats_merged": repeats,
                            "passages": [pid for pid, _ in topic.passages], "time": now(), "prompt_target": "nuggets"}
    items = [{"query_id": topic.query_id, "facet_id": None, "nugget_id": item_id(topic.query_id, text),
              "nugget_text": text} for text in nuggets]
    line = {"query_id": topic.query_id, "facet_id": None, "test_collection": "proctor", "query_text": topic.text,
            "info": info, "items": items}
    if importance:
        labelled = await score_importance(topic.query_id, topic.text, nuggets, backend, gate, retries)
        outcome.attempts += labelled.calls
        for item, label in zip(items, labelled.labels, strict=True):
            if label is not None:
                item["importance"] = label
        info["importance"] = provenance(backend.model, backend.params())
        if labelled.failures:
            outcome.importance_failures.append({"query_id": topic.query_id, "facet_id": None,
                                                "reasons": labelled.failures})
    outcome.lines.append(line)
