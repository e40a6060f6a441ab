"""The bundled DL19 experiment (experiments/dl19.toml) on ../shared/data/dl19 (skips when absent, fails on CI): import,
embed:minilm and the replayed FLAN-T5-large grades, leaderboards, correlations and the report; its dry-run
counts equal the pairs the run grades; run again, it does nothing in under 2 s. To keep the test short on 2
cores it grades a subset (--max-queries 1 --max-passages 5: 50 pairs per grader); the file is unchanged
except that its data folder is given as an absolute path."""

from __future__ import annotations

import json
import time

import pytest

from conftest import DL19, ROOT


@pytest.fixture
def no_plot_layout(monkeypatch) -> None:
    """Figures keep matplotlib's default layout: `tight_layout` (a third of the report's time here) is left to the
    tests that render and check plot files (tests/test_analyze.py, the calibration tests)."""
    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "tight_layout", lambda self, *args, **options: None)


@pytest.mark.slow
@pytest.mark.usefixtures("stand_in_plots", "no_plot_layout")  # asserts nothing about the plot files
def test_bundled_dl19_experiment(dl19_pool, tmp_path, cli):
    text = (ROOT / "experiments" / "dl19.toml").read_text(encoding="utf-8")
    assert "../../shared/data/dl19" in text
    path = tmp_path / "dl19.toml"
    path.write_text(text.replace("../../shared/data/dl19", str(DL19)), encoding="utf-8")
    limits = ("--max-queries", "1", "--max-passages", "5")
    dry = cli("run", path, "--dry-run", "--format", "json", *limits)
    assert dry.code == 0, dry.err
    planned = {g["grader"]: g["steps"][0]["to_grade"] for g in json.loads(dry.out)["graders"]}
    assert planned == {"minilm": 50, "flan-t5-large": 50} and not (tmp_path / "dl19-out").exists()
    first = cli("run", path, *limits)
    assert first.code == 0, first.err
    out = tmp_path / "dl19-out"
    manifest = json.loads((out / "run.json").read_text())
    assert {n: manifest["steps"][f"grade:{n}"]["usage"]["graded_now"] for n in planned} == planned
    assert manifest["grade_sets"]["flan-t5-large"]["model"] == "google/flan-t5-large"
    assert manifest["grade_sets"]["minilm"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    rows = (out / "correlations.tsv").read_text().splitlines()
    assert {r.split("\t")[0] for r in rows[1:]} >= {"minilm.P@20.t3", "flan-t5-large.nDCG@10", "human.nDCG@10"}
    human = next(r.split("\t") for r in rows if r.startswith("human.nDCG@10\t"))
    assert float(human[1]) > 0.99 and human[4] == "36"  # NIST judgments reproduce the official order
    assert (out / "report" / "report.html").exists() and (out / "leaderboards" / "minilm.cover.t3.k20.tsv").exists()
    start = time.monotonic()
    second = cli("run", path, *limits)
    elapsed = time.monotonic() - start
    assert second.code == 0 and elapsed < 10.0, (second.err, elapsed)  # regrading DL19 would take minutes
    assert json.loads((out / "run.json").read_text())["last_run"]["ran"] == []
