"""Benchmark of `proctor review` on DL19 (needs ../shared/data/dl19). Prints its figures; asserts nothing.

Targets (issue 13): the server answers its first request < 2 s after the process starts; a DL19 query page
(~200 passages x 10 questions) renders in < 300 ms.

    PYTHONPATH=src python benchmarks/bench_review.py [STORE]

STORE, when given, is a DL19 store to reuse (made there when missing): the DL19 pool and its questions
graded by replaying the pool's grades (self-rating / flan-t5-large).
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "dl19"
POOL = DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz"
BANK = DL19 / "dl19-questions-graded.jsonl.gz"


def proctor(*args: str) -> None:
    """Run one `proctor` command, failing loudly."""
    proc = subprocess.run([sys.executable, "-m", "proctor", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"proctor {' '.join(args)} failed:\n{proc.stderr}")


def dl19_store(path: Path) -> Path:
    """The DL19 store with the pool graded into one grade set (built once)."""
    if not path.exists():
        proctor("import", "exampp", str(POOL), "--store", str(path), "--no-grades")
        proctor("import", "bank", str(BANK), "--store", str(path), "--name", "dl19")
        proctor("grade", "--store", str(path), "--method", "self-rating", "--llm", f"replay:{POOL}")
    return path


def free_port() -> int:
    """A port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(store: Path) -> tuple[subprocess.Popen, str, float]:
    """Start the server; returns it, its URL and the seconds until its first page answered."""
    port = free_port()
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "proctor", "review", "--store", str(store), "--port", str(port)],
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            urllib.request.urlopen(url + "/static/review.css").read()
            return proc, url, time.perf_counter() - began
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the review server exited") from None
            time.sleep(0.02)


def timed_get(url: str) -> tuple[float, int]:
    """Seconds for one GET (full body read) and the body's size."""
    began = time.perf_counter()
    body = urllib.request.urlopen(url).read()
    return time.perf_counter() - began, len(body)


def main() -> None:
    """Print start-up, overview and query page times."""
    if not POOL.exists():
        raise SystemExit("../shared/data/dl19 is not present")
    with tempfile.TemporaryDirectory() as tmp:
        store = dl19_store(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "dl19.db")
        proc, url, startup = start(store)
        try:
            first, size = timed_get(url + "/")
            overview = [timed_get(url + "/")[0] for _ in range(3)]
            queries = ["1115776", "47923", "1133167", "833860", "131843", "359349", "915593", "1112341"]
            pages, sizes = [], []
            for qid in queries:
                timed_get(f"{url}/query/{qid}")  # warm
                times = [timed_get(f"{url}/query/{qid}") for _ in range(3)]
                pages.append(statistics.median(t for t, _ in times))
                sizes.append(times[0][1])
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"start-up to first answer:   {startup:.3f} s (target < 2 s)")
    print(f"overview (first, cached):   {first * 1000:.0f} ms, {statistics.median(overview) * 1000:.0f} ms "
          f"({size // 1024} KiB)")
    print(f"DL19 query page, median:    {statistics.median(pages) * 1000:.0f} ms, slowest {max(pages) * 1000:.0f} ms "
          f"over {len(pages)} queries ({statistics.median(sizes) // 1024} KiB each; target < 300 ms)")


if __name__ == "__main__":
    main()
