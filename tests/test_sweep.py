"""The one-pass sweep gives the same leaderboards as single commands."""

from __future__ import annotations

import json

import pytest

from demo_fixture import demo_run_fixture  # noqa: F401  (a fixture)
from inprocess import run_cli
from proctor.evaluate.sources import load_runs
from proctor.evaluate.sweep import sweep
from proctor.gradesets.resolve import resolve_grade_set
from proctor.store import Store


@pytest.mark.slow  # loads the embedding model (torch) once per process
def test_sweep_equals_single_leaderboards(demo_run):
    store_path = demo_run.root / "demo.db"
    store = Store.open(store_path)
    try:
        boards = sweep(store, resolve_grade_set(store), load_runs(store, None), budget=3)
    finally:
        store.close()
    assert len(boards) == 5 * 3 + 1 + 5
    for board in boards:
        d = board.description
        if "measure" in d:
            args = ["--measure", d["measure"]] + (["--min-grade", d["relevance_level"]]
                                                   if d["relevance_level"] is not None else [])
        else:
            args = ["--metric", "cover", "--min-grade", d["min_grade"], "--budget", 3]
        single = json.loads(run_cli("leaderboard", "--store", store_path, *args, "--format", "json").out)
        assert [(s["system"], s["score"]) for s in single["systems"]] == [(e.system, e.score) for e in board.entries]
