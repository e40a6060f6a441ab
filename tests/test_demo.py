"""`proctor demo` grades the bundled collection with the embedded default grader and evaluates it; its
leaderboards put the systems in the order they were written to have."""

from __future__ import annotations

from conftest import run_process


def test_demo_end_to_end(tmp_path):
    result = run_process("demo", "--out", tmp_path / "demo")
    assert result.code == 0, result.err
    assert "EXAM-Cover" in result.out and "labels=human judgments" in result.out
    assert "method=embedding" in result.out and "all-MiniLM-L6-v2" in result.out
    assert (tmp_path / "demo" / "demo.db").exists()
    qrels = (tmp_path / "demo" / "exam.qrels").read_text().splitlines()
    assert len(qrels) == 24


def test_demo_collection_orders_systems_by_quality(tmp_path):
    assert run_process("demo", "--out", tmp_path / "d").code == 0
    store = tmp_path / "d" / "demo.db"
    for args in (["--measure", "nDCG@5"], ["--measure", "P@3", "--min-grade", "4"],
                 ["--metric", "cover", "--min-grade", "4", "--budget", "2"],
                 ["--measure", "nDCG@5", "--qrels", "official"]):
        rows = run_process("leaderboard", "--store", store, *args).out.splitlines()[1:]
        order = [r.split("\t")[0] for r in rows if not r.startswith("partial")]
        assert order == ["strong", "middling", "weak"], args
