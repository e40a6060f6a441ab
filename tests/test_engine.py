"""The engine and the runner in-process (not through subprocesses): planning per grade set and step,
resume, results carried between steps in memory, failed replies never cached."""

from __future__ import annotations

import asyncio

import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from proctor.grading import GradeOptions, GradeRequest, grade
from proctor.grading.engine import Engine
from proctor.grading.plan import items_of, make_plan
from proctor.grading.runner import MethodChoice, grade_set_for, run_grade_set
from proctor.llm.config import BackendConfig
from proctor.methods import get_method, user_method
from proctor.methods.aggregate import CRITERIA, sum_label
from proctor.store import Store


@pytest.fixture
def store(tmp_path):
    s = Store.create_or_open(seed_demo(tmp_path))
    yield s
    s.close()


def _backend(server, model: str = "m"):
    return BackendConfig(spec=f"openai:{model}", base_url=server.base_url).build("self-rating")


def _engine(store: Store, server, grade_set, **limits) -> Engine:
    method = get_method("self-rating")
    plan = make_plan(store, items_of(store, method, (grade_set.bank, grade_set.bank_version)),
                     store.grades.graded(grade_set.id, "self-rating"),
                     GradeOptions(depth=20, max_passages=limits.get("max_passages")))
    return Engine(store, method, _backend(server), plan, grade_set=grade_set.id,
                  options=GradeOptions(progress=False))


def test_the_engine_plans_per_grade_set_resumes_and_keeps_every_result(store):
    with FakeOpenAI() as server:
        backend = _backend(server)
        grade_set = grade_set_for(store, MethodChoice("self-rating"), backend, GradeOptions())
        with store.transaction():
            store.grades.ensure_grade_set(grade_set)
        part = _engine(store, server, grade_set, max_passages=2)
        assert (part.plan.pairs, part.plan.already) == (4 * 2 * 3, 0)
        summary = asyncio.run(part.arun())
        assert summary.graded == 24 and server.requests == 24 and len(part.results) == 24
        rest = _engine(store, server, grade_set)
        assert (rest.plan.pairs, rest.plan.already) == (72, 24)
        summary = asyncio.run(rest.arun())
        assert summary.graded == 48 and server.requests == 72
        assert len(rest.results) == 72  # earlier grades and new ones: what a later step reads
    stored = {(q, p, i): g for q, p, i, g in store.grades.grade_rows(grade_set.id, "self-rating")}
    assert {k: v[0] for k, v in rest.results.items()} == stored


def test_failed_replies_are_recorded_but_never_cached(store):
    with FakeOpenAI(reply=lambda prompt: "") as server:
        request = GradeRequest("self-rating", BackendConfig(spec="openai:m", base_url=server.base_url),
                               GradeOptions(progress=False, max_queries=1))
        grade_set, [summary] = asyncio.run(grade(store, request))
        assert summary.failures == summary.graded == 18 and store.caches.cache_count() == 0
        _, [again] = asyncio.run(grade(store, request))
        assert again.already_graded == 0 and again.graded == 18 and server.requests == 36


def test_the_runner_carries_step_results_in_memory_into_the_aggregation(store):
    def reply(prompt: str) -> str:
        return str(sum(map(ord, prompt)) % 4)

    with FakeOpenAI(reply=reply) as server:
        backend = BackendConfig(spec="openai:m", base_url=server.base_url).build("four-prompts")
        choice = MethodChoice("four-prompts", aggregate="sum")
        grade_set, summaries = asyncio.run(run_grade_set(store, choice, backend, GradeOptions(progress=False)))
        assert [s.method for s in summaries] == ["criteria", "four-prompts-sum"]
        assert grade_set.step == "four-prompts-sum" and grade_set.params["aggregate"] == "sum"
        criteria: dict = {}
        for qid, pid, criterion, g in store.grades.grade_rows(grade_set.id, "criteria"):
            criteria.setdefault((qid, pid), {})[criterion] = g
        labels = {(q, p): g for q, p, _, g in store.grades.grade_rows(grade_set.id, "four-prompts-sum")}
        assert len(labels) == 24
        assert all(labels[k] == sum_label([v[c] for c in CRITERIA]) for k, v in criteria.items())
        # run again: nothing is sent, the aggregation is recomputed from the stored criteria alone
        sent = server.requests
        _, again = asyncio.run(run_grade_set(store, choice, backend, GradeOptions(progress=False)))
        assert server.requests == sent and again[0].already_graded == 96 and again[1].graded == 24


def test_a_changed_prompt_is_a_new_grade_set_with_nothing_done(store, tmp_path):
    template = tmp_path / "t.yaml"
    template.write_text("name: self-rating\nversion: mine\ntemplate: |-\n  Q: {question}\n  C: {context}\n")
    with FakeOpenAI() as server:
        backend = _backend(server)
        packaged = grade_set_for(store, MethodChoice("self-rating"), backend, GradeOptions())
        mine = grade_set_for(store, MethodChoice("self-rating", templates={"self-rating": user_method(str(template))}),
                             backend, GradeOptions())
    assert packaged.id != mine.id and packaged.bank == mine.bank and packaged.params == mine.params
    assert mine.prompt_version.startswith("mine+")
    assert packaged.prompt_version == get_method("self-rating").template.version


def test_a_grade_set_id_is_stable_and_depends_on_everything_that_changes_grades(store):
    with FakeOpenAI() as server:
        a = grade_set_for(store, MethodChoice("self-rating"), _backend(server), GradeOptions())
        b = grade_set_for(store, MethodChoice("self-rating"), _backend(server), GradeOptions())
        other_model = grade_set_for(store, MethodChoice("self-rating"), _backend(server, "n"), GradeOptions())
        hot = grade_set_for(store, MethodChoice("self-rating"),
                            BackendConfig(spec="openai:m", base_url=server.base_url, probabilities=True)
                            .build("self-rating"), GradeOptions())
    assert a.id == b.id and len(a.id) == 10
    assert len({a.id, other_model.id, hot.id}) == 3


def test_a_batch_of_cache_keys_are_the_keys_of_each_prompt():
    """The engine computes a chunk's response-cache keys at once: the very keys of `cache_key`, so an existing
    cache still answers (prompts with quotes, escapes, control characters, non-ASCII, lone line separators)."""
    from proctor.llm.cache import cache_key, cache_keys

    prompts = ["plain", 'a "quoted" \\ back\\slash', "tab\tnew\nline\x00\x1f", "é ü 中文 😀", "\u2028\u2029", ""]
    for params in ({"temperature": 0.0, "probabilities": False, "max_tokens": 16},
                   {"probabilities": True, "reply_tokens": 1, "temperature": 0.7, "max_tokens": 1, "ü": [1, "ß"]}):
        for backend, model in (("openai", "m"), ("hf", 'mödel "x"')):
            assert cache_keys(backend, model, prompts, params) == [cache_key(backend, model, p, params)
                                                                  for p in prompts]
