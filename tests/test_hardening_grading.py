"""Hardening of grading and the store: failed replies are never cached and are retried up to
--max-attempts across runs; a run where everything failed exits 3; received replies are durable within
200 ms; writers wait for the lock and then say so; two graders never share a grade set; a full disk, a
read-only store, a folder or a foreign SQLite file give one clear line; a 200 that is no completion says
what came back."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_process, seed_demo
from fake_openai import FakeOpenAI
from proctor.store import Store


def grade_args(store: Path, server, *extra: str, retries: int = 0) -> list[str]:
    return ["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:m", "--base-url",
            server.base_url, "--max-retries", str(retries), "--format", "json", *extra]


def test_failed_replies_are_not_cached_and_are_retried_up_to_max_attempts(demo_store):
    with FakeOpenAI(reply=lambda prompt: "") as server:
        runs = [run_process(*grade_args(demo_store, server)) for _ in range(4)]
        assert [r.code for r in runs] == [3, 3, 3, 0]
        assert server.requests == 3 * 72  # the fourth run sends nothing: every pair failed 3 times
        assert json.loads(runs[3].out)["given_up"] == 72
        assert "every one of the 72 pairs graded now failed" in runs[0].err
    assert Store.open(demo_store).caches.cache_count() == 0
    failed = sqlite3.connect(demo_store).execute("SELECT DISTINCT attempts, parse_status FROM grades").fetchall()
    assert failed == [(3, "failed")]
    with FakeOpenAI() as server:  # more attempts allowed, a healthy server: they are graded now
        result = run_process(*grade_args(demo_store, server, "--max-attempts", "4"))
        assert result.code == 0 and server.requests == 72 and json.loads(result.out)["failures"] == 0


def test_some_failures_exit_0_and_say_how_many(demo_store):
    def faults(prompt: str, attempt: int) -> str:
        return "empty" if "bees" in prompt else "ok"

    with FakeOpenAI(faults=faults) as server:
        result = run_process(*grade_args(demo_store, server))
    data = json.loads(result.out)
    assert result.code == 0 and 0 < data["failures"] < 72 and data["exit_status"] == 0
    assert f"{data['failures']} of 72 pairs failed" in result.err


def test_a_200_that_is_no_completion_names_what_came_back(demo_store):
    with FakeOpenAI(faults=lambda prompt, attempt: "html") as server:
        result = run_process(*grade_args(demo_store, server, "--max-queries", "1"))
    reasons = json.loads(result.out)["failure_reasons"]
    assert result.code == 3 and list(reasons) == [
        "HTTP 200 text/html, not a chat completion: '<html><body><h1>502 Bad Gateway</h1></body></html>'"]
    assert "AttributeError" not in result.err


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


def test_after_kill_9_only_replies_of_the_last_200_ms_are_sent_again(tmp_path):
    store = _big_store(tmp_path)
    total = 2 * 400 * 3
    with FakeOpenAI(latency=0.05) as server:
        args = [sys.executable, "-m", "proctor", *grade_args(store, server, "--depth", "400", "--concurrency", "8")]
        proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "HF_HUB_OFFLINE": "1"})
        deadline = time.time() + 60
        while server.requests < 300 and time.time() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first = server.requests
        time.sleep(0.3)
        committed = sqlite3.connect(store).execute("SELECT COUNT(*) FROM grades").fetchone()[0]
        resumed = run_process(*grade_args(store, server, "--depth", "400", "--concurrency", "8"))
        assert resumed.code == 0, resumed.err
        assert json.loads(resumed.out)["already_graded"] == committed
        sent_again = first + (server.requests - first) - total
    # at 8 in flight and 50 ms a reply: 8 in flight + at most 200 ms of replies (32) may be lost
    assert 0 <= sent_again <= 8 + 32, (first, committed, sent_again)
    assert sqlite3.connect(store).execute("SELECT COUNT(*) FROM grades").fetchone()[0] == total


def test_a_second_writer_waits_for_the_lock_then_says_so(demo_store, tmp_path):
    holder = sqlite3.connect(demo_store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    queries = tmp_path / "q.tsv"
    queries.write_text("q9\tanother query\n")
    try:
        start = time.time()
        result = run_process("import", "queries", queries, "--store", demo_store, "--lock-timeout", "1")
        waited = time.time() - start
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.code == 2 and "another process is writing to the store" in result.err, result.err
    assert "Traceback" not in result.err and 1 <= waited < 10
    assert run_process("import", "queries", queries, "--store", demo_store).code == 0


def test_two_graders_never_share_a_grade_set(demo_store):
    with FakeOpenAI(latency=0.2) as server:
        args = [sys.executable, "-m", "proctor", *grade_args(demo_store, server, "--concurrency", "1")]
        first = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env={**os.environ, "HF_HUB_OFFLINE": "1"})
        deadline = time.time() + 30
        while server.requests < 2 and time.time() < deadline:
            time.sleep(0.05)
        second = run_process(*grade_args(demo_store, server))
        assert second.code == 2 and f"being graded by pid {first.pid}" in second.err, second.err
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        before = server.requests
        third = run_process(*grade_args(demo_store, server, "--concurrency", "8"))  # a dead holder's lock is taken
        assert third.code == 0, third.err
        assert server.requests - before <= 72 - json.loads(third.out)["already_graded"]


def test_a_full_disk_is_one_clear_line_and_the_store_stays_usable(demo_store, cli, monkeypatch):
    import proctor.store as store_module

    connect = store_module._connect

    def small_disk(path, lock_timeout):
        db = connect(path, lock_timeout)
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 2}")
        return db

    with FakeOpenAI(reply=lambda prompt: "4 " + "x" * 3000) as server:
        monkeypatch.setattr(store_module, "_connect", small_disk)
        full = cli(*grade_args(demo_store, server))
        monkeypatch.setattr(store_module, "_connect", connect)
        assert full.code == 2 and "the disk is full" in full.err and "Traceback" not in full.err, full.err
        assert len(full.err.strip().splitlines()) <= 2
        assert sqlite3.connect(demo_store).execute("PRAGMA integrity_check").fetchone() == ("ok",)
        resumed = cli(*grade_args(demo_store, server))
    assert resumed.code == 0 and json.loads(resumed.out)["graded_now"] + json.loads(resumed.out)[
        "already_graded"] == 72


def test_read_only_stores_can_be_read(demo_store, tmp_path):
    assert run_process("import", "bank", tmp_path / "collection" / "bank.jsonl", "--store", demo_store).code == 0
    store = Store.open(demo_store, read_only=True)
    assert store.counts()["queries"] == 4
    with pytest.raises(sqlite3.OperationalError):
        store.corpus.upsert_queries([("q9", "x")])
    store.close()
    if os.geteuid() != 0:  # root may write anyway: then the CLI path is the same as a writable file
        demo_store.chmod(0o444)
        demo_store.parent.chmod(0o555)
        try:
            assert run_process("info", "--store", demo_store).code == 0
        finally:
            demo_store.parent.chmod(0o755)


@pytest.mark.parametrize("kind", ["folder", "foreign"])
def test_a_folder_or_a_foreign_sqlite_file_is_no_store(tmp_path, kind):
    path = tmp_path / "x.db"
    if kind == "folder":
        path.mkdir()
    else:
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE mine (a)")
        db.commit()
        db.close()
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tbees\n")
    for args in (("info",), ("import", "queries", queries)):
        result = run_process(*args, "--store", path)
        assert result.code == 2 and "Traceback" not in result.err, result.err
        assert ("is a folder" if kind == "folder" else "not a Proctor store") in result.err
    if kind == "foreign":
        tables = sqlite3.connect(path).execute("SELECT name FROM sqlite_master").fetchall()
        assert tables == [("mine",)]


def test_demo_store_fixture_is_unaffected(tmp_path):
    assert Store.open(seed_demo(tmp_path)).counts()["passages"] == 24


def test_fault_injection_kill_9_resume_and_retry_only_failures(tmp_path):
    """429s, 500s, stalls, empty replies; kill -9 mid-run; resume; then a further run."""
    import hashlib
    from collections import Counter

    store = _big_store(tmp_path, passages=150)
    total = 2 * 150 * 3
    answered: Counter = Counter()

    def faults(prompt: str, attempt: int) -> str:
        h = int(hashlib.md5(prompt.encode()).hexdigest(), 16) % 20
        action = {0: "429", 1: "500", 2: "stall"}.get(h, "ok") if attempt == 1 else "ok"
        action = "empty" if h == 3 else action
        if action == "ok":
            answered[prompt] += 1
        return action

    extra = ("--depth", "150", "--concurrency", "8", "--backoff-max", "0.05", "--timeout", "1")
    with FakeOpenAI(latency=0.02, faults=faults, stall_seconds=3) as server:
        args = [sys.executable, "-m", "proctor", *grade_args(store, server, *extra, retries=3)]
        proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "HF_HUB_OFFLINE": "1"})
        deadline = time.time() + 60
        while sum(answered.values()) < 300 and time.time() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        resumed = run_process(*grade_args(store, server, *extra, retries=3))
        assert resumed.code == 0, resumed.err
        db = sqlite3.connect(store)
        rows = dict(((q, p, i), s) for q, p, i, s in db.execute(
            "SELECT query_id, passage_id, question_id, parse_status FROM grades JOIN grade_items USING (item)"))
        assert len(rows) == total  # no pair lost
        failed = sum(1 for s in rows.values() if s == "failed")
        assert failed == sum(1 for p in server.attempts if int(hashlib.md5(p.encode()).hexdigest(), 16) % 20 == 3)
        sent_again = sum(n - 1 for n in answered.values() if n > 1)
        assert sent_again <= 8 + 80, sent_again  # in flight + 200 ms of replies at 8 × 50 replies/s
        before = server.requests
        further = run_process(*grade_args(store, server, *extra, retries=3))
        assert further.code == 3  # only the failed pairs were tried, and they failed again
        asked = server.requests - before
        assert asked == failed  # one request per failed pair (an empty 200 is not retried within a run)
        assert json.loads(further.out)["already_graded"] == total - failed


def test_an_unparseable_reply_cached_by_an_older_release_is_asked_again(demo_store):
    with FakeOpenAI(reply=lambda prompt: "") as server:
        assert run_process(*grade_args(demo_store, server, "--max-queries", "1")).code == 3
    db = sqlite3.connect(demo_store)
    keys = [row[0] for row in db.execute("SELECT key FROM llm_cache")]
    assert keys == []  # nothing failed is cached now; put one in as 0.1.0 did
    db.execute("DELETE FROM grades")
    db.commit()
    db.close()
    with FakeOpenAI() as server:
        first = run_process(*grade_args(demo_store, server, "--max-queries", "1"))
        sent = server.requests
    with FakeOpenAI(reply=lambda prompt: "") as server:
        store = sqlite3.connect(demo_store)
        store.execute("UPDATE llm_cache SET reply = '{\"text\": \"\", \"tokens\": 0}'")
        store.execute("DELETE FROM grades")
        store.commit()
        store.close()
        again = run_process(*grade_args(demo_store, server, "--max-queries", "1"))
        assert first.code == 0 and sent == 18 and server.requests == 18  # asked, not answered from the cache
        assert json.loads(again.out)["cache_hits"] == 0
