"""Memory and time of `correlate --bootstrap B` (`analyze.correlation.bootstrap_intervals`) on a DL19-sized
leaderboard: 37 systems × 43 queries of per-query values on both sides (as with --official-qrels), seeded.

    python benchmarks/bench_correlate_bootstrap.py [B ...]     (default: 1000 10000)

Each B runs in a fresh process; it prints the process's peak resident memory and how much of it the bootstrap
added (over the imports and the data), and the wall time. Run it on two versions of the code (PYTHONPATH) to
compare: the resamples were drawn all at once (systems × B × queries floats per side), 1,000 at a time since."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import numpy as np


def board(seed: int) -> dict[str, dict[str, float]]:
    """37 systems' per-query values on 43 queries, the systems spread apart."""
    rng = np.random.default_rng(seed)
    return {f"s{i:02d}": {f"q{j:02d}": float(i / 40 + rng.random() * 0.5) for j in range(43)} for i in range(37)}


def one(samples: int) -> None:
    """The bootstrap of B resamples in this process: peak memory and wall time."""
    from proctor.analyze.correlation import bootstrap_intervals

    predicted, official = board(1), board(2)
    bootstrap_intervals(predicted, official, samples=10, seed=0)  # scipy and numpy loaded, the code warm
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    bootstrap_intervals(predicted, official, samples=samples, seed=0)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"B={samples}: peak {peak:.0f} MiB (+{peak - before:.0f} MiB by the bootstrap), {elapsed:.1f} s "
          f"({elapsed / samples * 1e3:.2f} ms per resample)", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        one(int(sys.argv[2]))
    else:
        for b in [int(a) for a in sys.argv[1:]] or [1000, 10000]:
            subprocess.run([sys.executable, __file__, "--one", str(b)], check=True)
