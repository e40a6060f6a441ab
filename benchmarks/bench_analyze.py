"""Benchmark of `proctor analyze` on DL19 (needs ../shared/data/dl19): full sweep + agreement + plots.

Target (issue 3): < 10 s on the development machine (2 cores). Prints its figures; asserts nothing.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "dl19"


def proctor(*args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "proctor", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return time.perf_counter() - start


def main() -> None:
    pool = DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz"
    if not pool.exists():
        raise SystemExit(f"{pool} is missing: the benchmark needs the DL19 data")
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "dl19.db")
        proctor("import", "exampp", str(pool), "--store", store)
        walls = [proctor("analyze", "--store", store, "--official", str(DL19 / "dl19-official-leaderboard.json"),
                         "--out", str(Path(tmp) / f"report{i}")) for i in range(3)]
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"proctor analyze DL19 (26 leaderboards + correlations, agreement m=1,2,5, per-query, 3 plots, HTML): "
              f"best {min(walls):.2f} s, median {sorted(walls)[1]:.2f} s wall over 3 runs (start-up included); "
              f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
