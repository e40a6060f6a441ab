"""`--engine ray` on a local Ray instance (2 CPUs): Ray Data workers render and ask, the driver alone writes
the store; the grades equal the in-process engine's, a second run has nothing left to do."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from contextlib import closing

import pytest

from conftest import raw_script, raw_write
from fake_openai import FakeOpenAI
from proctor.grading import GradeOptions, MethodChoice, run_grade_set
from proctor.llm.config import BackendConfig
from proctor.store import Store

# a local Ray cluster starts per module (~10 s), each test ~8-10 s; Ray found, not imported, at collection
pytestmark = [pytest.mark.slow, pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray")]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    import ray
    import ray.data

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False  # drawn to a captured stream: no one reads them
    yield
    ray.shutdown()


def _rows(path) -> dict:
    with closing(Store.open(path)) as store:
        return {g.id: sorted((x.query_id, x.passage_id, x.question_id, x.grade, x.parse_status, x.raw_reply)
                             for x in store.grades.records(g)) for g in store.grades.grade_sets()}


def test_ray_engine_grades_like_the_in_process_engine(cli, demo_store, tmp_path):
    local = tmp_path / "local.db"
    local.write_bytes(demo_store.read_bytes())
    with FakeOpenAI() as server:
        args = ["grade", "--method", "self-rating", "--llm", "openai:m", "--base-url", server.base_url,
                "--format", "json"]
        assert cli(*args, "--store", local).code == 0
        asked = server.requests
        result = cli(*args, "--store", demo_store, "--engine", "ray", "--ray-workers", "2")
        assert result.code == 0, result.err
        data = json.loads(result.out)
        assert data["graded_now"] == 72 and data["failures"] == 0 and server.requests == 2 * asked
        again = json.loads(cli(*args, "--store", demo_store, "--engine", "ray").out)
        assert again["graded_now"] == 0 and server.requests == 2 * asked
    assert _rows(demo_store) == _rows(local)
    assert Store.open(demo_store).caches.cache_count() == Store.open(local).caches.cache_count() == 72


def test_ray_engine_refuses_what_it_cannot_run(cli, demo_store):
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "replay:nothing.jsonl",
                 "--engine", "ray")
    assert result.code == 2 and "Traceback" not in result.err


def test_ray_engine_answers_from_the_cache_before_asking_workers(cli, demo_store):
    """Grades dropped, cache kept (two thirds of it): the re-grade asks the server only for the uncached third."""
    with FakeOpenAI() as server:
        args = ["grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m", "--base-url",
                server.base_url, "--format", "json"]
        assert cli(*args).code == 0  # the in-process engine fills the cache
        before = _rows(demo_store)
        dropped = raw_script(demo_store, "DELETE FROM grades",  # behind Proctor's back, as another program would
                             "DELETE FROM llm_cache WHERE key IN (SELECT key FROM llm_cache ORDER BY key LIMIT 24)")
        asked = server.requests
        assert dropped == 24
        data = json.loads(cli(*args, "--engine", "ray", "--ray-workers", "1").out)  # one worker process to start
        assert data["graded_now"] == 72 and data["failures"] == 0 and data["cache_hits"] == 72 - dropped
        assert server.requests - asked == dropped == data["llm_calls"]  # only the uncached pairs went to workers
        raw_write(demo_store, "DELETE FROM grades")
        again = json.loads(cli(*args, "--engine", "ray", "--ray-workers", "1").out)
        assert again["cache_hits"] == 72 and again["llm_calls"] == 0 and server.requests - asked == dropped
    assert _rows(demo_store) == before
    assert Store.open(demo_store).caches.cache_count() == 72


def test_a_killed_ray_worker_is_restarted_and_its_batch_graded_once(demo_store, tmp_path):
    """The first worker to receive a batch kills its own process before asking; Ray restarts it and retries
    the batch: every pair is asked once, recorded once, and the store has one row per pair."""
    marker = tmp_path / "died"

    class DyingConfig:  # defined here so that Ray ships it to the workers by value
        def __init__(self, config: BackendConfig, marker: str) -> None:
            self.config, self.marker = config, marker

        def build(self, method: str):
            config, marker = self.config, self.marker

            class Dying:
                async def complete(self, requests):
                    try:
                        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                    except FileExistsError:
                        return await backend.complete(requests)
                    os._exit(1)  # the worker process dies mid-run, its batch unanswered

            backend = config.build(method)
            return Dying()

    store = Store.open(demo_store)
    with FakeOpenAI() as server:
        config = BackendConfig("openai:m", base_url=server.base_url)
        backend = config.build("self-rating")
        options = GradeOptions(progress=False, engine="ray", ray_workers=2, method_name="self-rating",
                               backend_config=DyingConfig(config, str(marker)))

        async def grade_and_close():  # the driver checks the endpoint with its client: close it in the same loop
            try:
                return await run_grade_set(store, MethodChoice("self-rating"), backend, options)
            finally:
                await backend.aclose()

        grade_set, [summary] = asyncio.run(grade_and_close())
        assert marker.exists()  # a worker did die
        assert summary.graded == 72 and summary.failures == 0 and summary.calls == 72 and server.requests == 72
    rows = list(store.grades.grade_rows(grade_set.id, "self-rating"))
    assert len(rows) == len({r[:3] for r in rows}) == 72 and all(r[3] is not None for r in rows)
    store.close()
