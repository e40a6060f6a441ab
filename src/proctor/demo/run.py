"""`proctor demo`: write the example collection, import it through the public readers, grade it with the
embedded default grader (embed:minilm), and print the EXAM-Qrels, EXAM-Cover and human-judgment
leaderboards with how each was made."""

from __future__ import annotations

import contextlib
from pathlib import Path

from proctor.cli import main as cli
from proctor.demo.write import write_collection


def run_demo(out: str | Path) -> int:
    """Run the demo into folder `out` (the store is rebuilt each time); return an exit status."""
    out = Path(out)
    paths = write_collection(out / "collection")
    store = out / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    steps = [
        ["import", "queries", str(paths["queries"])],
        ["import", "corpus", str(paths["corpus"])],
        ["import", "runs", *sorted(str(p) for p in paths["runs"].iterdir())],
        ["import", "qrels", str(paths["qrels"])],
        ["import", "bank", str(paths["bank"])],
        ["grade", "--method", "embedding", "--llm", "embed:minilm"],
        ["info"],
        ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--format", "md"],
        ["leaderboard", "--measure", "nDCG@5", "--format", "md"],
        ["leaderboard", "--metric", "cover", "--min-grade", "4", "--budget", "2", "--format", "md"],
        ["leaderboard", "--metric", "cover", "--min-grade", "4", "--budget", "2", "--missing", "skip",
         "--format", "md"],
        ["leaderboard", "--measure", "nDCG@5", "--qrels", "official", "--format", "md"],
    ]
    for step in steps:
        print(f"\n$ proctor {' '.join(step)} --store {store}", flush=True)
        status = cli([*step, "--store", str(store)])
        if status != 0:
            return status
    qrels_file = out / "exam.qrels"
    print(f"\n$ proctor qrels --store {store} > {qrels_file}", flush=True)
    with open(qrels_file, "w", encoding="utf-8") as handle, contextlib.redirect_stdout(handle):
        status = cli(["qrels", "--store", str(store)])
    print(f"\nDone. The store is {store}; EXAM-Qrels are in {qrels_file}. The grades come from the embedded "
          "default grader (all-MiniLM-L6-v2 similarity); `proctor grade --method self-rating --llm ...` grades "
          "with an LLM.")
    return status
