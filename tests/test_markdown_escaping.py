"""Markdown outputs (leaderboards, verify answers, verify spurious) escape what comes from input files: run
names and question texts never become HTML, links or extra table cells."""

from __future__ import annotations

import pytest

from inprocess import run_cli

EVIL = "evil|<img_src=x_onerror=alert(1)>[click](javascript:alert(2))"


@pytest.mark.slow  # loads the embedding model (torch) once per process
def test_markdown_outputs_escape_what_comes_from_input_files(demo_store, tmp_path):
    import json

    run = tmp_path / "evil.run"
    run.write_text("".join(f"q1 Q0 d10{i} {i + 1} {10 - i} {EVIL}\n" for i in range(3)))
    assert run_cli("import", "runs", run, "--store", demo_store).code == 0
    bank = tmp_path / "evil.jsonl"
    bank.write_text(json.dumps({"query_id": "q1", "items": [
        {"question_id": "q1/evil", "question_text": "<script>alert(3)</script> | [x](javascript:alert(4))"}]}) + "\n")
    assert run_cli("import", "bank", bank, "--store", demo_store, "--name", "evil").code == 0
    assert run_cli("grade", "--store", demo_store, "--method", "embedding", "--bank", "evil").code == 0
    outputs = [
        run_cli("leaderboard", "--store", demo_store, "--measure", "P@3", "--min-grade", "1", "--format", "md"),
        run_cli("verify", "answers", "--store", demo_store, "--format", "md"),
        run_cli("verify", "spurious", "--store", demo_store, "--min-grade", "1", "--format", "md"),
    ]
    for result in outputs:
        assert result.code == 0, result.err
        text = result.out
        assert "<img" not in text and "<script" not in text and "](javascript:" not in text, text
        assert "alert" not in text or "\\|" in text  # a | inside a name or text does not split a table cell
    assert "alert" in outputs[0].out and "alert" in outputs[1].out
