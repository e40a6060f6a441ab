"""`proctor run --dry-run`: the plan before any LLM call, writing nothing; its pair counts are what the
real run then grades and its prompt-token estimate is the documented one over the prompts really sent."""

from __future__ import annotations

import json
import math

from fake_openai import FakeOpenAI
from test_experiment import EXPERIMENT, write_experiment

LLM_GRADER = """
[[grade]]
name = "llm"
method = "self-rating"
llm = "openai:fake-model"
base_url = "{url}"
max_retries = 0
max_passages = 4
"""


def test_dry_run_counts_equal_the_real_run_and_write_nothing(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAI() as server:
        path = write_experiment(tmp_path, EXPERIMENT + LLM_GRADER.format(url=server.base_url))
        dry = cli("run", path, "--dry-run", "--format", "json", "--price-in", "2", "--price-out", "10")
        assert dry.code == 0, dry.err
        assert not (tmp_path / "out").exists() and server.requests == 0
        plan = {g["grader"]: g for g in json.loads(dry.out)["graders"]}
        llm = plan["llm"]["steps"][0]
        assert (llm["pairs_in_pool"], llm["already_graded"], llm["to_grade"]) == (48, 0, 48)
        assert plan["recorded"]["steps"][0]["to_grade"] == 72 and plan["recorded"]["prompt_tokens"] == 0
        real = cli("run", path)
        assert real.code == 0, real.err
        manifest = json.loads((tmp_path / "out" / "run.json").read_text())
        for name in ("llm", "recorded"):
            assert manifest["steps"][f"grade:{name}"]["usage"]["graded_now"] == plan[name]["steps"][0]["to_grade"]
            assert manifest["grade_sets"][name]["id"] == plan[name]["grade_set"]
        sent = list(server.attempts)
        assert len(sent) == llm["prompts_to_send"]
        assert llm["prompt_tokens"] == sum(math.ceil(len(p) / 4) for p in sent)
        assert llm["completion_tokens"] == 48 * (llm["completion_tokens"] // 48) > 0
        expected = (llm["prompt_tokens"] * 2 + llm["completion_tokens"] * 10) / 1e6
        assert plan["llm"]["cost_usd"] == round(expected, 6)
        again = json.loads(cli("run", path, "--dry-run", "--format", "json").out)
        assert [g["steps"][0]["to_grade"] for g in again["graders"]] == [0, 0]
        assert [g["steps"][0]["already_graded"] for g in again["graders"]] == [72, 48]
        assert not any(s["would_run"] for s in again["steps"])


def test_dry_run_text(tmp_path, cli):
    path = write_experiment(tmp_path)
    result = cli("run", path, "--dry-run")
    assert result.code == 0, result.err
    assert "72 pairs in the pool, 0 already graded, 0 given up, 72 to grade; 0 prompts to send" in result.out
    assert "step import: would run" in result.out and not (tmp_path / "out").exists()
    assert cli("run", path, "--price-in", "1").code == 2


def test_failed_pairs_are_retried_by_the_next_run(tmp_path, cli, monkeypatch):
    from fake_openai import prompt_grade

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAI(faults=lambda prompt, attempt: "500" if attempt == 1 and prompt_grade(prompt) == 0 else "ok"
                    ) as server:
        path = write_experiment(tmp_path, EXPERIMENT + LLM_GRADER.format(url=server.base_url))
        assert cli("run", path, "--only", "import").code == 0
        assert cli("run", path, "--only", "grade:llm").code == 0
        step = json.loads((tmp_path / "out" / "run.json").read_text())["steps"]["grade:llm"]
        failed = step["usage"]["failures"]
        assert step["status"] == "incomplete" and 0 < failed < 48
        dry = json.loads(cli("run", path, "--dry-run", "--format", "json", "--only", "grade:llm").out)
        assert dry["graders"][0]["steps"][0]["to_grade"] == failed
        assert cli("run", path, "--only", "grade:llm").code == 0
        step = json.loads((tmp_path / "out" / "run.json").read_text())["steps"]["grade:llm"]
        assert (step["status"], step["usage"]["graded_now"], step["usage"]["failures"]) == ("done", failed, 0)
        assert cli("run", path, "--only", "grade:llm").code == 0
        assert json.loads((tmp_path / "out" / "run.json").read_text())["last_run"]["ran"] == []


def test_interrupted_grading_resumes(tmp_path, cli, monkeypatch):
    import os
    import signal
    import subprocess
    import sys
    import threading

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    fifth = threading.Event()  # set by the server when the 5th request comes in: no polling

    def count(prompt: str, attempt: int) -> str:
        if server.requests >= 5:
            fifth.set()
        return "ok"

    with FakeOpenAI(latency=0.1, faults=count) as server:
        grader = LLM_GRADER.format(url=server.base_url) + "concurrency = 1\n"
        path = write_experiment(tmp_path, EXPERIMENT + grader)
        proc = subprocess.Popen([sys.executable, "-m", "proctor", "run", str(path)], stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "OPENAI_API_KEY": "test"})
        fifth.wait(60)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        step = json.loads((tmp_path / "out" / "run.json").read_text())["steps"]["grade:llm"]
        assert step["status"] == "interrupted" and 0 < step["usage"]["graded_now"] < 48
        first = step["usage"]["graded_now"]
        server.latency = 0  # the resumed run needs no slow replies (43 of them, one at a time: 4 s of waiting)
        assert cli("run", path).code == 0
        manifest = json.loads((tmp_path / "out" / "run.json").read_text())
        assert manifest["last_run"]["ran"] == ["grade:llm", "evaluate"]
        assert manifest["steps"]["grade:llm"]["usage"]["graded_now"] == 48 - first
        assert manifest["grade_sets"]["llm"]["grades"] == 48


def test_dry_run_bounds_the_later_steps_of_multi_step_methods(tmp_path, cli):
    grader = LLM_GRADER.replace('"self-rating"', '"four-prompts"').replace('name = "llm"', 'name = "fp"')
    path = write_experiment(tmp_path, EXPERIMENT + grader.format(url="http://127.0.0.1:9/v1"))
    dry = cli("run", path, "--dry-run", "--format", "json", "--only", "grade:fp")
    assert dry.code == 0, dry.err
    first, later = json.loads(dry.out)["graders"][0]["steps"]
    assert first["step"] == "criteria" and first["to_grade"] > 0 and "at_most_prompts" not in first
    assert later["step"] == "four-prompts" and later["at_most_prompts"] == first["to_grade"]
    assert f"at most {first['to_grade']} prompts" in later["note"]


EMBEDDING_GRADER = """
[[grade]]
name = "minilm"
method = "embedding"
llm = "embed:minilm"
pairs_per_second = 48
"""


def test_dry_run_loads_no_model_and_estimates_time_from_measured_or_configured_throughput(tmp_path, cli,
                                                                                          monkeypatch):
    import proctor.llm.embed as embed

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAI() as server:
        path = write_experiment(tmp_path, EXPERIMENT + LLM_GRADER.format(url=server.base_url) + EMBEDDING_GRADER)

        def refuse(*args):
            raise AssertionError("a dry run loaded a model")

        monkeypatch.setattr(embed, "_encoder", refuse)
        dry = cli("run", path, "--dry-run", "--format", "json")
        assert dry.code == 0, dry.err
        plan = json.loads(dry.out)
        times = {g["grader"]: g["time"] for g in plan["graders"]}
        # configured: the experiment file's pairs_per_second; unknown where nothing says (and the total too)
        assert times["minilm"] == {"pairs": 72, "pairs_per_second": 48.0, "seconds": 1.5,
                                   "source": "configured: pairs_per_second in the experiment file"}
        assert times["llm"]["seconds"] is None and "--max-queries" in times["llm"]["source"]
        assert plan["seconds_estimate"] is None
        text = cli("run", path, "--dry-run").out
        assert "estimated time: ~2 s for 72 pairs at 48.0 pairs/s (configured" in text
        assert "grading in all: unknown" in text
        monkeypatch.undo()
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        # a trial run measures: the next dry run estimates from what it took
        assert cli("run", path, "--max-queries", "1").code == 0
        manifest = json.loads((tmp_path / "out" / "run.json").read_text())
        plan = json.loads(cli("run", path, "--dry-run", "--format", "json").out)
    for grader in plan["graders"]:
        steps = manifest["steps"][f"grade:{grader['grader']}"]["usage"]["steps"]
        graded, seconds = sum(s["graded_now"] for s in steps), sum(s["seconds"] for s in steps)
        time = grader["time"]
        assert time["source"].startswith(f"measured: {graded} pairs in {seconds:g} s by the last run")
        assert time["pairs"] == grader["steps"][0]["to_grade"] > 0
        assert time["pairs_per_second"] == round(graded / seconds, 3)
        assert time["seconds"] == round(time["pairs"] / (graded / seconds), 1)
    assert plan["seconds_estimate"] == round(sum(g["time"]["seconds"] for g in plan["graders"]), 1)


def test_pairs_per_second_must_be_positive(tmp_path, cli):
    path = write_experiment(tmp_path, EXPERIMENT + EMBEDDING_GRADER.replace("48", "0"))
    result = cli("run", path, "--dry-run")
    assert result.code == 2 and "pairs_per_second" in result.err and "exp.toml" in result.err
