"""The statistics libraries (scipy, scikit-learn, krippendorff) load only where a command computes statistics:
a leaderboard without them starts as fast as before they became core dependencies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import seed_demo

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("scipy", "sklearn", "krippendorff")


def _loaded_after(*args: str) -> list[str]:
    """The statistics libraries in sys.modules after `proctor ARGS` in a fresh interpreter (a fresh process is
    the point: in this one the tests have loaded them all)."""
    code = ("import sys; from proctor.cli import main; "
            f"code = main({list(args)!r}); "
            f"print('LOADED', code, *[m for m in {LIBRARIES!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"})
    line = next(line for line in proc.stdout.splitlines() if line.startswith("LOADED"))
    assert line.split()[1] == "0", proc.stderr
    return line.split()[2:]


def test_a_leaderboard_loads_no_statistics_library(tmp_path):
    store = str(seed_demo(tmp_path))
    assert _loaded_after("leaderboard", "--store", store, "--measure", "P@10", "--qrels", "official") == []


def test_correlation_loads_scipy(tmp_path, cli):
    store = str(seed_demo(tmp_path))
    boards = {}
    for measure in ("P@10", "RR"):
        result = cli("leaderboard", "--store", store, "--measure", measure, "--qrels", "official", "--format", "tsv")
        assert result.code == 0, result.err
        boards[measure] = tmp_path / f"{measure}.tsv"
        boards[measure].write_text(result.out)
    loaded = _loaded_after("correlate", str(boards["P@10"]), "--official", str(boards["RR"]), "--bootstrap", "0")
    assert loaded == ["scipy"]
