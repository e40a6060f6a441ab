"""`proctor grade` against a real local OpenAI-compatible server that injects 429s, 500s, stalls past the
timeout, empty and non-numeric replies; the cache; resume after `kill -9`."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, grades_of, raw_rows, raw_write
from fake_openai import FakeOpenAI


def bucket(prompt: str) -> int:
    return int(hashlib.sha1(prompt.encode()).hexdigest(), 16) % 10


def faults(prompt: str, attempt: int) -> str:
    b = bucket(prompt)
    if b == 0 and attempt == 1:
        return "429"
    if b == 1 and attempt == 1:
        return "500"
    if b == 2 and attempt == 1:
        return "stall"
    if b == 3:
        return "empty"
    if b == 4:
        return "text"
    if b == 5:
        return "unanswerable"
    if b == 6:
        return "500"  # never succeeds
    return "ok"


def grade_args(store, server, *extra, method="self-rating"):
    return ["grade", "--store", store, "--method", method, "--llm", "openai:fake-model", "--base-url",
            server.base_url, "--concurrency", "8", "--timeout", "1", "--max-retries", "2", "--backoff-max", "0.05",
            "--format", "json", *extra]


def test_faults_end_as_grades_or_recorded_failures(cli, demo_store):
    with FakeOpenAI(faults=faults, stall_seconds=3) as server:
        result = cli(*grade_args(demo_store, server))
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["pairs_in_pool"] == 72 and summary["graded_now"] == 72
    grades = list(grades_of(demo_store, "self-rating", "fake-model"))
    assert len(grades) == 72
    statuses = {g.parse_status for g in grades}
    assert statuses <= {"number", "defaulted", "unanswerable", "failed"}
    failed = [g for g in grades if g.parse_status == "failed"]
    assert failed and all(g.grade is None and g.extra.get("error") or g.extra.get("reason") for g in failed)
    assert summary["failures"] == len(failed) == summary["by_status"]["failed"]
    assert any("gave up" in (g.extra or {}).get("error", "") for g in failed)
    assert any((g.extra or {}).get("reason") == "empty reply" for g in failed)
    assert {g.grade for g in grades if g.parse_status == "defaulted"} == {1}
    assert {g.grade for g in grades if g.parse_status == "unanswerable"} == {0}
    assert any((g.extra or {}).get("attempts", 1) > 1 for g in grades if g.parse_status == "number")


def test_grades_are_the_servers_and_rerun_uses_the_cache(cli, demo_store):
    with FakeOpenAI() as server:
        first = cli(*grade_args(demo_store, server))
        assert first.code == 0, first.err
        calls = server.requests
        assert calls == 72
        # grades come from the replies, and a second run has nothing left to do
        # the grade set as it stands after the run: its grades and when it was made
        assert json.loads(first.out)["grade_set"]["grades"] == 72
        assert json.loads(first.out)["grade_set"]["created"]
        assert all(d["max_tokens"] == 16 and "logprobs" not in d for d in server.decoding)
        again = json.loads(cli(*grade_args(demo_store, server)).out)
        assert again["graded_now"] == 0 and again["already_graded"] == 72 and server.requests == calls
        # drop the grades: the re-grade is answered from the cache, without asking the server
        raw_write(demo_store, "DELETE FROM grades")  # behind Proctor's back: its kept counts must notice
        cached = json.loads(cli(*grade_args(demo_store, server)).out)
        assert cached["cache_hits"] == 72 and server.requests == calls
    labels = cli("qrels", "--store", demo_store, "--method", "self-rating")
    assert labels.code == 0 and {int(line.split()[3]) for line in labels.out.splitlines()} <= set(range(6))


def _snapshot(store) -> dict:
    return {(g.query_id, g.passage_id, g.question_id): (g.grade, g.parse_status, g.raw_reply)
            for g in grades_of(store, "self-rating", "fake-model")}


def _wait_for_grades(store, count: int, timeout: float = 60.0) -> None:
    """Until another process has committed `count` grades to the store (its commits are seen only by looking)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if raw_rows(store, "SELECT COUNT(*) FROM grades")[0][0] >= count:  # read as another program would
                return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)


