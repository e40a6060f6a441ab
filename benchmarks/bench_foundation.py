"""Benchmark of the foundation on DL19 (needs ../shared/data/dl19). Prints its figures; asserts nothing.

Targets (issue 2): import < 5 s; one leaderboard command < 1 s wall including start-up, without importing
torch or transformers; the sweep τ = 1..5 × {P@20, nDCG@10, RR, AP} + Cover τ = 1..5 < 3 s in one
process; peak memory < 300 MB.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POOL = ROOT.parent / "shared" / "data" / "dl19" / "dl19-pool-graded-flan-t5-large.jsonl.gz"


def timed(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `proctor` process."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "proctor", *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"proctor {' '.join(args)} failed:\n{proc.stderr}")
    # RUSAGE_CHILDREN's ru_maxrss is the peak of the largest child waited for so far.
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    if not POOL.exists():
        raise SystemExit(f"{POOL} is missing: the benchmark needs the DL19 data")
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "dl19.db")
        wall, rss = timed(["import", "exampp", str(POOL), "--store", store])
        print(f"import exampp DL19 (9,260 passages, 92,600 grades): {wall:.2f} s wall, peak RSS so far {rss:.0f} MB")
        walls = [timed(["leaderboard", "--store", store, "--measure", "P@20", "--min-grade", "3"])[0]
                 for _ in range(5)]
        print(f"leaderboard P@20 τ=3 (new process, start-up included): best {min(walls):.3f} s, "
              f"median {sorted(walls)[2]:.3f} s over 5 runs")
        walls = [timed(["leaderboard", "--store", store, "--metric", "cover", "--min-grade", "3"])[0]
                 for _ in range(5)]
        print(f"leaderboard EXAM-Cover τ=3: best {min(walls):.3f} s, median {sorted(walls)[2]:.3f} s")
        probe = subprocess.run(
            [sys.executable, "-c", "import sys; from proctor.cli import main; "
             f"main(['leaderboard', '--store', {store!r}, '--measure', 'P@20', '--min-grade', '3']); "
             "heavy = [m for m in ('torch', 'transformers', 'numpy', 'pandas') if m in sys.modules]; "
             "print('heavy modules imported:', heavy or 'none', file=sys.stderr)"],
            capture_output=True, text=True)
        print(probe.stderr.strip().splitlines()[-1])
        sweep_code = (
            "import time, resource; t = time.perf_counter()\n"
            "from proctor.store import Store\n"
            "from proctor.evaluate.sources import load_runs, resolve_grade_set\n"
            "from proctor.evaluate.sweep import sweep\n"
            f"s = Store.open({store!r}); g = resolve_grade_set(s)\n"
            "boards = sweep(s, g, load_runs(s, None))\n"
            "print(f'sweep: {len(boards)} leaderboards (tau 1..5 x P@20, nDCG@10, RR, AP + Cover tau 1..5) in '\n"
            "      f'{time.perf_counter() - t:.2f} s in one process (start-up excluded), '\n"
            "      f'peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB')\n"
        )
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", sweep_code], capture_output=True, text=True, check=True)
        print(out.stdout.strip() + f"; {time.perf_counter() - start:.2f} s wall with start-up")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak memory of any command above: {peak:.0f} MB")


if __name__ == "__main__":
    main()
