"""Benchmark of the grading engine against a local OpenAI-compatible server (its own process) that answers
after 50 ms: engine throughput vs bare concurrent requests made with the same client and concurrency, both
measured in one run, and the engine's memory over a 100k-pair pool. Prints its figures; asserts nothing.

Bare and engine runs alternate (ROUNDS pairs of runs, each engine run on a fresh copy of the store); the
figure is the ratio of the medians. Target (issues 4 and 17): engine >= 0.9 of bare at concurrency 64;
memory flat over a 100k-pair pool (PAIRS=100000).
Usage: python benchmarks/bench_grading.py [PAIRS (12000)] [CONCURRENCY (64)] [ROUNDS (3)]
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from fake_openai import FakeOpenAI
with FakeOpenAI(latency=0.05) as server:
    print(server.port, flush=True)
    sys.stdin.read()
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def bare(base_url: str, n: int, concurrency: int) -> float:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=30)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"bare {i}"}],
                                                 temperature=0, max_tokens=16)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - start
    await client.close()
    return n / elapsed


def build_store(path: Path, pairs: int) -> None:
    """A synthetic collection: Q queries × 100 passages × 10 questions = `pairs` pairs."""
    from proctor.importing import import_files

    queries = max(1, pairs // 1000)
    folder = path.parent
    (folder / "q.tsv").write_text("".join(f"q{i}\tquery number {i}\n" for i in range(queries)))
    (folder / "c.tsv").write_text("".join(f"q{i}p{j}\tpassage {j} of query {i} " + "text " * 60 + "\n"
                                          for i in range(queries) for j in range(100)))
    (folder / "r.run").write_text("".join(f"q{i} Q0 q{i}p{j} {j + 1} {100 - j} run\n"
                                          for i in range(queries) for j in range(100)))
    (folder / "b.jsonl").write_text("".join(json.dumps({"query_id": f"q{i}", "items": [
        {"question_id": f"q{i}/{k}", "question_text": f"question {k} about query {i}?"} for k in range(10)]}) + "\n"
        for i in range(queries)))
    from proctor.store import Store

    store = Store.create_or_open(path)
    for kind, name in (("queries", "q.tsv"), ("corpus", "c.tsv"), ("runs", "r.run"), ("bank", "b.jsonl")):
        import_files(store, kind, [folder / name])
    store.close()


def engine(base_url: str, store_path: Path, concurrency: int, with_summary: bool = False):
    from proctor.grading import GradeOptions, GradeRequest, grade
    from proctor.llm.config import BackendConfig
    from proctor.store import Store

    store = Store.open(store_path)
    request = GradeRequest("self-rating", BackendConfig(spec="openai:m", base_url=base_url, concurrency=concurrency,
                                                        timeout=30), GradeOptions(depth=100, progress=False))
    samples: list[tuple[int, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(2.0):
            n = store_count(store_path)
            samples.append((n, rss_mb()))

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    _, [summary] = asyncio.run(grade(store, request))
    done.set()
    watcher.join()
    store.close()
    if with_summary:
        return summary.graded / summary.elapsed, summary.graded, samples, summary
    return summary.graded / summary.elapsed, summary.graded, samples


def store_count(path: Path) -> int:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COUNT(*) FROM grades").fetchone()[0]
    finally:
        db.close()


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 12_000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            template = Path(tmp) / "template.db"
            build_store(template, pairs)
            bares, engines, samples, cpu_bare, cpu_engine = [], [], [], [], []
            for n in range(rounds):  # alternated, so that both see the same machine load
                store = Path(tmp) / f"round{n}.db"
                shutil.copy(template, store)
                started = time.process_time()
                bares.append(asyncio.run(bare(base_url, pairs, concurrency)))
                cpu_bare.append(1000 * (time.process_time() - started) / pairs)
                started = time.process_time()
                rate, graded, round_samples = engine(base_url, store, concurrency)
                cpu_engine.append(1000 * (time.process_time() - started) / max(1, graded))
                engines.append(rate)
                samples = samples or round_samples
                print(f"round {n + 1}: bare {bares[-1]:.0f} requests/s ({cpu_bare[-1]:.2f} CPU ms each), engine "
                      f"{rate:.0f} pairs/s ({graded} pairs, {cpu_engine[-1]:.2f} CPU ms each, store and prompts "
                      f"included) = {rate / bares[-1]:.2f}", flush=True)
        ratio = statistics.median(engines) / statistics.median(bares)
        print(f"concurrency {concurrency}, 50 ms latency, {pairs} pairs per run, {rounds} alternated pairs of runs: "
              f"median bare {statistics.median(bares):.0f} requests/s, median engine "
              f"{statistics.median(engines):.0f} pairs/s = {ratio:.2f} of bare (per round: "
              + ", ".join(f"{e / b:.2f}" for e, b in zip(engines, bares, strict=True)) + ")")
        print(f"client CPU per request (median): bare {statistics.median(cpu_bare):.2f} ms, engine "
              f"{statistics.median(cpu_engine):.2f} ms")
        if samples:
            shown = samples[:: max(1, len(samples) // 8)] + samples[-1:]
            print("engine RSS while grading (grades stored → MB): "
                  + ", ".join(f"{n}→{mb:.0f}" for n, mb in shown))
    finally:
        server.stdin.close()
        server.wait(10)


if __name__ == "__main__":
    main()
