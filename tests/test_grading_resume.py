"""Resuming a grade after `kill -9` (a real process killed mid-run, the point of these tests): received
replies are durable within 200 ms, so a resumed run sends again only what was in flight or not yet committed;
two graders never share a grade set (a dead holder's lock is taken); with faults injected, no pair is lost
and a further run retries only the failures."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from conftest import ROOT, opened_store, raw_rows
from fake_openai import FakeOpenAI, prompt_grade
from grading_fixture import grade_args
from proctor.store import Store


def _big_store(folder: Path, passages: int = 400) -> Path:
    """Two queries, `passages` passages each ranked by one run, three questions per query."""
    path = folder / "big.db"
    store = Store.create_or_open(path)
    with store.transaction():
        store.corpus.upsert_queries([("q1", "bees"), ("q2", "ants")])
        for q in ("q1", "q2"):
            store.corpus.upsert_passages((f"{q}-p{i}", f"passage {i} about {q}") for i in range(passages))
            store.corpus.upsert_rankings(("run", q, f"{q}-p{i}", i + 1, float(-i)) for i in range(passages))
        store.banks.add_bank_version("b", "v1", "test", None, [
            {"question_id": f"{q}/{k}", "query_id": q, "kind": "question", "text": f"question {k} of {q}"}
            for q in ("q1", "q2") for k in range(3)])
    store.close()
    return path


def _grade_process(args: list[str]) -> subprocess.Popen:
    """`proctor ARGS` started as a process of its own, to be killed."""
    return subprocess.Popen([sys.executable, "-m", "proctor", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _kill_9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_after_kill_9_only_replies_of_the_last_200_ms_are_sent_again(cli, tmp_path):
    store = _big_store(tmp_path, passages=100)
    total = 2 * 100 * 3
    with FakeOpenAI(latency=0.05) as server:
        args = grade_args(store, server, "--depth", "100", "--concurrency", "8")
        proc = _grade_process(args)
        assert server.wait_for_requests(150), "the grade never got going"
        _kill_9(proc)
        server.latency = 0  # slow only to be killed mid-run: what is sent again is counted in requests, not time
        first = server.requests
        with opened_store(store) as opened:
            committed = opened.counts()["grades"]
        resumed = cli(*args)
        assert resumed.code == 0, resumed.err
        assert json.loads(resumed.out)["already_graded"] == committed
        sent_again = first + (server.requests - first) - total
    # at 8 in flight and 50 ms a reply: 8 in flight + at most 200 ms of replies (32) may be lost
    assert 0 <= sent_again <= 8 + 32, (first, committed, sent_again)
    with opened_store(store) as opened:
        assert opened.counts()["grades"] == total


def test_a_received_reply_is_in_the_response_cache_within_200_ms(demo_store):
    """The first reply is received, every later request stalls: 300 ms later a `kill -9` finds that reply
    committed, grade and cache entry both — by the timed commit alone (no batch ever fills)."""
    answered: list[str] = []

    def first_only(prompt: str, attempt: int) -> str:
        if not answered or prompt in answered:
            answered.append(prompt)
            return "ok"
        return "stall"

    with FakeOpenAI(faults=first_only, stall_seconds=60) as server:
        proc = _grade_process(grade_args(demo_store, server, "--concurrency", "1"))
        # the second request is sent only once the first reply was received and recorded
        assert server.wait_for_requests(2, timeout=60), "the grade never got going"
        time.sleep(0.3)
        _kill_9(proc)
    [(raw,)] = raw_rows(demo_store, "SELECT raw_reply FROM grades")  # read as another program would
    [(cached,)] = raw_rows(demo_store, "SELECT reply FROM llm_cache")
    assert json.loads(cached)["text"] == raw == str(prompt_grade(answered[0]))


def test_two_graders_never_share_a_grade_set(cli, demo_store):
    with FakeOpenAI(latency=0.2) as server:
        first = _grade_process(grade_args(demo_store, server, "--concurrency", "1"))
        assert server.wait_for_requests(2, timeout=30), "the first grade never got going"
        second = cli(*grade_args(demo_store, server))
        assert second.code == 2 and f"being graded by pid {first.pid}" in second.err, second.err
        _kill_9(first)
        server.latency = 0  # slow only while the first grade held the grade set
        before = server.requests
        third = cli(*grade_args(demo_store, server, "--concurrency", "8"))  # a dead holder's lock is taken
        assert third.code == 0, third.err
        assert server.requests - before <= 72 - json.loads(third.out)["already_graded"]


def test_fault_injection_kill_9_resume_and_retry_only_failures(cli, tmp_path):
    """429s, 500s, stalls, empty replies; kill -9 mid-run; resume; then a further run."""
    store = _big_store(tmp_path, passages=100)
    total = 2 * 100 * 3
    answered: Counter = Counter()
    answered_300 = threading.Event()

    def faults(prompt: str, attempt: int) -> str:
        h = int(hashlib.md5(prompt.encode()).hexdigest(), 16) % 20
        action = {0: "429", 1: "500", 2: "stall"}.get(h, "ok") if attempt == 1 else "ok"
        action = "empty" if h == 3 else action
        if action == "ok":
            answered[prompt] += 1
            if sum(answered.values()) >= 300:
                answered_300.set()
        return action

    extra = ("--depth", "100", "--concurrency", "8", "--backoff-max", "0.05", "--timeout", "0.5")  # 25x a reply
    with FakeOpenAI(latency=0.02, faults=faults, stall_seconds=3) as server:
        args = grade_args(store, server, *extra, retries=3)
        proc = _grade_process(args)
        assert answered_300.wait(60), "the grade never got going"
        _kill_9(proc)
        server.latency = 0  # slow only to be killed mid-run
        resumed = cli(*args)
        assert resumed.code == 0, resumed.err
        with opened_store(store) as opened:
            rows = {(g.query_id, g.passage_id, g.question_id): g.parse_status
                    for s in opened.grades.grade_sets() for g in opened.grades.records(s)}
        assert len(rows) == total  # no pair lost
        failed = sum(1 for s in rows.values() if s == "failed")
        assert failed == sum(1 for p in server.attempts if int(hashlib.md5(p.encode()).hexdigest(), 16) % 20 == 3)
        sent_again = sum(n - 1 for n in answered.values() if n > 1)
        assert sent_again <= 8 + 80, sent_again  # in flight + 200 ms of replies at 8 × 50 replies/s
        before = server.requests
        further = cli(*args)
        assert further.code == 3  # only the failed pairs were tried, and they failed again
        asked = server.requests - before
        assert asked == failed  # one request per failed pair (an empty 200 is not retried within a run)
        assert json.loads(further.out)["already_graded"] == total - failed
