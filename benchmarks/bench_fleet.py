"""Benchmark of a server fleet (`--base-url URL1,...,URL4`): four local OpenAI-compatible test servers, each
its own process answering after 50 ms, against one of them at the same per-server concurrency; then the
fleet again with one server killed (SIGKILL) mid-run: every pair must still be graded. Prints its figures.

Target (issue 17): fleet >= 3.5x the pairs/s of one server; no lost pairs when one dies.
Usage: python benchmarks/bench_fleet.py [PAIRS_PER_SERVER (1000)] [CONCURRENCY_PER_SERVER (2)]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench_grading import ROOT, SERVER, build_store, engine


def start_server() -> tuple[subprocess.Popen, str]:
    """A test server in its own process; its base URL."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, f"http://127.0.0.1:{proc.stdout.readline().strip()}/v1"


def run(urls: list[str], pairs: int, concurrency: int, folder: Path, name: str,
        kill: subprocess.Popen | None = None) -> tuple[float, int, int, int, list]:
    """pairs/s, pairs in the pool, pairs stored with a grade, failures and per-server figures of one `grade`
    over a fresh store."""
    from proctor.store import Store

    store = folder / f"{name}.db"
    build_store(store, pairs)
    timer = threading.Timer(max(1.0, pairs / (len(urls) * concurrency / 0.05) / 3), kill.kill) if kill else None
    if timer:
        timer.start()
    rate, graded, _, summary = engine(",".join(urls), store, concurrency, with_summary=True)
    if timer:
        timer.cancel()
    opened = Store.open(store)
    [grade_set] = opened.grade_sets()
    stored = sum(1 for r in opened.grade_rows(grade_set.id, "self-rating") if r[3] is not None)
    opened.close()
    return rate, summary.pairs, stored, summary.failures, summary.servers


def main() -> None:
    per_server = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    servers = [start_server() for _ in range(4)]
    urls = [url for _, url in servers]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            one, graded1, _, _, _ = run(urls[:1], per_server, concurrency, folder, "one")
            four, graded4, _, _, figures = run(urls, 4 * per_server, concurrency, folder, "four")
            print(f"one server (concurrency {concurrency}, 50 ms): {graded1} pairs at {one:.1f} pairs/s")
            print(f"four servers (concurrency {concurrency} each): {graded4} pairs at {four:.1f} pairs/s "
                  f"= {four / one:.2f}x")
            print("  per server: " + ", ".join(f"{s['requests']} requests, mean {s['mean_seconds']} s"
                                               for s in figures))
            victim = servers[0][0]
            rate, pool, stored, failures, figures = run(urls, 4 * per_server, concurrency, folder, "killed",
                                                        kill=victim)
            print(f"four servers, one killed mid-run: {stored} of {pool} pairs graded with a grade, "
                  f"{failures} failures, {rate:.1f} pairs/s; lost pairs: {pool - stored}")
            print("  per server: " + ", ".join(f"{s['requests']} requests ({s['failures']} failed, taken out "
                                               f"{s['taken_out']}x)" for s in figures))
    finally:
        for proc, _ in servers:
            if proc.poll() is None:
                proc.stdin.close()
                proc.wait(10)


if __name__ == "__main__":
    main()
