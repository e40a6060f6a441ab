"""`--engine ray`: the pending pairs of a step are pre-filtered, rendered and looked up in the response
cache by the driver (which owns the store), exactly as the in-process engine does; the pairs without a usable
cached reply become a Ray Dataset; Ray Data workers (an actor pool, each with its own backend built from the
same configuration) call the backend; the replies stream back to the driver, which alone writes the store —
parse, record, cache and commit through the in-process engine's code, so the grades and their durability are
the same. A worker whose process dies is restarted by Ray and its unanswered batch retried (Ray Data's
defaults for actor pools: `max_restarts=-1`, `max_task_retries=-1`; passing them is deprecated since Ray
2.60); every batch's replies reach the driver once, and the store's primary key would make a repeated reply
overwrite, never duplicate. A batch that kills every worker it reaches is retried without end: stop the run
(Ctrl-C; what was committed stays) and find the pair that does it.

Works with an OpenAI-compatible server or fleet (`openai:`), a local `hf:` model per worker, `embed:`.
Optional extra: `pip install -e '.[ray]'` in a Proctor checkout."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict
from typing import Any

from proctor.errors import UsageError
from proctor.grading.engine import CHUNK, Engine, Summary
from proctor.grading.plan import WorkItem
from proctor.grading.progress import Progress
from proctor.llm.base import Reply, Request

WINDOW = 50_000
"""Pairs per dataset: the driver streams a pool of millions through Ray in windows of this many."""


class RayEngine(Engine):
    """The engine with Ray Data workers in place of in-process requests."""

    async def arun(self) -> Summary:
        """Grade every planned pair that lacks a grade through Ray Data; the driver commits."""
        config, address = self.options.backend_config, self.options.ray_address
        if config is None or self.backend.kind not in ("openai", "hf", "embed"):
            raise UsageError(f"{{engine}} ray works with openai:, hf: and embed: backends, not {self.backend.kind}:",
                             params=("engine",))
        if getattr(config, "workers", 1) > 1:
            raise UsageError("{workers}: with {engine} ray the Ray workers are the client processes ({ray_workers})",
                             params=("workers", "engine", "ray_workers"))
        ray = _ray(address)
        summary = Summary(self.step, self.backend.model, self.grade_set, self.plan.pairs, self.plan.already,
                          self.plan.given_up, unjudgeable=self.plan.unjudgeable)
        progress = Progress(self.plan.pairs - self.plan.already - self.plan.given_up, self.options.progress,
                            f"{self.step} · {self.backend.model} · ray")
        self._buffer, self._cache_buffer, self._last_commit = [], [], time.monotonic()
        workers = max(1, int(self.options.ray_workers or ray.available_resources().get("CPU", 1)))
        try:
            items = self.plan.work(self.store)
            while window := [item for _, item in zip(range(WINDOW), items, strict=False)]:
                await self._grade_window(ray, window, workers, summary, progress)
        finally:
            self._flush()
            progress.close()
        summary.elapsed = progress.elapsed
        summary.calls, summary.tokens, summary.cached = progress.calls, progress.tokens, progress.cached
        return summary

    async def _grade_window(self, ray: Any, window: list[WorkItem], workers: int, summary: Summary,
                            progress: Progress) -> None:
        """Pre-filter, render and answer from the response cache here (the driver owns the store); only the
        pairs without a usable cached reply go to the workers."""
        pending: list[tuple[WorkItem, Request, bool, str | None]] = []
        for start in range(0, len(window), CHUNK):
            for batch in await self._prepare(window[start:start + CHUNK], summary, progress):
                pending += batch
            self._maybe_flush()
        if not pending:
            return
        rows = [{"n": n, "request": json.dumps(asdict(request), ensure_ascii=False)}
                for n, (_, request, _, _) in enumerate(pending)]
        size = max(1, min(CHUNK, -(-len(rows) // (2 * workers))))  # every worker gets work on a small window
        dataset = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows) // size, 8 * workers)))
        graded = dataset.map_batches(
            RayGrader, batch_size=size, batch_format="pandas", concurrency=workers, num_cpus=1,
            fn_constructor_kwargs={"config": self.options.backend_config,
                                   "method_name": self.options.method_name or self.method.name})
        for batch in graded.iter_batches(batch_size=CHUNK, batch_format="pandas"):
            entries = [pending[int(n)] for n in batch["n"]]
            self._collect_replies(entries, [_reply(json.loads(r)) for r in batch["reply"]], summary, progress)
            self._maybe_flush()


class RayGrader:
    """A Ray Data worker: its own backend; asks the backend the requests the driver rendered, returns the
    replies."""

    def __init__(self, config: Any, method_name: str) -> None:
        self.backend = config.build(method_name)
        self.loop = asyncio.new_event_loop()

    def __call__(self, batch: Any) -> Any:
        requests = [Request(**json.loads(text)) for text in batch["request"]]
        try:
            replies = self.loop.run_until_complete(self.backend.complete(requests))
        except Exception as exc:  # a backend that raises still yields recorded failures
            replies = [Reply(error=f"{type(exc).__name__}: {exc}") for _ in requests]
        batch = batch[["n"]].copy()
        batch["reply"] = [json.dumps({**asdict(r), "probabilities": r.probabilities}) for r in replies]
        return batch


def _reply(data: dict[str, Any]) -> Reply:
    probabilities = data.get("probabilities")
    return Reply(**{**data, "probabilities": {int(k): v for k, v in probabilities.items()} if probabilities else None})


def _ray(address: str | None) -> Any:
    """Ray, connected (to `address`, or a local instance started for this process)."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise UsageError("{engine} ray needs Ray: pip install -e '.[ray]' in a Proctor checkout",
                         params=("engine",)) from None
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UsageError(f"{{ray_address}} {address}: cannot connect to Ray: {exc}",
                             params=("ray_address",)) from None
    return ray
