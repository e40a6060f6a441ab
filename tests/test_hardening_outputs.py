"""Outputs are written to a temporary file in the target folder and renamed into place: never through a
symlink, never half-written, no leftovers, and a wrong target is a clear error."""

from __future__ import annotations

import pytest

from conftest import run_process


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_export_to_a_folder_is_refused_without_leftovers(demo_store, tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    result = run_process("export", "exampp", "--store", demo_store, "--out", target)
    assert result.code == 2 and "is a folder" in result.err and "Traceback" not in result.err
    assert _listing(target) == [] and not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_export_replaces_a_symlink_instead_of_writing_through_it(demo_store, tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    link = tmp_path / "export.jsonl"
    link.symlink_to(outside)
    assert run_process("export", "exampp", "--store", demo_store, "--out", link).code == 0
    assert outside.read_text() == "keep me" and not link.is_symlink() and link.stat().st_size > 0


def test_bank_export_yaml_to_a_missing_folder_is_refused(demo_store, tmp_path):
    result = run_process("bank", "export", "--store", demo_store, "--as", "yaml", "--out", tmp_path / "no" / "b.yaml")
    assert result.code == 2 and "does not exist" in result.err and "Traceback" not in result.err


def test_analyze_out_that_is_a_file_is_refused(demo_store, tmp_path):
    assert run_process("grade", "--store", demo_store, "--method", "embedding").code == 0
    official = tmp_path / "o.json"
    official.write_text('{"strong": 1, "partial": 2, "middling": 3, "weak": 4}')
    target = tmp_path / "report"
    target.write_text("a file")
    result = run_process("analyze", "--store", demo_store, "--official", official, "--out", target)
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
    result = run_process("bank", "generate", "--queries", queries, "--llm", "openai:m", "--base-url",
                         "http://127.0.0.1:9/v1", "--out", out)
    assert result.code == 2 and "Traceback" not in result.err


def test_analyze_never_writes_through_a_symlink_inside_its_folder(demo_store, tmp_path):
    assert run_process("grade", "--store", demo_store, "--method", "embedding").code == 0
    official = tmp_path / "o.json"
    official.write_text('{"strong": 1, "partial": 2, "middling": 3, "weak": 4}')
    out = tmp_path / "report"
    out.mkdir()
    outside = tmp_path / "precious.md"
    outside.write_text("keep me")
    (out / "report.md").symlink_to(outside)
    result = run_process("analyze", "--store", demo_store, "--official", official, "--out", out,
                         "--measures", "P@3", "--budget", "3")
    assert result.code == 0, result.err
    assert outside.read_text() == "keep me" and not (out / "report.md").is_symlink()
    assert not [p for p in out.rglob("*.partial")]
    (out / "plots").rename(tmp_path / "plots-elsewhere")
    (out / "plots").symlink_to(tmp_path / "plots-elsewhere")
    refused = run_process("analyze", "--store", demo_store, "--official", official, "--out", out)
    assert refused.code == 2 and "plots is a symlink" in refused.err


EVIL = "evil|<img_src=x_onerror=alert(1)>[click](javascript:alert(2))"


def test_markdown_outputs_escape_what_comes_from_input_files(demo_store, tmp_path):
    import json

    run = tmp_path / "evil.run"
    run.write_text("".join(f"q1 Q0 d10{i} {i + 1} {10 - i} {EVIL}\n" for i in range(3)))
    assert run_process("import", "runs", run, "--store", demo_store).code == 0
    bank = tmp_path / "evil.jsonl"
    bank.write_text(json.dumps({"query_id": "q1", "items": [
        {"question_id": "q1/evil", "question_text": "<script>alert(3)</script> | [x](javascript:alert(4))"}]}) + "\n")
    assert run_process("import", "bank", bank, "--store", demo_store, "--name", "evil").code == 0
    assert run_process("grade", "--store", demo_store, "--method", "embedding", "--bank", "evil").code == 0
    outputs = [
        run_process("leaderboard", "--store", demo_store, "--measure", "P@3", "--min-grade", "1", "--format", "md"),
        run_process("verify", "answers", "--store", demo_store, "--format", "md"),
        run_process("verify", "spurious", "--store", demo_store, "--min-grade", "1", "--format", "md"),
    ]
    for result in outputs:
        assert result.code == 0, result.err
        text = result.out
        assert "<img" not in text and "<script" not in text and "](javascript:" not in text, text
        assert "alert" not in text or "\\|" in text  # a | inside a name or text does not split a table cell
    assert "alert" in outputs[0].out and "alert" in outputs[1].out
