"""Benchmark of `--engine ray` against the in-process engine on a DL19 subset (../shared/data/dl19), with a
local OpenAI-compatible test server (its own process, 50 ms per request) and a local Ray instance: grades
must be identical; prints pairs/s of both. Asserts nothing.

Usage: python benchmarks/bench_ray.py [QUERIES (5)] [PASSAGES_PER_QUERY (40)] [WORKERS (2)] [CONCURRENCY (16)]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_grading import ROOT, SERVER

DL19 = ROOT.parent / "shared" / "data" / "dl19"


def proctor(*args: object) -> str:
    """Run `proctor ARGS` in this process's interpreter; its standard output."""
    done = subprocess.run([sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return done.stdout


def rows(path: Path) -> list:
    """The grades of the store's self-rating grade set graded by model m."""
    from proctor.store import Store

    store = Store.open(path)
    try:
        [grade_set] = [g for g in store.grades.grade_sets() if g.model == "m"]
        return sorted(store.grades.grade_rows(grade_set.id, "self-rating"))
    finally:
        store.close()


def main() -> None:
    defaults = [5, 40, 2, 16]
    given = [int(a) for a in sys.argv[1:5]]
    queries, passages, workers, concurrency = given + defaults[len(given):]
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp) / "dl19.db"
            proctor("import", "exampp", DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz", "--store", base)
            proctor("import", "bank", DL19 / "dl19-questions-graded.jsonl.gz", "--store", base)
            results = {}
            for engine in ("local", "ray"):
                store = Path(tmp) / f"{engine}.db"
                shutil.copy(base, store)
                out = proctor("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m",
                              "--base-url", url, "--max-queries", queries, "--max-passages", passages,
                              "--concurrency", concurrency, "--engine", engine, "--ray-workers", workers,
                              "--format", "json")
                data = json.loads(out)
                grades = rows(store)
                results[engine] = (data, grades)
                print(f"{engine}: {data['graded_now']} pairs, {data['failures']} failures, "
                      f"{data['pairs_per_second']:.1f} pairs/s", flush=True)
            print("grades identical:", results["local"][1] == results["ray"][1])
    finally:
        server.stdin.close()
        server.wait(10)


if __name__ == "__main__":
    main()
