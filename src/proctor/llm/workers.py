"""`--workers N` for `openai:` backends: N client processes, each with its own HTTP client, when one core is not
enough to keep a fast server (or fleet) busy. This process still renders, looks up the cache, parses and
commits (the engine is unchanged); the workers only send requests, retry them and return replies.

Every request the engine hands over goes to the worker with the fewest outstanding requests; requests and
replies cross the pipes in bundles (one message per event-loop turn, not one per request). `--concurrency`,
`--rpm` and `--tpm` are shared out among the workers, so the server sees the same limits. Workers ignore
Ctrl-C (this process stops them); a worker that dies turns its outstanding requests into recorded failures and
gets no more (the others take them)."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import threading
from dataclasses import asdict, replace
from typing import Any

from proctor.llm.base import Reply, Request

STOP_SECONDS = 5.0
"""How long a closing pool waits for its workers before it terminates them."""


class WorkerPool:
    """The OpenAI backend's protocol with `workers` processes behind it (`inner` is this process's own backend:
    its options, cache parameters, context fitting and the endpoint check)."""

    def __init__(self, inner: Any, workers: int) -> None:
        self.inner, self.workers = inner, workers
        self.kind, self.model, self.uses_cache = inner.kind, inner.model, inner.uses_cache
        self.batch_size, self.concurrency, self.fleet = 1, inner.concurrency, inner.fleet
        self.options = inner.options
        self._pipes: list[Any] = []
        self._processes: list[Any] = []
        self._pending: list[dict[int, asyncio.Future]] = [{} for _ in range(workers)]
        self._outbox: list[list[tuple[int, Request]]] = [[] for _ in range(workers)]
        self._figures: list[list[dict[str, Any]]] = [[] for _ in range(workers)]
        self._next, self._scheduled = 0, False
        self._dead: set[int] = set()
        """Workers whose process died: no request goes to them any more."""
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> Any:
        """The SDK client of the first server (the Batch API's; no worker is started for it)."""
        return self.inner.client

    def params(self) -> dict[str, Any]:
        return self.inner.params()

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return self.inner.fit(before, context, after)

    def stats(self) -> list[dict[str, Any]]:
        """Per-server figures, summed over the workers (as their last replies reported them)."""
        return merge_figures([f for f in self._figures if f]) or self.inner.stats()

    async def complete(self, requests: list[Request]) -> list[Reply]:
        self._attach()
        futures = []
        for request in requests:
            future = asyncio.get_running_loop().create_future()
            futures.append(future)
            alive = [w for w in range(self.workers) if w not in self._dead]
            if not alive:
                future.set_result(Reply(error="every client worker died"))
                continue
            worker = min(alive, key=lambda w: len(self._pending[w]))
            self._next += 1
            self._pending[worker][self._next] = future
            if not self._scheduled:  # one message per worker and event-loop turn
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._send)
            self._outbox[worker].append((self._next, request))
        return list(await asyncio.gather(*futures))

    def _attach(self) -> None:
        """Start the workers (at the first call) and read their replies in this event loop."""
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        if not self._processes:
            self._start()
        self._loop = loop
        for worker, pipe in enumerate(self._pipes):
            loop.add_reader(pipe.fileno(), self._receive, worker)

    def _start(self) -> None:
        options, workers = self.inner.options, self.workers
        share = replace(options, concurrency=max(1, -(-options.concurrency // workers)),
                        rpm=options.rpm / workers if options.rpm else None,
                        tpm=options.tpm / workers if options.tpm else None)
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads and a loop
        for _ in range(workers):
            ours, theirs = context.Pipe()
            process = context.Process(target=serve, args=(theirs, self.model, asdict(share)), daemon=True)
            process.start()
            theirs.close()
            self._pipes.append(ours)
            self._processes.append(process)

    def _send(self) -> None:
        self._scheduled = False
        for worker, bundle in enumerate(self._outbox):
            if bundle:
                self._outbox[worker] = []
                if worker in self._dead:
                    continue
                try:
                    self._pipes[worker].send(bundle)
                except (OSError, ValueError):
                    self._lost(worker)

    def _receive(self, worker: int) -> None:
        try:
            replies, figures = self._pipes[worker].recv()
        except (EOFError, OSError):
            self._lost(worker)
            return
        self._figures[worker] = figures
        pending = self._pending[worker]
        for number, reply in replies:
            future = pending.pop(number, None)
            if future is not None and not future.done():
                future.set_result(reply)

    def _lost(self, worker: int) -> None:
        """A worker that died: its outstanding requests fail (recorded, asked again by the next run)."""
        if worker in self._dead:
            return
        self._dead.add(worker)
        if self._loop is not None:
            self._loop.remove_reader(self._pipes[worker].fileno())
        code = self._processes[worker].exitcode
        for future in self._pending[worker].values():
            if not future.done():
                future.set_result(Reply(error=f"client worker {worker + 1} died"
                                          + (f" (exit code {code})" if code is not None else "")))
        self._pending[worker] = {}

    async def aclose(self) -> None:
        for pipe in self._pipes:
            if self._loop is not None:
                self._loop.remove_reader(pipe.fileno())
            with contextlib.suppress(OSError, ValueError):
                pipe.send(None)
        for process in self._processes:
            await asyncio.to_thread(process.join, STOP_SECONDS)
            if process.is_alive():
                process.terminate()
        for pipe in self._pipes:
            pipe.close()
        await self.inner.aclose()


def merge_figures(per_worker: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each server's figures summed over the workers (mean seconds weighted by the answered requests)."""
    merged = []
    for rows in zip(*per_worker, strict=True):
        requests, failures = sum(r["requests"] for r in rows), sum(r["failures"] for r in rows)
        seconds = sum((r["mean_seconds"] or 0) * (r["requests"] - r["failures"]) for r in rows)
        ok = requests - failures
        merged.append({"url": rows[0]["url"], "requests": requests, "failures": failures,
                       "mean_seconds": round(seconds / ok, 4) if ok else None,
                       "taken_out": sum(r["taken_out"] for r in rows), "healthy": all(r["healthy"] for r in rows)})
    return merged


def serve(pipe: Any, model: str, options: dict[str, Any]) -> None:
    """A worker process: its own backend; requests in bundles from `pipe`, replies back in bundles."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops its workers
    from proctor.llm.openai_backend import OpenAIBackend, OpenAIOptions

    async def main() -> None:
        loop = asyncio.get_running_loop()
        backend = OpenAIBackend(model, OpenAIOptions(**options))
        inbox: asyncio.Queue = asyncio.Queue()
        outbox: list[tuple[int, Reply]] = []
        tasks: set[asyncio.Task] = set()

        def flush() -> None:
            bundle = outbox[:]
            outbox.clear()
            pipe.send((bundle, backend.stats()))

        async def one(number: int, request: Request) -> None:
            [reply] = await backend.complete([request])
            if not outbox:
                loop.call_soon(flush)
            outbox.append((number, reply))

        threading.Thread(target=_read, args=(pipe, loop, inbox), daemon=True).start()
        while (bundle := await inbox.get()) is not None:
            for number, request in bundle:
                task = asyncio.create_task(one(number, request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)
        await backend.aclose()

    asyncio.run(main())


def _read(pipe: Any, loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue) -> None:
    """The worker's reading thread: every bundle into the loop's inbox; None (or a closed pipe) ends it."""
    while True:
        try:
            bundle = pipe.recv()
        except (EOFError, OSError):
            bundle = None
        loop.call_soon_threadsafe(inbox.put_nowait, bundle)
        if bundle is None:
            return
