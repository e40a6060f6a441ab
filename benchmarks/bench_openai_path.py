"""The OpenAI path against a zero-latency local server (tests/fake_openai.py, its own process): Proctor's
`grade` (store, prompts, cache, parsing, commits included) against a bare `AsyncOpenAI` loop at the same
concurrency, in one run (alternated rounds, each Proctor round on a fresh copy of the store), and the engine
without HTTP (a backend that answers at once: rendering, cache look-ups, parsing, store rows and commits only).
Prints figures and ratios; asserts nothing.

Figures: wall-clock rates (requests/s, pairs/s) and the client's CPU milliseconds per request/pair (this process
and its `--workers` processes; the server runs in a process of its own and is not counted): on a busy machine
the CPU figure is the steadier one.
Target (issue 36): Proctor >= 2x the bare AsyncOpenAI loop at the same concurrency.
Usage: python benchmarks/bench_openai_path.py [PAIRS (4000)] [CONCURRENCY (64)] [ROUNDS (2)] [WORKERS (1)]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_grading import build_store  # noqa: E402

SERVER = """
import sys
sys.path.insert(0, {tests!r})
from fake_openai import FakeOpenAI
with FakeOpenAI() as server:
    print(server.port, flush=True)
    sys.stdin.read()
"""
PROMPT = "passage text " * 60
"""About the length of the benchmark store's rendered prompts."""


async def bare(base_url: str, n: int, concurrency: int) -> tuple[float, float]:
    """A bare AsyncOpenAI loop: (requests/s, CPU ms per request)."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=30)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            reply = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": f"bare {i} {PROMPT}"}], temperature=0, max_tokens=16)
            assert reply.choices[0].message.content

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    rate, cpu_ms = n / (time.perf_counter() - started), 1000 * (time.process_time() - cpu) / n
    await client.close()
    return rate, cpu_ms


def proctor(base_url: str, store_path: Path, concurrency: int, workers: int) -> tuple[float, float, int]:
    """`grade` through the API: (pairs/s as the summary reports it, CPU ms per pair, pairs graded)."""
    from proctor.grading import GradeOptions, GradeRequest, grade
    from proctor.llm.config import BackendConfig
    from proctor.store import Store

    extra = {"workers": workers} if workers > 1 else {}
    config = BackendConfig(spec="openai:m", base_url=base_url, concurrency=concurrency, timeout=30, **extra)
    store = Store.open(store_path)
    cpu = _cpu()
    _, [summary] = asyncio.run(grade(store, GradeRequest("self-rating", config, GradeOptions(depth=100,
                                                                                         progress=False))))
    cpu_ms = 1000 * (_cpu() - cpu) / max(1, summary.graded)
    store.close()
    assert summary.failures == 0, summary.errors
    return summary.graded / summary.elapsed, cpu_ms, summary.graded


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (the `--workers` processes, once closed)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class Instant:
    """A backend that answers every request at once ("3"), with the OpenAI backend's kind (its replies cached)."""

    kind, model, batch_size, concurrency, uses_cache = "openai", "m", 1, 64, True

    def params(self) -> dict:
        return {"temperature": 0.0, "probabilities": False}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return context, False

    async def complete(self, requests: list) -> list:
        from proctor.llm.base import Reply

        return [Reply(text="3", tokens=10) for _ in requests]

    async def aclose(self) -> None:
        return None


def engine_only(store_path: Path) -> tuple[float, float, int]:
    """The engine without HTTP: (pairs/s, CPU ms per pair, pairs)."""
    from proctor.grading import GradeOptions, GradeRequest, run_grade_set
    from proctor.llm.config import BackendConfig
    from proctor.store import Store

    store = Store.open(store_path)
    request = GradeRequest("self-rating", BackendConfig(spec="openai:m"), GradeOptions(depth=100, progress=False))
    cpu = time.process_time()
    _, [summary] = asyncio.run(run_grade_set(store, request.choice(), Instant(), request.options))  # type: ignore
    cpu_ms = 1000 * (time.process_time() - cpu) / max(1, summary.graded)
    store.close()
    return summary.graded / summary.elapsed, cpu_ms, summary.graded


def main() -> None:
    given = [int(arg) for arg in sys.argv[1:5]]
    pairs, concurrency, rounds, workers = given + [4000, 64, 2, 1][len(given):]
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as tmp:
            template = Path(tmp) / "template.db"
            build_store(template, pairs)
            bares, ours, engines = [], [], []
            for n in range(rounds):  # alternated, so that both see the same machine load
                bares.append(asyncio.run(bare(base_url, pairs, concurrency)))
                store = Path(tmp) / f"round{n}.db"
                shutil.copy(template, store)
                ours.append(proctor(base_url, store, concurrency, workers))
                shutil.copy(template, store)
                engines.append(engine_only(store))
                print(f"round {n + 1}: bare AsyncOpenAI {bares[-1][0]:.0f} requests/s ({bares[-1][1]:.2f} CPU ms "
                      f"each); Proctor {ours[-1][0]:.0f} pairs/s ({ours[-1][1]:.2f} CPU ms each, {ours[-1][2]} "
                      f"pairs) = {ours[-1][0] / bares[-1][0]:.2f}x; engine without HTTP {engines[-1][0]:.0f} "
                      f"pairs/s ({engines[-1][1]:.3f} CPU ms each)", flush=True)
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait()
    bare_rate, our_rate = statistics.median(b[0] for b in bares), statistics.median(o[0] for o in ours)
    bare_cpu, our_cpu = statistics.median(b[1] for b in bares), statistics.median(o[1] for o in ours)
    print(f"zero-latency server, concurrency {concurrency}, {pairs} pairs a run, {rounds} alternated rounds, "
          f"workers {workers}: median bare AsyncOpenAI {bare_rate:.0f} requests/s, Proctor {our_rate:.0f} pairs/s "
          f"= {our_rate / bare_rate:.2f}x (target >= 2x); client CPU per request {bare_cpu:.2f} ms bare, "
          f"{our_cpu:.2f} ms Proctor = {bare_cpu / our_cpu:.2f}x less; engine without HTTP "
          f"{statistics.median(e[0] for e in engines):.0f} pairs/s")


if __name__ == "__main__":
    main()
