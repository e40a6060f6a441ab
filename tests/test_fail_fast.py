"""Fail fast (issue 18 item 10): the endpoint is checked before any pair is sent or pre-filtered, and a run
stops after a handful of consecutive connection or authentication failures, with the real error."""

from __future__ import annotations

import time

import pytest

from conftest import grades_of, store_dump
from fake_openai import FakeOpenAI
from proctor.llm.base import Reply
from proctor.llm.health import CONSECUTIVE_FATAL, Breaker, is_fatal
from proctor.store import Store


def test_nothing_listening_exits_fast_with_the_connection_error(cli, demo_store):
    started = time.monotonic()
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                 "--base-url", "http://127.0.0.1:9/v1")
    assert time.monotonic() - started < 10
    assert result.code != 0
    assert "cannot reach the server" in result.err and "Connection" in result.err and "127.0.0.1:9" in result.err
    assert "Traceback" not in result.err
    store = Store.open(demo_store)
    assert store.grades.grade_sets() == []  # nothing was sent: not even an empty grade set is left
    store.close()


def test_model_not_listed_and_refused_key(cli, demo_store, monkeypatch):
    with FakeOpenAI(models=["served-model"]) as server:
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:other",
                     "--base-url", server.base_url)
        assert result.code == 2 and "'other' is not served" in result.err and "served-model" in result.err
        assert server.requests == 0 and server.model_lists == 1
    with FakeOpenAI(key="right") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                     "--base-url", server.base_url)
        assert result.code == 2 and "API key was refused" in result.err and server.requests == 0


def test_a_run_stops_after_consecutive_auth_failures(cli, demo_store):
    answered: set[str] = set()

    def revoke_after_ten(prompt: str, attempt: int) -> str:
        if prompt in answered or len(answered) < 10:
            answered.add(prompt)
            return "ok"
        return "401"

    with FakeOpenAI(faults=revoke_after_ten) as server:
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                     "--base-url", server.base_url, "--concurrency", "2")
        assert result.code == 2 and "requests in a row failed: HTTP 401" in result.err, result.err
        assert server.requests <= 10 + CONSECUTIVE_FATAL + 2  # + the calls in flight; not the 72 of the pool
    grades = list(grades_of(demo_store, "self-rating", "m"))
    assert sum(g.parse_status == "number" for g in grades) == 10  # what was answered is kept


def test_breaker_counts_consecutive_fatal_failures_only():
    breaker = Breaker(limit=3)
    breaker.observe(Reply(text="3"))
    for error in ("gave up after 7 attempts: APIConnectionError: Connection error.", "HTTP 401: bad key"):
        assert is_fatal(error)
    assert not is_fatal("gave up after 7 attempts: HTTP 500: boom") and not is_fatal("empty reply")
    breaker.observe(Reply(error="HTTP 401: bad key"))
    breaker.observe(Reply(error="HTTP 401: bad key"))
    breaker.observe(Reply(error="gave up after 3 attempts: HTTP 500: boom"))  # the server answered: count restarts
    breaker.observe(Reply(error="HTTP 401: bad key"))
    assert not breaker.tripped
    breaker.observe(Reply(error="HTTP 401: bad key"))
    breaker.observe(Reply(error="HTTP 401: bad key"))
    assert breaker.tripped and "3 requests in a row" in breaker.message("m")
    first = Breaker()
    first.observe(Reply(error="gave up after 7 attempts: APIConnectionError: Connection error."))
    assert first.tripped and "the first request failed" in first.message("m")


def test_a_fleet_passes_the_check_when_one_server_answers(cli, demo_store):
    with FakeOpenAI() as server:
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                     "--base-url", f"http://127.0.0.1:9/v1,{server.base_url}")
        assert result.code == 0, result.err
        assert server.model_lists == 1 and server.requests > 0
    grades = list(grades_of(demo_store, "self-rating", "m"))
    assert grades and all(g.parse_status != "failed" for g in grades)
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m2",
                 "--base-url", "http://127.0.0.1:9/v1,http://127.0.0.1:7/v1")
    assert result.code == 2 and "none of the 2 servers can grade" in result.err and "Traceback" not in result.err


@pytest.mark.parametrize("refusal", ["unreachable", "model not served", "key refused"])
def test_a_refused_endpoint_leaves_the_store_as_it_was(cli, demo_store, monkeypatch, refusal):
    """Nothing was sent: no empty grade set (nor its kept counts) is left behind; the dump is the same."""
    before = store_dump(demo_store)
    server = FakeOpenAI(models=["served-model"] if refusal == "model not served" else None,
                        key="right" if refusal == "key refused" else None)
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    with server:
        url = "http://127.0.0.1:9/v1" if refusal == "unreachable" else server.base_url
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m", "--base-url", url,
                     "--no-progress")
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert store_dump(demo_store) == before
    assert "grade set" not in cli("info", "--store", demo_store).out
