"""Failed replies when grading: they are never cached and are retried up to --max-attempts across runs; a
run where everything failed exits 3, one with some failures exits 0 and says how many; a 200 that is no
completion says what came back; an unparseable reply cached by an older release is asked again."""

from __future__ import annotations

import json

from conftest import raw_rows, raw_script, raw_write
from fake_openai import FakeOpenAI
from grading_fixture import grade_args
from proctor.store import Store


def test_failed_replies_are_not_cached_and_are_retried_up_to_max_attempts(cli, demo_store):
    with FakeOpenAI(reply=lambda prompt: "") as server:
        runs = [cli(*grade_args(demo_store, server)) for _ in range(4)]
        assert [r.code for r in runs] == [3, 3, 3, 0]
        assert server.requests == 3 * 72  # the fourth run sends nothing: every pair failed 3 times
        assert json.loads(runs[3].out)["given_up"] == 72
        assert "every one of the 72 pairs graded now failed" in runs[0].err
    assert Store.open(demo_store).caches.cache_count() == 0
    failed = raw_rows(demo_store, "SELECT DISTINCT attempts, parse_status FROM grades")  # the attempts kept per row
    assert failed == [(3, "failed")]
    with FakeOpenAI() as server:  # more attempts allowed, a healthy server: they are graded now
        result = cli(*grade_args(demo_store, server, "--max-attempts", "4"))
        assert result.code == 0 and server.requests == 72 and json.loads(result.out)["failures"] == 0


def test_some_failures_exit_0_and_say_how_many(cli, demo_store):
    def faults(prompt: str, attempt: int) -> str:
        return "empty" if "bees" in prompt else "ok"

    with FakeOpenAI(faults=faults) as server:
        result = cli(*grade_args(demo_store, server))
    data = json.loads(result.out)
    assert result.code == 0 and 0 < data["failures"] < 72 and data["exit_status"] == 0
    assert f"{data['failures']} of 72 pairs failed" in result.err


def test_a_200_that_is_no_completion_names_what_came_back(cli, demo_store):
    with FakeOpenAI(faults=lambda prompt, attempt: "html") as server:
        result = cli(*grade_args(demo_store, server, "--max-queries", "1"))
    reasons = json.loads(result.out)["failure_reasons"]
    assert result.code == 3 and list(reasons) == [
        "HTTP 200 text/html, not a chat completion: '<html><body><h1>502 Bad Gateway</h1></body></html>'"]
    assert "AttributeError" not in result.err


def test_an_unparseable_reply_cached_by_an_older_release_is_asked_again(cli, demo_store):
    with FakeOpenAI(reply=lambda prompt: "") as server:
        assert cli(*grade_args(demo_store, server, "--max-queries", "1")).code == 3
    assert Store.open(demo_store).caches.cache_count() == 0  # nothing failed is cached now; put one in as 0.1.0 did
    raw_write(demo_store, "DELETE FROM grades")
    with FakeOpenAI() as server:
        first = cli(*grade_args(demo_store, server, "--max-queries", "1"))
        sent = server.requests
    with FakeOpenAI(reply=lambda prompt: "") as server:
        raw_script(demo_store, "UPDATE llm_cache SET reply = '{\"text\": \"\", \"tokens\": 0}'",  # as 0.1.0 did
                   "DELETE FROM grades")
        again = cli(*grade_args(demo_store, server, "--max-queries", "1"))
        assert first.code == 0 and sent == 18 and server.requests == 18  # asked, not answered from the cache
        assert json.loads(again.out)["cache_hits"] == 0
