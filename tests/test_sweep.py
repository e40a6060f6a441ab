"""The one-pass sweep gives the same leaderboards as single commands."""

from __future__ import annotations

import json

from conftest import run_process
from proctor.evaluate.sources import load_runs
from proctor.evaluate.sweep import sweep
from proctor.gradesets.resolve import resolve_grade_set
from proctor.store import Store


def test_sweep_equals_single_leaderboards(tmp_path):
    assert run_process("demo", "--out", tmp_path).code == 0
    store_path = tmp_path / "demo.db"
    store = Store.open(store_path)
    boards = sweep(store, resolve_grade_set(store), load_runs(store, None), budget=3)
    assert len(boards) == 5 * 3 + 1 + 5
    for board in boards:
        d = board.description
        if "measure" in d:
            args = ["--measure", d["measure"]] + (["--min-grade", d["relevance_level"]]
                                                   if d["relevance_level"] is not None else [])
        else:
            args = ["--metric", "cover", "--min-grade", d["min_grade"], "--budget", 3]
        single = json.loads(run_process("leaderboard", "--store", store_path, *args, "--format", "json").out)
        assert [(s["system"], s["score"]) for s in single["systems"]] == [(e.system, e.score) for e in board.entries]
