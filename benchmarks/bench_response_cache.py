"""Benchmark of the response cache of its own (`--cache-dir`, the AutoJudge `CACHE_DIR`) against the store's own
cache, with the local OpenAI-compatible server (its own process, 50 ms latency): grading with the server
(replies kept in the store / in the cache file), then the replay (store: its grades dropped, its cache answers;
cache-dir: a fresh store, the cache file answers, the server unused). Prints pairs/s; asserts nothing.
Usage: python benchmarks/bench_response_cache.py [PAIRS (6000)] [CONCURRENCY (64)] [ROUNDS (2)]
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_grading import SERVER, build_store  # noqa: E402


def grade(store_path: Path, base_url: str, concurrency: int, cache_dir: Path | None) -> tuple[float, int, int]:
    """(pairs/s, pairs graded, cache hits) of one self-rating run."""
    from proctor.grading import GradeOptions, GradeRequest
    from proctor.grading import grade as grade_async
    from proctor.llm.config import BackendConfig
    from proctor.store import Store

    store = Store.open(store_path)
    config = BackendConfig(spec="openai:m", base_url=base_url, concurrency=concurrency, timeout=30,
                           cache_dir=str(cache_dir) if cache_dir else None)
    try:
        _, [summary] = asyncio.run(grade_async(store, GradeRequest("self-rating", config,
                                                                   GradeOptions(depth=100, progress=False))))
    finally:
        store.close()
    return summary.graded / summary.elapsed, summary.graded, summary.cached


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    figures: dict[str, list[float]] = {k: [] for k in ("store ask", "store replay", "dir ask", "dir replay")}
    try:
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            template = Path(tmp) / "template.db"
            build_store(template, pairs)
            for n in range(rounds):  # alternated, so that both see the same machine load
                store = Path(tmp) / f"store{n}.db"
                shutil.copy(template, store)
                figures["store ask"].append(grade(store, base_url, concurrency, None)[0])
                db = sqlite3.connect(store)
                with db:
                    db.execute("DELETE FROM grades")
                db.close()
                rate, graded, hits = grade(store, base_url, concurrency, None)
                figures["store replay"].append(rate)
                folder = Path(tmp) / f"cache{n}"
                first, second = Path(tmp) / f"a{n}.db", Path(tmp) / f"b{n}.db"
                shutil.copy(template, first)
                shutil.copy(template, second)
                figures["dir ask"].append(grade(first, base_url, concurrency, folder)[0])
                rate, graded, hits = grade(second, "http://127.0.0.1:9/v1", concurrency, folder)  # no server
                figures["dir replay"].append(rate)
                print(f"round {n + 1}: " + ", ".join(f"{k} {v[-1]:.0f} pairs/s" for k, v in figures.items())
                      + f" (replay from the cache file: {hits} of {graded} pairs)", flush=True)
        print(f"{pairs} pairs, concurrency {concurrency}, 50 ms latency, {rounds} rounds, medians: "
              + ", ".join(f"{k} {statistics.median(v):.0f} pairs/s" for k, v in figures.items()))
    finally:
        server.stdin.close()
        server.wait(10)


if __name__ == "__main__":
    main()
