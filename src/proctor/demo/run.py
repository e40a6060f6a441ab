"""`proctor demo`: write the example collection, import it through the public readers, grade it with the
embedded default grader (embed:minilm), and print the EXAM-Qrels, EXAM-Cover and human-judgment
leaderboards with how each was made. A pipeline over the Python API (`proctor.api`), not the CLI; every
step is headed by the command that does the same."""

from __future__ import annotations

import sys
from pathlib import Path

from proctor import api
from proctor.demo.write import write_collection
from proctor.io.trec import write_qrels
from proctor.outputs import atomic_file

BOARDS = (
    ("--measure P@3 --min-grade 4", {"measure": "P@3", "min_grade": 4}),
    ("--measure nDCG@5", {"measure": "nDCG@5"}),
    ("--metric cover --min-grade 4 --budget 2", {"metric": "cover", "min_grade": 4, "budget": 2}),
    ("--metric cover --min-grade 4 --budget 2 --missing skip",
     {"metric": "cover", "min_grade": 4, "budget": 2, "missing": "skip"}),
    ("--measure nDCG@5 --qrels official", {"measure": "nDCG@5", "judgments": "official"}),
)


def run_demo(out: str | Path) -> int:
    """Run the demo into folder `out` (the store is rebuilt each time); return an exit status."""
    out = Path(out)
    paths = write_collection(out / "collection")
    path = out / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    store = api.open_store(path, create=True)
    try:
        _import(store, paths)
        _step(f"grade --method embedding --llm embed:minilm --store {path}")
        grade_set, summaries = api.grade(store, "embedding", "embed:minilm", progress=False)
        print(f"graded {summaries[-1].graded} pairs into grade set {grade_set.id} ({grade_set.method} / "
              f"{grade_set.model})")
        _step(f"info --store {path}")
        sys.stdout.write(api.info_text(store.counts()))
        for flags, options in BOARDS:
            _step(f"leaderboard {flags} --format md --store {path}")
            board = api.leaderboard(store, **options)
            for line in board.notes:
                print(f"proctor: {line}", file=sys.stderr)
            sys.stdout.write(api.render(board, "md"))
        qrels_file = out / "exam.qrels"
        _step(f"qrels --store {path} > {qrels_file}")
        _, labels = api.qrels(store)
        with atomic_file(qrels_file) as handle:
            write_qrels(labels, handle)
    finally:
        store.close()
    print(f"\nDone. The store is {path}; EXAM-Qrels are in {qrels_file}. The grades come from the embedded "
          "default grader (all-MiniLM-L6-v2 similarity); `proctor grade --method self-rating --llm ...` grades "
          "with an LLM.")
    return 0


def _import(store, paths: dict[str, Path]) -> None:
    for kind in ("queries", "corpus", "runs", "qrels", "bank"):
        files = sorted(paths[kind].iterdir()) if kind == "runs" else [paths[kind]]
        _step(f"import {kind} {' '.join(str(f) for f in files)} --store {store.path}")
        for report in api.import_into(store, kind, files):
            print(f"proctor: {report.summary()}", file=sys.stderr)


def _step(command: str) -> None:
    print(f"\n$ proctor {command}", flush=True)