def test_kill_9_then_rerun_equals_an_uninterrupted_run(cli, demo_store, tmp_path):
    reference = tmp_path / "reference.db"
    subprocess.run(["cp", demo_store, reference], check=True)
    with FakeOpenAI(latency=0.15) as server:
        args = [sys.executable, "-m", "proctor", *map(str, grade_args(demo_store, server))]
        args[args.index("8")] = "2"  # concurrency 2: slow enough to kill mid-run
        proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert server.wait_for_requests(20), "the grade never got going"
        _wait_for_grades(demo_store, 10)  # received replies are committed within 200 ms
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        partial = len(_snapshot(demo_store))
        assert 10 <= partial < 72
        server.latency = 0  # slow only to be killed mid-run: the replies, and so the grades, are the same
        resumed = cli(*grade_args(demo_store, server))
        assert resumed.code == 0
        assert json.loads(resumed.out)["already_graded"] == partial
        assert cli(*grade_args(reference, server)).code == 0
    got, want = _snapshot(demo_store), _snapshot(reference)
    assert got == want and len(got) == 72
    assert all(grade == int(reply) for grade, _, reply in got.values())


def test_qa_with_llm_verification(cli, demo_store):
    def reply(prompt: str) -> str:
        if prompt.startswith("Is the answer"):
            return "Yes." if 'answer "nectar' in prompt else "No"
        return "nectar, mostly" if "bees collect" in prompt else "the Moon"

    with FakeOpenAI(reply=reply) as server:
        result = cli(*grade_args(demo_store, server, "--max-queries", "1", "--verify", "llm", method="qa"))
        asked = server.requests
    assert result.code == 0, result.err
    grades = list(grades_of(demo_store, "qa", "fake-model"))
    # 18 answers, then one verification prompt per answer to check (a declared step of its own)
    assert len(grades) == 18 and 18 + 3 <= asked <= 18 * 2
    nectar = [g for g in grades if g.answer == "nectar, mostly"]
    assert nectar and all(g.grade == 1 and g.parse_status == "correct" and g.extra["verification"] == "llm"
                          for g in nectar)
    # the edit-distance rule alone would have rejected "nectar, mostly"; the verifier accepted it
    assert all(g.extra["edit_distance_verdict"] == "wrong" for g in nectar)
    others = [g for g in grades if g.answer == "the Moon"]
    assert all(g.grade == 0 and g.parse_status == "wrong" for g in others)


def test_grade_distribution_from_logprobs(cli, demo_store):
    with FakeOpenAI() as server:
        result = cli(*grade_args(demo_store, server, "--max-queries", "1", "--grade-probabilities"))
    assert result.code == 0, result.err
    # only the first token is read, so only one is asked for (with the alternatives the grade tokens are among)
    assert server.decoding and all(d["max_tokens"] == 1 and d["logprobs"] is True and d["top_logprobs"] == 10
                                   for d in server.decoding)
    assert json.loads(result.out)["grade_set"]["params"]["reply_tokens"] == 1
    grades = list(grades_of(demo_store, "self-rating", "fake-model"))
    assert len(grades) == 18 and {g.parse_status for g in grades} == {"distribution"}
    for g in grades:
        probabilities = {int(k): v for k, v in g.extra["probabilities"].items()}
        assert g.grade == int(g.raw_reply) == max(probabilities, key=probabilities.get)
        assert sum(probabilities.values()) == pytest.approx(1.0)


def test_llm_verification_is_cached_too(cli, demo_store):
    def reply(prompt: str) -> str:
        if prompt.startswith("Is the answer"):
            return "Yes."
        return "nectar, mostly"

    with FakeOpenAI(reply=reply) as server:
        args = grade_args(demo_store, server, "--max-queries", "1", "--verify", "llm", method="qa")
        assert cli(*args).code == 0
        first = {(g.passage_id, g.question_id): (g.grade, g.parse_status) for g in
                 grades_of(demo_store, "qa", "fake-model")}
        asked = server.requests
        raw_write(demo_store, "DELETE FROM grades")  # behind Proctor's back: the cache still answers
        again = json.loads(cli(*args).out)
        # answers and verdicts both come from the cache (each a declared step of its own)
        assert server.requests == asked and [s["cache_hits"] for s in again["steps"]] == [18, 18, 0]
    second = {(g.passage_id, g.question_id): (g.grade, g.parse_status) for g in
              grades_of(demo_store, "qa", "fake-model")}
    assert second == first and {status for _, status in first.values()} == {"correct"}
