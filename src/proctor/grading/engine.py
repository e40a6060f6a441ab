"""The grading engine: works out which (passage, question) pairs of the judgment pool still lack a grade
for this method and model, renders and fits their prompts (the question is never cut, the context is),
answers what it can from the response cache, sends the rest to the backend in bounded concurrent batches,
parses every reply, and commits grades as they complete — so a crash, `kill -9` or Ctrl-C loses at most
the replies in flight, and running the same command again resumes."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from proctor.errors import UsageError
from proctor.grading.pool import judgment_pool
from proctor.grading.progress import Progress
from proctor.llm.base import Backend, Reply, Request
from proctor.llm.cache import ResponseCache, cache_key
from proctor.methods import Method
from proctor.methods.base import CORRECT, FAILED, PREFILTERED
from proctor.methods.qa import verified
from proctor.store import Grade, Store

CHUNK = 256


@dataclass
class GradeOptions:
    """What to grade and how."""

    depth: int = 20
    max_queries: int | None = None
    max_passages: int | None = None
    bank: str | None = None
    commit_every: int = 256
    commit_seconds: float = 1.0
    prefilter: Backend | None = None
    prefilter_below: float | None = None
    progress: bool | None = None
    verify: str = "edit-distance"
    """qa: check extracted answers against the answer key by `edit-distance` or by asking the `llm`."""
    variables: Callable[[str, str, str], dict[str, str] | None] | None = None
    """Extra template variables per (query, passage, item) from earlier steps; None skips the pair."""


@dataclass(frozen=True)
class WorkItem:
    """One pair to grade."""

    query_id: str
    passage_id: str
    question_id: str
    question: str
    passage: str
    answers: tuple[str, ...] | None
    variables: dict[str, str] = field(default_factory=dict)


@dataclass
class Summary:
    """What a grading run did."""

    method: str
    model: str
    pairs: int = 0
    already_graded: int = 0
    graded: int = 0
    by_status: Counter = field(default_factory=Counter)
    failures: int = 0
    calls: int = 0
    cached: int = 0
    tokens: int = 0
    truncated: int = 0
    elapsed: float = 0.0
    interrupted: bool = False
    errors: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        rate = self.graded / self.elapsed if self.elapsed > 0 else None
        return {"method": self.method, "model": self.model, "pairs_in_pool": self.pairs,
                "already_graded": self.already_graded, "graded_now": self.graded, "by_status": dict(self.by_status),
                "failures": self.failures, "llm_calls": self.calls, "cache_hits": self.cached, "tokens": self.tokens,
                "truncated_contexts": self.truncated, "seconds": round(self.elapsed, 3),
                "pairs_per_second": rate, "interrupted": self.interrupted,
                "failure_reasons": dict(self.errors.most_common(10))}


class Engine:
    """Grades the pool for one method with one backend."""

    def __init__(self, store: Store, method: Method, backend: Backend, options: GradeOptions | None = None) -> None:
        self.store, self.method, self.backend = store, method, backend
        self.options = options or GradeOptions()
        self.cache = ResponseCache(store) if backend.uses_cache else None
        self.version = method.template.version
        self.params = {**backend.params(), "max_tokens": method.template.max_tokens}

    # -- planning ------------------------------------------------------------------------------------
    def plan(self) -> tuple[list[tuple[str, list[str], list[tuple[str, str, list[str] | None]]]], int, int]:
        """Queries with their pool passages and items; the number of pairs, and of pairs already graded."""
        items = self._items()
        if not items and self.method.items in ("query", "criteria"):
            raise UsageError(f"{self.store.path}: no query texts in the store; method {self.method.name} shows the "
                             "query to the LLM (import them with `proctor import queries FILE`)")
        if not items:
            raise UsageError(f"{self.store.path}: no {self.method.items}s in the store's banks "
                             f"(import a bank with `proctor import bank`); method {self.method.name} grades "
                             f"{self.method.items}s")
        pool = judgment_pool(self.store, self.options.depth)
        queries = sorted(q for q in pool if q in items)
        if self.options.max_queries is not None:
            queries = queries[: self.options.max_queries]
        done = self.store.graded_keys(self.method.name, self.backend.model)
        plan, total, already = [], 0, 0
        selected = self.options.variables
        for qid in queries:
            passages = pool[qid][: self.options.max_passages] if self.options.max_passages else pool[qid]
            plan.append((qid, passages, items[qid]))
            pairs = [(p, item[0]) for p in passages for item in items[qid]
                     if selected is None or selected(qid, p, item[0]) is not None]
            total += len(pairs)
            already += sum(1 for p, item_id in pairs if (qid, p, item_id) in done)
        self._done = done
        return plan, total, already

    def _items(self) -> dict[str, list[tuple[str, str, list[str] | None]]]:
        """What is graded per passage of each query: bank items, the query itself, or the four criteria."""
        kind = self.method.items
        if kind in ("question", "nugget"):
            return self.store.bank_items(kind, self.options.bank)
        queries = {qid: text for qid, text in self.store.queries().items() if text}
        if kind == "query":
            return {qid: [("", text, None)] for qid, text in queries.items()}
        criteria = self.method.template.extra["criteria"]
        return {qid: [(name, description, None) for name, description in criteria.items()] for qid in queries}

    def work(self, plan) -> Iterator[WorkItem]:
        """The pairs still to grade, lazily (memory stays flat however large the pool)."""
        texts = self.store.passage_texts()
        queries = self.store.queries()
        variables = self.options.variables
        for qid, passages, items in plan:
            for pid in passages:
                text = texts.get(pid)
                for item_id, question, answers in items:
                    if (qid, pid, item_id) in self._done:
                        continue
                    extra = {"query": queries.get(qid) or qid, "criterion_name": item_id}
                    if variables is not None:
                        more = variables(qid, pid, item_id)
                        if more is None:
                            continue
                        extra.update(more)
                    yield WorkItem(qid, pid, item_id, question, text or "", tuple(answers) if answers else None,
                                   extra)

    # -- running -------------------------------------------------------------------------------------
    def run(self) -> Summary:
        """Grade everything that lacks a grade, then release the backend; returns the summary (also after
        Ctrl-C)."""
        async def run_and_close() -> Summary:
            try:
                return await self.arun()
            finally:
                await self.backend.aclose()

        return asyncio.run(run_and_close())

    async def arun(self) -> Summary:
        """`run` inside a running event loop; the backend stays open for further steps."""
        plan, total, already = self.plan()
        summary = Summary(self.method.name, self.backend.model, pairs=total, already_graded=already)
        progress = Progress(total - already, self.options.progress, f"{self.method.name} · {self.backend.model}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, stop.set)
        self._buffer: list[Grade] = []
        self._cache_buffer: list[tuple[str, Reply]] = []
        self._pending_cached: list = []
        self._last_commit = time.monotonic()
        pending: set[asyncio.Task] = set()
        try:
            for chunk in _chunks(self.work(plan), CHUNK):
                if stop.is_set():
                    break
                batches = await self._prepare(chunk, summary, progress)
                if self._pending_cached:
                    pending.add(asyncio.create_task(self._verify_cached(self._pending_cached)))
                    self._pending_cached = []
                for batch in batches:
                    while len(pending) >= self.backend.concurrency and not stop.is_set():
                        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                        self._collect(done, summary, progress)
                    if stop.is_set():
                        break
                    pending.add(asyncio.create_task(self._call(batch)))
                self._maybe_flush()
            if pending:
                done, pending = await asyncio.wait(pending, timeout=None if not stop.is_set() else 5.0)
                self._collect(done, summary, progress)
                for task in pending:
                    task.cancel()
        finally:
            self._flush()
            progress.close()
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)
        summary.interrupted = stop.is_set()
        summary.elapsed = progress.elapsed
        summary.calls, summary.tokens, summary.cached = progress.calls, progress.tokens, progress.cached
        return summary

    async def _prepare(self, chunk: list[WorkItem], summary: Summary, progress: Progress):
        """Pre-filter, render and fit prompts, answer from the cache; returns the batches still to send."""
        if self.options.prefilter is not None and self.options.prefilter_below is not None:
            chunk = await self._prefilter(chunk, summary, progress)
        prepared = [self._request(item) for item in chunk]
        if self.cache is not None and prepared:
            keys = [cache_key(self.backend.kind, self.backend.model, r.text(), self.params) for _, r, _ in prepared]
            hits = self.cache.get_many(keys)
            rest, cached = [], []
            for (item, request, truncated), key in zip(prepared, keys, strict=True):
                if key not in hits:
                    rest.append((item, request, truncated, key))
                elif self.method.kind == "qa" and self.options.verify == "llm":
                    cached.append(((item, request, truncated, None), hits[key]))  # still to be verified
                else:
                    self._record(item, hits[key], truncated, summary)
                    progress.update(1, cached=1)
            if cached:
                self._pending_cached = cached
        else:
            rest = [(item, request, truncated, None) for item, request, truncated in prepared]
        size = self.backend.batch_size
        return [rest[i:i + size] for i in range(0, len(rest), size)]

    async def _prefilter(self, chunk: list[WorkItem], summary: Summary, progress: Progress) -> list[WorkItem]:
        requests = [Request(i.query_id, i.passage_id, i.question_id, i.question, i.question, i.passage)
                    for i in chunk]
        replies = await self.options.prefilter.complete(requests)  # type: ignore[union-attr]
        keep = []
        for item, reply in zip(chunk, replies, strict=True):
            if reply.score is not None and reply.score < self.options.prefilter_below:  # type: ignore[operator]
                extra = {"similarity": round(reply.score, 6), "prefilter_below": self.options.prefilter_below,
                         "prefilter": self.options.prefilter.model}  # type: ignore[union-attr]
                grade = Grade(item.query_id, item.passage_id, item.question_id, self.method.name,
                              self.backend.model, self.version, 0, PREFILTERED, extra=extra)
                self._buffer.append(grade)
                summary.by_status[PREFILTERED] += 1
                summary.graded += 1
                progress.update(1)
            else:
                keep.append(item)
        return keep

    def _request(self, item: WorkItem) -> tuple[WorkItem, Request, bool]:
        template = self.method.template
        before, after = template.parts(item.question, item.variables)
        if "{context}" in template.template:
            context, truncated = self.backend.fit(before, item.passage, after)
        else:
            context, truncated = "", False
        return item, Request(item.query_id, item.passage_id, item.question_id, before + context + after,
                             item.question, context or item.passage, template.max_tokens, template.system), truncated

    async def _call(self, batch):
        try:
            replies = await self.backend.complete([request for _, request, _, _ in batch])
            if self.method.kind == "qa" and self.options.verify == "llm":
                await self._verify(batch, replies)
        except Exception as exc:  # a backend that raises still yields recorded failures
            replies = [Reply(error=f"{type(exc).__name__}: {exc}") for _ in batch]
        return batch, replies

    async def _verify_cached(self, cached):
        """Cached QA replies still go through LLM verification (itself cached)."""
        batch, replies = [entry for entry, _ in cached], [reply for _, reply in cached]
        await self._verify(batch, replies)
        return batch, replies

    async def _verify(self, batch, replies: list[Reply]) -> None:
        """Ask the backend whether each extracted answer is equivalent to the gold answers (000 §4.2.1)."""
        template = self.method.template.extra["verify_template"]
        todo = [(item, reply) for (item, _, _, _), reply in zip(batch, replies, strict=True)
                if reply.error is None and item.answers and reply.text and reply.text.strip()]
        if not todo:
            return
        requests = [Request(item.query_id, item.passage_id, item.question_id,
                            template.replace("{answer}", reply.text.strip()).replace("{question}", item.question)
                            .replace("{gold}", " / ".join(item.answers)), item.question, "", 8)
                    for item, reply in todo]
        keys = [cache_key(self.backend.kind, self.backend.model, r.text(), self.params) for r in requests]
        hits = self.cache.get_many(keys) if self.cache is not None else {}
        missing = [i for i, key in enumerate(keys) if key not in hits]
        asked = await self.backend.complete([requests[i] for i in missing]) if missing else []
        verdicts = dict(hits)
        for i, verdict in zip(missing, asked, strict=True):
            verdicts[keys[i]] = verdict
            if verdict.error is None and self.cache is not None:
                self._cache_buffer.append((keys[i], verdict))
        for (_, reply), key in zip(todo, keys, strict=True):
            verdict = verdicts[key]
            reply.info["verifier_reply"] = verdict.text if verdict.error is None else None
            if verdict.error is not None:
                reply.info["verifier_error"] = verdict.error

    def _collect(self, done: set[asyncio.Task], summary: Summary, progress: Progress) -> None:
        for task in done:
            batch, replies = task.result()
            failures = tokens = cached = 0
            for (item, _, truncated, key), reply in zip(batch, replies, strict=True):
                grade = self._record(item, reply, truncated, summary)
                failures += grade.parse_status == FAILED
                tokens += reply.tokens
                cached += reply.cached
                if key is not None and self.cache is not None and reply.error is None:
                    self._cache_buffer.append((key, reply))
            asked = len(batch) - cached
            calls = asked if self.backend.kind in ("openai", "llamacpp") else int(asked > 0)
            progress.update(len(batch), failures=failures, tokens=tokens, cached=cached, calls=calls)
        self._maybe_flush()

    def _record(self, item: WorkItem, reply: Reply, truncated: bool, summary: Summary) -> Grade:
        if reply.error is not None:
            parsed_grade, status, answer, extra = None, FAILED, None, {"error": reply.error}
            summary.errors[reply.error.split(":")[0]] += 1
        else:
            parsed = self.method.parse(reply.text, probabilities=reply.probabilities, score=reply.score,
                                       gold_answers=item.answers)
            if "verifier_reply" in reply.info:
                parsed = verified(parsed, reply.info.pop("verifier_reply"), reply.info.pop("verifier_error", None))
            parsed_grade, status, answer, extra = parsed.grade, parsed.status, parsed.answer, dict(parsed.extra)
            if status == FAILED:
                summary.errors[extra.get("reason", "unparseable")] += 1
        if truncated:
            extra["truncated"] = True
            summary.truncated += 1
        if reply.attempts > 1:
            extra["attempts"] = reply.attempts
        if reply.cached:
            extra["cached"] = True
        extra.update(reply.info)
        grade = Grade(item.query_id, item.passage_id, item.question_id, self.method.name, self.backend.model,
                      self.version, parsed_grade, status, raw_reply=reply.text, answer=answer,
                      correct=(status == CORRECT) if self.method.kind == "qa" and parsed_grade is not None else None,
                      extra=extra or None)
        self._buffer.append(grade)
        summary.by_status[status] += 1
        summary.graded += 1
        summary.failures += status == FAILED
        return grade

    def _maybe_flush(self) -> None:
        if len(self._buffer) >= self.options.commit_every or (
                self._buffer and time.monotonic() - self._last_commit >= self.options.commit_seconds):
            self._flush()

    def _flush(self) -> None:
        if not self._buffer and not self._cache_buffer:
            return
        with self.store.transaction():
            if self._buffer:
                self.store.upsert_grade_config(self.method.name, self.backend.model, self.version, {
                    "backend": self.backend.kind, "params": self.params, "source": self.method.template.source})
                self.store.upsert_grades(self._buffer)
            if self.cache is not None:
                for key, reply in self._cache_buffer:
                    self.cache.put(key, self.backend.kind, self.backend.model, reply)
        self._buffer, self._cache_buffer = [], []
        self._last_commit = time.monotonic()


def _chunks(items: Iterator[WorkItem], size: int) -> Iterator[list[WorkItem]]:
    while chunk := list(islice(items, size)):
        yield chunk

