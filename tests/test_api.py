"""The Python API: the example of docs/api.md runs as written; a leaderboard through the API is the same
text as through the CLI; grading works inside a running event loop (Jupyter); DataFrames with pandas."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys

import pytest

from conftest import ROOT, seed_demo
from proctor import api


@pytest.fixture
def graded(tmp_path):
    """The demo store graded by replaying its recorded example grades."""
    from proctor.demo.write import write_collection

    path = seed_demo(tmp_path)
    recorded = write_collection(tmp_path / "again")["exampp"]
    store = api.open_store(path)
    api.grade(store, "self-rating", f"replay:{recorded}", progress=False)
    store.close()
    return path


def test_docs_example_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))  # the blocks in order, one program
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/api.md", "exec"), {"__name__": "docs_example"})
    out = capsys.readouterr().out
    assert "72 pairs graded" in out and "Kendall tau" in out and "['import', 'grade:recorded', 'evaluate']" in out
    assert "qrels from grade set" in out and "**Significance**" in out
    assert "Cover(rel=4)@2 names rel=4 but min_grade is 3" in out
    assert "Cover(rel=4)@2 ['Cover', 'NEXAM', 'Nuggets', 'Citations']" in out


@pytest.mark.parametrize(("args", "measures", "options"), [
    (["--measure", "P@3", "--min-grade", "4"], "P@3", {"min_grade": 4}),
    (["--measure", "nDCG@5", "--format", "json", "--per-query"], "nDCG@5", {}),
    (["--metric", "cover", "--min-grade", "4", "--budget", "2", "--missing", "skip", "--format", "md"],
     "Cover(rel=4,missing=skip)@2", {}),
    (["--measure", "Cover(rel=4,missing=skip)@2", "--format", "md"], "Cover(rel=4,missing=skip)@2", {}),
    (["--metric", "cover", "--min-grade", "3", "--normalize", "pool"], "NEXAM(rel=3,norm=pool)@20", {}),
    (["--measure", "nDCG@5", "--qrels", "official"], "nDCG@5", {"judgments": "official"}),
    (["--measure", "P@3", "--measure", "EXAM-Cover@2", "--min-grade", "4", "--format", "json"],
     ["P@3", "Cover(rel=4)@2"], {"min_grade": 4}),
])
def test_same_leaderboard_through_api_and_cli(graded, cli, args, measures, options):
    """A command's flags (the `--metric` modes too) and the API's measure strings give the same output."""
    result = cli("leaderboard", "--store", graded, *args)
    assert result.code == 0, result.err
    flags = dict(zip(args[::2], args[1::2], strict=False))
    store = api.open_store(graded)
    try:
        board = api.leaderboard(store, measures, **options)
    finally:
        store.close()
    assert api.render(board, flags.get("--format", "tsv"), per_query="--per-query" in args) == result.out


def test_grade_inside_a_running_event_loop(tmp_path):
    from proctor.demo.write import write_collection

    path = seed_demo(tmp_path)
    recorded = write_collection(tmp_path / "again")["exampp"]

    async def notebook_cell():
        store = api.open_store(path)
        try:
            grade_set, summaries = api.grade(store, "self-rating", f"replay:{recorded}", progress=False)
            return grade_set, summaries, api.labels(store).qrels
        finally:
            store.close()

    grade_set, summaries, qrels = asyncio.run(notebook_cell())
    assert summaries[-1].graded == 72 and sum(len(v) for v in qrels.values()) == 24


def test_frames_hold_the_plain_objects(graded):
    pandas = pytest.importorskip("pandas")
    store = api.open_store(graded)
    try:
        board = api.leaderboard(store, "P@3", min_grade=4)
        qrels = api.labels(store).qrels
    finally:
        store.close()
    frame = api.to_frame(board)
    assert isinstance(frame, pandas.DataFrame)
    assert frame.to_dict("records") == api.as_rows(board)
    labels = api.to_frame(qrels)
    assert len(labels) == 24 and {(r.query_id, r.passage_id): r.label for r in labels.itertuples()} == {
        (q, p): label for q, per in qrels.items() for p, label in per.items()}


def test_import_proctor_is_lazy():
    code = ("import sys, proctor; assert 'proctor.api' not in sys.modules; "
            "from proctor import api; assert proctor.leaderboard is api.leaderboard; "
            "from proctor.experiment import run_experiment; assert proctor.run_experiment is run_experiment")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(ROOT / "src")})


def test_api_and_cli_refuse_with_the_same_words(graded, cli):
    """An API error names parameters; the CLI spells the same message with its flags."""
    from proctor.api import commands

    with pytest.raises(api.UsageError) as refused:
        commands.leaderboard_measures(commands.LeaderboardOptions(score="recall"))
    assert str(refused.value) == "score applies to metric nuggets and metric citations only"
    result = cli("leaderboard", "--store", graded, "--score", "recall")
    assert result.code == 2
    assert result.err.strip() == "proctor: error: --score applies to --metric nuggets and --metric citations only"
