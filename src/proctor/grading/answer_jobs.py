"""Prompts that label several items at once (nuggetizer's assignment prompt: one Python list of labels for
up to 10 nuggets) or one item of a whole answer: the jobs of response-level methods (`nugget-assign`,
`citation-support`). Same guarantees as the pair engine: replies cached (only usable ones), every reply
committed with its grades as it arrives (so a rerun resumes), failures recorded with their reason and the
raw reply, counted, retried by later runs up to `max_attempts`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from proctor.grading.engine import GradeOptions, Summary, reason_of
from proctor.grading.progress import Progress
from proctor.grading.replies import Replies
from proctor.llm.base import Backend, Reply, Request
from proctor.llm.cache import cache_key, cacheable, from_cache
from proctor.methods.base import FAILED, Template
from proctor.records import Grade
from proctor.store import Store

Parser = Callable[[str | None, int], tuple[list[tuple[int, str]] | None, str]]
"""A reply and the number of items → `[(grade, label), ...]` one per item, or `(None, reason)`."""


@dataclass(frozen=True)
class Job:
    """One prompt: items of one query graded against one context (a whole answer, or a cited sentence)."""

    query_id: str
    passage_id: str
    item_ids: tuple[str, ...]
    variables: dict[str, str]
    context: str


class LabelRunner:
    """Sends the jobs of one step of one grade set and commits their grades."""

    def __init__(self, store: Store, backend: Backend, template: Template, parser: Parser, *, grade_set: str,
                 step: str, options: GradeOptions) -> None:
        self.store, self.backend, self.template, self.parser = store, backend, template, parser
        self.grade_set, self.step, self.options = grade_set, step, options
        self.params = {**backend.params(), "max_tokens": template.max_tokens}
        self.replies = Replies(store, options.reply_cache, options.refresh_cache)

    async def run(self, jobs: list[Job], summary: Summary) -> Summary:
        """Grade every job, concurrently as the backend allows."""
        gate = asyncio.Semaphore(max(1, self.backend.concurrency))
        progress = Progress(sum(len(j.item_ids) for j in jobs), self.options.progress,
                            f"{self.step} · {self.backend.model}")

        async def one(job: Job) -> None:
            request, truncated = self._request(job)
            key = cache_key(self.backend.kind, self.backend.model, request.text(), self.params)
            reply = self._cached(key, len(job.item_ids)) if self.backend.uses_cache else None
            if reply is None:
                async with gate:
                    try:
                        reply = (await self.backend.complete([request]))[0]
                    except Exception as exc:  # a backend that raises still yields recorded failures
                        reply = Reply(error=f"{type(exc).__name__}: {exc}")
            failed = self._commit(job, reply, truncated, key, summary)
            progress.update(len(job.item_ids), failures=failed, tokens=reply.tokens, cached=int(reply.cached),
                            calls=int(not reply.cached))

        try:
            await asyncio.gather(*(one(job) for job in jobs))
        finally:
            progress.close()
        summary.elapsed = progress.elapsed
        summary.calls, summary.tokens, summary.cached = progress.calls, progress.tokens, progress.cached
        return summary

    def _request(self, job: Job) -> tuple[Request, bool]:
        before, after = self.template.parts("", job.variables)
        context, truncated = self.backend.fit(before, job.context, after)
        return Request(job.query_id, job.passage_id, ",".join(job.item_ids), before + context + after, "",
                       context, self.template.max_tokens, self.template.system, self.step), truncated

    def _cached(self, key: str, count: int) -> Reply | None:
        hit = self.replies.lookup([key]).get(key)
        if hit is None:
            return None
        reply = from_cache(hit)
        return reply if self.parser(reply.text, count)[0] is not None else None

    def _commit(self, job: Job, reply: Reply, truncated: bool, key: str, summary: Summary) -> int:
        """Record the job's grades (and cache a usable reply) in one transaction; returns how many failed."""
        labels, reason = (None, reply.error) if reply.error is not None else self.parser(reply.text, len(job.item_ids))
        extra: dict = {"window": list(job.item_ids)} if len(job.item_ids) > 1 else {}
        if truncated:
            extra["truncated"] = True
            summary.truncated += 1
        if reply.cached:
            extra["cached"] = True
        grades = []
        for n, item in enumerate(job.item_ids):
            if labels is None:
                grade, status, answer, more = None, FAILED, None, {"error": reason}
            else:
                (grade, answer), status, more = labels[n], labels[n][1], {}
            grades.append(Grade(job.query_id, job.passage_id, item, self.step, self.backend.model,
                                self.template.version, grade, status, raw_reply=reply.text, answer=answer,
                                extra={**extra, **more} or None))
            summary.by_status[status] += 1
        summary.graded += len(grades)
        if labels is None:
            summary.failures += len(grades)
            summary.errors[reason_of(reason or "failed")] += len(grades)
        keep = labels is not None and cacheable(reply) and self.backend.uses_cache and not reply.cached
        self.replies.commit(lambda: self.store.grades.upsert_grades(self.grade_set, grades, attempt=True),
                            [(key, self.backend.kind, self.backend.model, reply.to_cache())] if keep else [])
        return 0 if labels is not None else len(grades)
