"""Benchmark of a server fleet (`--base-url URL1,...,URL4`): four local OpenAI-compatible test servers (threads
of one process of their own) answering after 50 ms, against one of them at the same per-server concurrency; then the
fleet again with one server killed (SIGKILL) mid-run: every pair must still be graded. Prints its figures.

Target (issue 17): fleet >= 3.5x the pairs/s of one server; no lost pairs when one dies.
Usage: python benchmarks/bench_fleet.py [PAIRS_PER_SERVER (1000)] [CONCURRENCY_PER_SERVER (2)]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from bench_grading import ROOT, build_store, engine

FLEET = """
import sys
sys.path.insert(0, {tests!r})
from fake_openai import FakeOpenAI
servers = [FakeOpenAI(latency=0.05).__enter__() for _ in range({n})]
print(" ".join(str(s.port) for s in servers), flush=True)
for line in sys.stdin:  # "kill N": server N stops at once (its connections reset, new ones refused)
    servers[int(line.split()[1])].__exit__(None, None, None)
"""


class Servers:
    """`n` test servers, threads of one process of their own (fewer processes competing for the CPU)."""

    def __init__(self, n: int) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FLEET.format(tests=str(ROOT / "tests"), n=n)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.urls = [f"http://127.0.0.1:{port}/v1" for port in self.proc.stdout.readline().split()]

    def kill(self, n: int) -> None:
        """Stop server n."""
        self.proc.stdin.write(f"kill {n}\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def run(urls: list[str], pairs: int, concurrency: int, folder: Path, name: str,
        kill: Callable[[], None] | None = None) -> tuple[float, int, int, int, list]:
    """pairs/s, pairs in the pool, pairs stored with a grade, failures and per-server figures of one `grade`
    over a fresh store."""
    from proctor.store import Store

    store = folder / f"{name}.db"
    build_store(store, pairs)
    timer = threading.Timer(max(1.0, pairs / (len(urls) * concurrency / 0.05) / 3), kill) if kill else None
    if timer:
        timer.start()
    rate, graded, _, summary = engine(",".join(urls), store, concurrency, with_summary=True)
    if timer:
        timer.cancel()
    opened = Store.open(store)
    [grade_set] = opened.grades.grade_sets()
    stored = sum(1 for r in opened.grades.grade_rows(grade_set.id, "self-rating") if r[3] is not None)
    opened.close()
    return rate, summary.pairs, stored, summary.failures, summary.servers


def main() -> None:
    per_server = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    servers = Servers(4)
    urls = servers.urls
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
            rate, pool, stored, failures, figures = run(urls, 4 * per_server, concurrency, folder, "killed",
                                                        kill=lambda: servers.kill(0))
            print(f"four servers, one killed mid-run: {stored} of {pool} pairs graded with a grade, "
                  f"{failures} failures, {rate:.1f} pairs/s; lost pairs: {pool - stored}")
            print("  per server: " + ", ".join(f"{s['requests']} requests ({s['failures']} failed, taken out "
                                               f"{s['taken_out']}x)" for s in figures))
    finally:
        servers.close()


if __name__ == "__main__":
    main()
