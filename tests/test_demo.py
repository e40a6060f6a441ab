"""`proctor demo` grades the bundled collection with the embedded default grader and evaluates it; its
leaderboards put the systems in the order they were written to have. (The demo as a real process, from an
installed wheel: tests/test_wheel.py.)"""

from __future__ import annotations

import pytest

from demo_fixture import demo_run_fixture  # noqa: F401  (a fixture)
from inprocess import run_cli


@pytest.mark.slow  # loads the embedding model (torch) once per process
def test_demo_end_to_end(demo_run):
    assert "EXAM-Cover" in demo_run.out and "labels=human judgments" in demo_run.out
    assert "method=embedding" in demo_run.out and "all-MiniLM-L6-v2" in demo_run.out
    assert (demo_run.root / "demo.db").exists()
    qrels = (demo_run.root / "exam.qrels").read_text().splitlines()
    assert len(qrels) == 24


@pytest.mark.slow  # loads the embedding model (torch) once per process
def test_demo_collection_orders_systems_by_quality(demo_run):
    store = demo_run.root / "demo.db"
    for args in (["--measure", "nDCG@5"], ["--measure", "P@3", "--min-grade", "4"],
                 ["--metric", "cover", "--min-grade", "4", "--budget", "2"],
                 ["--measure", "nDCG@5", "--qrels", "official"]):
        rows = run_cli("leaderboard", "--store", store, *args).out.splitlines()[1:]
        order = [r.split("\t")[0] for r in rows if not r.startswith("partial")]
        assert order == ["strong", "middling", "weak"], args
