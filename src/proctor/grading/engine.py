"""The engine: schedules the pairs of one planned step, answers what it can from the response cache, sends
the rest to the backend in bounded concurrent batches, parses every reply with the method's parser, and
commits grades (with their cache entries) to the grade set as they complete — so a crash, `kill -9` or
Ctrl-C loses at most the replies not yet committed, and running the same command again resumes."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from proctor.grading.plan import Plan, WorkItem
from proctor.grading.progress import Progress
from proctor.grading.prompting import render, similarity_request
from proctor.grading.replies import Replies
from proctor.llm.base import Backend, Reply
from proctor.llm.cache import cache_keys, cacheable, from_cache
from proctor.llm.health import BackendUnavailable, Breaker, check_endpoint
from proctor.methods import Method
from proctor.methods.base import CORRECT, FAILED, PREFILTERED
from proctor.options.grading import EngineOptions, GradingOptions
from proctor.options.model import borrow
from proctor.options.numeric import check_numbers
from proctor.records import Grade
from proctor.store import Store

CHUNK = 256


@dataclass
class GradeOptions:
    """What to grade and how."""

    depth: int = borrow(GradingOptions, "depth")
    max_queries: int | None = None
    max_passages: int | None = None
    bank: str | None = None
    """`NAME` or `NAME@VERSION` of the bank whose questions are graded (default: the store's only bank)."""
    commit_every: int = 4096
    """At most this many replies wait for a commit (commits are otherwise timed: larger at higher rates)."""
    commit_seconds: float = 0.2
    """Every received reply is committed (with its cache entry) within this many seconds: a reply is committed
    once it has waited half of it (checked at least every quarter)."""
    max_attempts: int = borrow(GradingOptions, "max_attempts")
    """A pair that failed this many times (across runs) is kept as failed and no longer retried."""
    prefilter: Backend | None = None
    prefilter_below: float | None = None
    progress: bool | None = None
    progress_every: float = borrow(GradingOptions, "progress_every")
    """Seconds between progress log lines when standard error is not a terminal (and no bar was asked for)."""
    verify: str = borrow(GradingOptions, "verify")
    """qa: check extracted answers against the answer key by `edit-distance` or by asking the `llm` (declared
    steps, `proctor.methods.steps`)."""
    engine: str = borrow(EngineOptions, "engine")
    """`local` (in-process) or `ray` (Ray Data workers call the backend; this process writes the store)."""
    ray_address: str | None = borrow(EngineOptions, "ray_address")
    ray_workers: int | None = borrow(EngineOptions, "ray_workers")
    backend_config: Any = None
    """The backend configuration workers build their own backends from (`--engine ray`)."""
    method_name: str | None = None
    guard: str | None = None
    """`detect`: pool passages that address the judge are flagged and not graded; `harden`: the prompts fence the
    passage as data (`proctor.grading.guards`)."""
    reply_cache: Any = None
    """A response cache of its own (`proctor.store.ResponseCache`, `--cache-dir`) instead of the store's."""
    refresh_cache: bool = False
    """Ask again instead of answering from the response cache; the new replies are kept over the old."""

    def __post_init__(self) -> None:
        """Numbers out of range (NaN, infinities, 0 passages, ...) are refused here, before any work."""
        check_numbers(vars(self))


@dataclass
class Summary:
    """What one step of a grading run did."""

    method: str
    model: str
    grade_set: str = ""
    pairs: int = 0
    already_graded: int = 0
    given_up: int = 0
    graded: int = 0
    unjudgeable: int = 0
    """Pool passages without text in the store: never graded."""
    by_status: Counter = field(default_factory=Counter)
    failures: int = 0
    calls: int = 0
    cached: int = 0
    tokens: int = 0
    truncated: int = 0
    elapsed: float = 0.0
    interrupted: bool = False
    errors: Counter = field(default_factory=Counter)
    servers: list[dict[str, Any]] = field(default_factory=list)
    """Per-server figures of a fleet (the backend's, over the whole command)."""
    load_seconds: float | None = None
    """Seconds loading a local model before the clock started (`grading.similarity`, `Engine.arun`), apart from
    `elapsed`."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        rate = self.graded / self.elapsed if self.elapsed > 0 else None
        return {"grade_set": self.grade_set, "method": self.method, "model": self.model, "pairs_in_pool": self.pairs,
                "already_graded": self.already_graded, "given_up": self.given_up, "graded_now": self.graded,
                "unjudgeable_passages": self.unjudgeable,
                "by_status": dict(self.by_status),
                "failures": self.failures, "llm_calls": self.calls, "cache_hits": self.cached, "tokens": self.tokens,
                "truncated_contexts": self.truncated, "seconds": round(self.elapsed, 3),
                "pairs_per_second": rate, "interrupted": self.interrupted,
                "failure_reasons": dict(self.errors.most_common(10)),
                **({"servers": self.servers} if self.servers else {}),
                **({"model_load_seconds": self.load_seconds} if self.load_seconds is not None else {})}


class Engine:
    """Grades the planned pairs of one step of one grade set with one backend."""

    def __init__(self, store: Store, method: Method, backend: Backend, plan: Plan, *, grade_set: str,
                 step: str | None = None, options: GradeOptions | None = None) -> None:
        self.store, self.method, self.backend, self.plan = store, method, backend, plan
        self.grade_set, self.step = grade_set, step or method.name
        self.options = options or GradeOptions()
        self.cached_replies = backend.uses_cache
        self.replies = Replies(store, self.options.reply_cache, self.options.refresh_cache)
        self.checked = self.options.reply_cache is None
        """Whether the endpoint was checked (before the run; with a cache of its own, before the first request:
        a run the cache answers whole needs no endpoint)."""
        self.params = {**backend.params(), "max_tokens": method.template.max_tokens}
        self.results = dict(plan.done)
        """`{(query, passage, item): (grade, answer)}`: the step's usable grades, earlier and new."""
        self.breaker = Breaker()
        """Stops the run on fatal failures; until the server first answers, one call is in flight."""
        self.early_load: asyncio.Future | None = None
        """The local model's load, begun by the runner while it planned the step (`runner.begin_load`), or None."""

    async def arun(self) -> Summary:
        """Grade every planned pair that lacks a grade; the backend stays open for further steps. A local model
        (`load`) is loaded before the clock starts, its load reported apart (`Summary.load_seconds`)."""
        seconds = await self._load()
        summary, progress = self._started()
        summary.load_seconds = None if seconds is None else round(seconds, 3)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, stop.set)
        self._buffer: list[Grade] = []
        self._cache_buffer: list[tuple[str, str, str, dict]] = []
        queue: asyncio.Queue = asyncio.Queue(maxsize=2 * self.backend.concurrency)
        self._failure: BaseException | None = None
        self._probe = asyncio.Lock()
        workers = [asyncio.create_task(self._work(queue, stop, summary, progress))
                   for _ in range(self.backend.concurrency)]
        committer = asyncio.create_task(self._commit_regularly())
        try:
            for chunk in _chunks(self.plan.work(self.store), max(CHUNK, self.backend.batch_size)):
                if stop.is_set():
                    break
                for batch in await self._prepare(chunk, summary, progress):
                    if stop.is_set():
                        break
                    await queue.put(batch)
                self._maybe_flush()
            for _ in workers:
                await queue.put(None)
            _, running = await asyncio.wait(workers, timeout=None if not stop.is_set() else 5.0)
            for task in running:
                task.cancel()
            if self._failure is not None:
                raise self._failure
        finally:
            for task in (*workers, committer):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await committer  # re-raises what stopped it (a full disk), after which nothing more is committed
            if self._failure is None or isinstance(self._failure, BackendUnavailable):  # a dead endpoint: keep
                self._flush()  # what the cache answered, so what is left is exactly what it cannot answer
            progress.close()
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)
        if self.breaker.tripped:
            raise BackendUnavailable(self.breaker.message(self.backend.model))
        summary.interrupted = stop.is_set()
        summary.elapsed = progress.elapsed
        summary.calls, summary.tokens, summary.cached = progress.calls, progress.tokens, progress.cached
        return summary

    async def _load(self) -> float | None:
        """The seconds loading the backend's local model took (`load`): the load the runner began while it planned
        the step (`early_load`), else one now when there is something to grade; None for a backend without one."""
        if self.early_load is not None:
            return await self.early_load
        load = getattr(self.backend, "load", None)
        left = self.plan.pairs - self.plan.already - self.plan.given_up
        return await asyncio.to_thread(load) if load is not None and left > 0 else None

    def _started(self) -> tuple[Summary, Progress]:
        """The step's summary and its progress, whose clock starts now."""
        summary = Summary(self.step, self.backend.model, self.grade_set, self.plan.pairs, self.plan.already,
                          self.plan.given_up, unjudgeable=self.plan.unjudgeable)
        return summary, Progress(self.plan.pairs - self.plan.already - self.plan.given_up, self.options.progress,
                                 f"{self.step} · {self.backend.model}", every=self.options.progress_every)

    async def _prepare(self, chunk: list[WorkItem], summary: Summary, progress: Progress) -> list[list]:
        """Pre-filter, render, answer from the cache; returns the batches still to send."""
        if self.options.prefilter is not None and self.options.prefilter_below is not None:
            chunk = await self._prefilter(chunk, summary, progress)
        rest, cached, replies = [], [], []
        prepared = [(item, *render(self.method, self.step, item, self.backend)) for item in chunk]
        keys = cache_keys(self.backend.kind, self.backend.model, [request.text() for _, request, _ in prepared],
                          self.params) if self.cached_replies else []
        hits = self.replies.lookup(keys)
        for n, (item, request, truncated) in enumerate(prepared):
            key = keys[n] if keys else None
            reply = from_cache(hits[key]) if key is not None and key in hits else None
            if reply is not None and self._usable(reply, item):
                cached.append((item, request, truncated, None))
                replies.append(reply)
            else:  # not cached, or cached by an older release although it cannot be parsed: ask again
                rest.append((item, request, truncated, key))
        if cached:
            self._collect_replies(cached, replies, summary, progress)
        size = self.backend.batch_size
        return [rest[i:i + size] for i in range(0, len(rest), size)]

    def _usable(self, reply: Reply, item: WorkItem) -> bool:
        """A cached reply counts only when it parses (stores of 0.1.0 also cached empty or unparseable ones)."""
        parsed = self.method.parse(reply.text, probabilities=reply.probabilities, score=reply.score,
                                   gold_answers=item.answers)
        return parsed.status != FAILED

    async def _prefilter(self, chunk: list[WorkItem], summary: Summary, progress: Progress) -> list[WorkItem]:
        prefilter = self.options.prefilter
        assert prefilter is not None and self.options.prefilter_below is not None
        replies = await prefilter.complete([similarity_request(self.step, item) for item in chunk])
        keep = []
        for item, reply in zip(chunk, replies, strict=True):
            if reply.score is not None and reply.score < self.options.prefilter_below:
                extra = {"similarity": round(reply.score, 6), "prefilter_below": self.options.prefilter_below,
                         "prefilter": prefilter.model}
                self._add(Grade(item.query_id, item.passage_id, item.question_id, self.step, self.backend.model,
                                self.method.template.version, 0, PREFILTERED, extra=extra))
                summary.by_status[PREFILTERED] += 1
                summary.graded += 1
                progress.update(1)
            else:
                keep.append(item)
        return keep

    async def _call(self, batch: list) -> tuple[list, list[Reply]]:
        try:
            replies = await self.backend.complete([request for _, request, _, _ in batch])
        except Exception as exc:  # a backend that raises still yields recorded failures
            replies = [Reply(error=f"{type(exc).__name__}: {exc}") for _ in batch]
        return batch, replies

    async def _guarded_call(self, batch: list, stop: asyncio.Event) -> tuple[list, list[Reply]] | None:
        """Send a batch; until the server has answered once, one batch at a time (a dead server costs one
        request, not `concurrency`). None when the run stopped while this batch waited."""
        if not self.breaker.answered:
            async with self._probe:
                if stop.is_set():
                    return None
                if not self.breaker.answered:
                    if not self.checked:
                        await check_endpoint(self.backend)
                        self.checked = True
                    return await self._call(batch)
        return await self._call(batch)

    async def _work(self, queue: asyncio.Queue, stop: asyncio.Event, summary: Summary, progress: Progress) -> None:
        """One of `concurrency` workers: takes the next batch as soon as its last one is answered (so every
        connection stays busy), records the replies; after a stop or a failure it only drains the queue."""
        while (batch := await queue.get()) is not None:
            if stop.is_set() or self._failure is not None:
                continue
            try:
                if (answer := await self._guarded_call(batch, stop)) is None:
                    continue
                self._collect_replies(*answer, summary, progress)
                if self.breaker.tripped:
                    stop.set()
                self._maybe_flush()
            except Exception as exc:  # a full disk: nothing more is committed; the run ends with this error
                self._failure = exc

    def _collect_replies(self, batch: list, replies: list[Reply], summary: Summary, progress: Progress) -> None:
        failures = tokens = cached = 0
        for (item, _, truncated, key), reply in zip(batch, replies, strict=True):
            grade = self._record(item, reply, truncated, summary)
            if not reply.cached:
                self.breaker.observe(reply)
            failures += grade.parse_status == FAILED
            tokens += reply.tokens
            cached += reply.cached
            if key is not None and cacheable(reply) and grade.parse_status != FAILED:
                self._cache_buffer.append((key, self.backend.kind, self.backend.model, reply.to_cache()))
        asked = len(batch) - cached
        calls = asked if self.backend.kind in ("openai", "llamacpp") else int(asked > 0)
        progress.update(len(batch), failures=failures, tokens=tokens, cached=cached, calls=calls)

    def _record(self, item: WorkItem, reply: Reply, truncated: bool, summary: Summary) -> Grade:
        if reply.error is not None:
            parsed_grade, status, answer, extra = None, FAILED, None, {"error": reply.error}
            summary.errors[reason_of(reply.error)] += 1
        else:
            parsed = self.method.parse(reply.text, probabilities=reply.probabilities, score=reply.score,
                                       gold_answers=item.answers)
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
        grade = Grade(item.query_id, item.passage_id, item.question_id, self.step, self.backend.model,
                      self.method.template.version, parsed_grade, status, raw_reply=reply.text, answer=answer,
                      correct=(status == CORRECT) if self.method.kind == "qa" and parsed_grade is not None else None,
                      extra=extra or None)
        self._add(grade)
        summary.by_status[status] += 1
        summary.graded += 1
        summary.failures += status == FAILED
        return grade

    def _add(self, grade: Grade) -> None:
        if not self._buffer:
            self._oldest = time.monotonic()
        self._buffer.append(grade)
        if grade.parse_status != FAILED:
            self.results[(grade.query_id, grade.passage_id, grade.question_id)] = (grade.grade, grade.answer,
                                                                                   grade.parse_status)

    async def _commit_regularly(self) -> None:
        """Commit what has arrived within `commit_seconds`, also while every request is still waiting."""
        while True:
            await asyncio.sleep(self.options.commit_seconds / 4)
            self._maybe_flush()

    def _maybe_flush(self) -> None:
        """Commit when `commit_every` replies wait, or the oldest has waited half of `commit_seconds`."""
        if len(self._buffer) >= self.options.commit_every or (
                self._buffer and time.monotonic() - self._oldest >= self.options.commit_seconds / 2):
            self._flush()

    def _flush(self) -> None:
        if not self._buffer and not self._cache_buffer:
            return
        grades = self._buffer
        self.replies.commit(lambda: self.store.grades.upsert_grades(self.grade_set, grades, attempt=True),
                            self._cache_buffer)
        self._buffer, self._cache_buffer = [], []


def reason_of(error: str) -> str:
    """The part of a backend error that groups failures: what came back, not the attempt count."""
    reason = re.sub(r"^gave up after \d+ attempts: ", "", error)
    return reason[:100]


def _chunks(items: Iterator[WorkItem], size: int) -> Iterator[list[WorkItem]]:
    while chunk := list(islice(items, size)):
        yield chunk
