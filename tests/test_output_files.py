"""Outputs are written to a temporary file in the target folder and renamed into place: never through a
symlink, never half-written, no leftovers, and a wrong target is a clear error."""

from __future__ import annotations

import pytest

from demo_fixture import graded_demo_fixture, graded_demo_store_fixture  # noqa: F401  (fixtures)
from inprocess import run_cli


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_export_to_a_folder_is_refused_without_leftovers(demo_store, tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    result = run_cli("export", "exampp", "--store", demo_store, "--out", target)
    assert result.code == 2 and "is a folder" in result.err and "Traceback" not in result.err
    assert _listing(target) == [] and not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_export_replaces_a_symlink_instead_of_writing_through_it(demo_store, tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    link = tmp_path / "export.jsonl"
    link.symlink_to(outside)
    assert run_cli("export", "exampp", "--store", demo_store, "--out", link).code == 0
    assert outside.read_text() == "keep me" and not link.is_symlink() and link.stat().st_size > 0


def test_bank_export_yaml_to_a_missing_folder_is_refused(demo_store, tmp_path):
    result = run_cli("bank", "export", "--store", demo_store, "--as", "yaml", "--out", tmp_path / "no" / "b.yaml")
    assert result.code == 2 and "does not exist" in result.err and "Traceback" not in result.err


def _analyze(store, out, *extra):
    """`analyze` of `store` into `out` against the demo's official ranks (written beside `out`)."""
    official = out.parent / "o.json"
    official.write_text('{"strong": 1, "partial": 2, "middling": 3, "weak": 4}')
    return run_cli("analyze", "--store", store, "--official", official, "--out", out, *extra)


@pytest.mark.slow  # loads the embedding model (torch) once per process
def test_analyze_out_that_is_a_file_is_refused(graded_demo, tmp_path):
    target = tmp_path / "report"
    target.write_text("a file")
    result = _analyze(graded_demo, target)  # graded with --method embedding
    assert result.code == 2 and "exists and is not a folder" in result.err and target.read_text() == "a file"


@pytest.mark.parametrize("target", ["folder", "dangling"])
def test_bank_generate_out_checks_the_target_before_calling_the_llm(tmp_path, target):
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tbees\n")
    out = tmp_path / "out"
    if target == "folder":
        out.mkdir()
    else:
        out = tmp_path / "missing" / "bank.jsonl"
    result = run_cli("bank", "generate", "--queries", queries, "--llm", "openai:m", "--base-url",
                     "http://127.0.0.1:9/v1", "--out", out)
    assert result.code == 2 and "Traceback" not in result.err


@pytest.mark.slow  # loads the embedding model (torch) once per process
@pytest.mark.usefixtures("stand_in_plots")  # asserts nothing about the plot files
def test_analyze_never_writes_through_a_symlink_inside_its_folder(graded_demo, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    outside = tmp_path / "precious.md"
    outside.write_text("keep me")
    (out / "report.md").symlink_to(outside)
    result = _analyze(graded_demo, out, "--measures", "P@3", "--budget", "3")  # graded with --method embedding
    assert result.code == 0, result.err
    assert outside.read_text() == "keep me" and not (out / "report.md").is_symlink()
    assert not [p for p in out.rglob("*.partial")]
    (out / "plots").rename(tmp_path / "plots-elsewhere")
    (out / "plots").symlink_to(tmp_path / "plots-elsewhere")
    refused = _analyze(graded_demo, out)
    assert refused.code == 2 and "plots is a symlink" in refused.err
