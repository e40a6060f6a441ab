"""The embedded default grader on DL19 (needs ../shared/data/dl19): grade the whole pool (9,260 passages ×
10 questions) with embed:minilm, then correlate the EXAM-Qrels P@20 (τ = 3) leaderboard with the official
one, next to FLAN-T5-large's recorded grades. Prints its figures; asserts nothing.

Targets (issue 4): grading < 10 minutes on this machine; Kendall's τ at least FLAN-T5-large's (0.754).
Issue 18: peak memory (maximum resident set size of the `grade` process) at most 1 GB (it was 2.4 GB).
`--max-queries N` grades only the first N queries (a quicker memory figure on a busy machine)."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "dl19"


def proctor(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-queries", type=int)
    args = parser.parse_args()
    limit = ["--max-queries", str(args.max_queries)] if args.max_queries else []
    pool = DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz"
    official = DL19 / "dl19-official-leaderboard.json"
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "g.db"
        proctor("import", "exampp", pool, "--store", store)
        proctor("import", "bank", DL19 / "dl19-questions-graded.jsonl.gz", "--store", store)
        start = time.perf_counter()
        summary = json.loads(proctor("grade", "--store", store, "--method", "embedding", "--format", "json", *limit))
        minutes = (time.perf_counter() - start) / 60
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
        print(f"peak memory of grade --method embedding: {peak:.0f} MiB (target <= 1024)")
        print(f"embed:minilm graded {summary['graded_now']} pairs in {minutes:.1f} min "
              f"({summary['pairs_per_second']:.0f} pairs/s, {summary['truncated_contexts']} passages longer than "
              "the model's 256-token window)")
        for method in ("embedding", "self-rating"):
            for tau in (3, 4, 5):
                board = Path(tmp) / f"{method}-{tau}.tsv"
                board.write_text(proctor("leaderboard", "--store", store, "--method", method, "--measure", "P@20",
                                         "--min-grade", tau))
                result = json.loads(proctor("correlate", board, "--official", official))
                print(f"{method:12s} P@20 tau={tau}: Spearman {result['spearman']:.3f}  "
                      f"Kendall {result['kendall']:.3f}")


if __name__ == "__main__":
    main()
