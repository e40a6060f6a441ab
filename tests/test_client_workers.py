"""`--workers N`: client processes send the requests of an `openai:` grade (this process renders, caches, parses
and commits): the same grades as one process, every pair asked once, the server's figures summed over the
workers; a worker that dies turns its outstanding requests into recorded failures, never a hang."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from types import SimpleNamespace

from conftest import grades_of
from fake_openai import FakeOpenAI
from grading_fixture import grade_args
from proctor.llm import make_backend
from proctor.llm.base import Request


def _grade(cli, store, urls: list[str], *extra: str) -> dict:
    result = cli(*grade_args(store, SimpleNamespace(base_url=",".join(urls)), "--concurrency", "4", *extra))
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_workers_grade_as_one_process_does(cli, demo_store, tmp_path):
    single = tmp_path / "single.db"
    single.write_bytes(demo_store.read_bytes())
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(FakeOpenAI(latency=0.02)) for _ in range(2)]
        one = _grade(cli, single, [s.base_url for s in servers])
        asked = sum(s.requests for s in servers)
        pooled = _grade(cli, demo_store, [s.base_url for s in servers], "--workers", "2")
        assert sum(s.requests for s in servers) == 2 * asked == 2 * 72  # every pair asked once
    assert pooled["graded_now"] == one["graded_now"] == 72 and pooled["failures"] == 0
    # the workers' per-server figures, summed: every request of the fleet counted once
    assert [s["url"] for s in pooled["servers"]] == [s.base_url for s in servers]
    assert sum(s["requests"] for s in pooled["servers"]) == 72
    assert ({(g.query_id, g.passage_id, g.question_id, g.grade) for g in grades_of(demo_store, "self-rating", "m")}
            == {(g.query_id, g.passage_id, g.question_id, g.grade) for g in grades_of(single, "self-rating", "m")})


def test_a_worker_that_dies_fails_its_requests_and_the_others_answer_them_from_then_on():
    with FakeOpenAI() as server:
        backend = make_backend("openai:m", method="self-rating",
                               options={"base_url": server.base_url, "workers": 2, "concurrency": 8})
        requests = [Request("q", f"p{n}", "i", f"prompt {n}", "question?", "context") for n in range(8)]

        async def run():
            try:
                server.holding = True  # every request stays in flight until the kill is done
                asking = asyncio.ensure_future(backend.complete(requests))
                assert await asyncio.to_thread(server.wait_for_requests, 8, 30)
                os.kill(backend._processes[0].pid, signal.SIGKILL)
                await asyncio.to_thread(backend._processes[0].join, 30)
                server.holding = False
                replies = await asyncio.wait_for(asking, 30)
                return replies, await asyncio.wait_for(backend.complete(requests), 30)  # the live worker alone
            finally:
                await backend.aclose()

        replies, later = asyncio.run(run())
    assert all(r.error is None and r.text.isdigit() for r in later)
    died = [r for r in replies if r.error]
    assert died and all(r.error.startswith("client worker 1 died") for r in died)
    assert len(died) < 8 and all(r.text and r.text.isdigit() for r in replies if not r.error)
