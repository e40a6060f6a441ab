"""The local transformers backend (`hf:PATH`) at speed without other replies: `--dtype` (checked at every door,
in the grade set's parameters only when not float32), ratings read in one forward pass equal to `generate`'s,
batches bucketed by length over the whole plan with the same grades, and out-of-memory back-off that never
fails the run. Tiny random-weight models with a real tokenizer (`tests/tiny_models.py`)."""

from __future__ import annotations

import json
import random

import pytest

from conftest import grades_of, opened_store
from proctor.api import commands
from proctor.errors import InputError, UsageError
from proctor.llm.base import Request
from tiny_models import tiny_models_fixture  # noqa: F401 (a fixture)

PASSAGES = ["The cat sat on the mat.", "Rain fell over the hills all night long, and the rivers rose.", "Dogs bark.",
            "A very long passage " * 30, "Hamlet is a tragedy written by William Shakespeare around 1600.",
            "Short.", "Photosynthesis turns light into chemical energy in plants.", "Volcanoes erupt lava."]


def _requests(rating: bool, max_tokens: int = 16) -> list[Request]:
    return [Request("q", f"p{n}", "i", f"Question: who? Context: {text} Rate 0-5.", "who?", text, max_tokens,
                    rating=rating) for n, text in enumerate(PASSAGES)]


def _backend(path, **options):
    from proctor.llm.hf import HFBackend

    return HFBackend(str(path), **options)


def test_a_dtype_is_checked_at_every_door(cli, demo_store, tmp_path):
    refused = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "hf:/nowhere", "--dtype", "half")
    assert refused.code == 2 and "--dtype" in refused.err and "'half'" in refused.err and "Traceback" not in refused.err
    with pytest.raises(UsageError, match=r"^dtype 'half': choose one of auto, bfloat16, float16, float32$"):
        commands.grade_request("self-rating", "hf:/nowhere", dtype="half")  # Python's words: the parameter
    experiment = tmp_path / "e.toml"
    experiment.write_text("[[grade]]\nmethod = 'self-rating'\nllm = 'hf:/nowhere'\ndtype = 'half'\n")
    from proctor.experiment.load import load_experiment

    with pytest.raises(InputError) as err:
        load_experiment(experiment)
    assert err.value.line == 4 and "dtype" in err.value.message and "'half' is not one of" in err.value.message
    with opened_store(demo_store) as store:
        assert store.grades.grade_sets() == []  # nothing was written


def test_float32_keeps_the_grade_set_ids_of_earlier_releases_other_dtypes_enter_them(tiny_models):
    from proctor.llm.hf import resolve_dtype

    default = _backend(tiny_models["tiny-t5"])
    assert default.dtype == "float32" and resolve_dtype(default.torch, "auto", "cpu") == "float32"
    # exactly the parameters every earlier release recorded, so the ids of existing grade sets stay
    assert default.params() == {"decoding": "greedy", "probabilities": False, "max_input": default.max_input}
    assert _backend(tiny_models["tiny-t5"], dtype="float32").params() == default.params()
    half = _backend(tiny_models["tiny-t5"], dtype="bfloat16")
    assert half.params() == {**default.params(), "dtype": "bfloat16"}
    assert str(half.net.dtype) == "torch.bfloat16" and str(default.net.dtype) == "torch.float32"


@pytest.mark.slow
def test_bfloat16_grades_into_a_grade_set_of_its_own(cli, demo_store, tiny_models):
    args = ("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"hf:{tiny_models['tiny-t5']}",
            "--max-queries", "1", "--max-passages", "2", "--format", "json")
    first, second = cli(*args), cli(*args, "--dtype", "bfloat16")
    assert first.code == 0 and second.code == 0, second.err
    ids = {json.loads(first.out)["grade_set"]["id"], json.loads(second.out)["grade_set"]["id"]}
    assert len(ids) == 2 and len(grades_of(demo_store, "self-rating", dtype="bfloat16")) == 6


@pytest.mark.parametrize("name", ["tiny-t5", "tiny-gpt2"])
def test_ratings_read_in_one_forward_pass_equal_the_generate_path(tiny_models, name):
    backend = _backend(tiny_models[name], probabilities=True)
    one_pass = backend._run(_requests(rating=True))
    generated = backend._run(_requests(rating=False))  # not a rating step: generated, scores of the first step
    first_token = backend._run(_requests(rating=False, max_tokens=1))
    assert backend.one_pass
    for fast, slow, token in zip(one_pass, generated, first_token, strict=True):
        assert fast.error is None and slow.error is None
        assert fast.probabilities.keys() == slow.probabilities.keys() == set(range(6))
        assert fast.probabilities == pytest.approx(slow.probabilities, abs=1e-6)
        assert max(fast.probabilities, key=fast.probabilities.get) == max(slow.probabilities,
                                                                          key=slow.probabilities.get)
        assert fast.text == token.text and fast.tokens == slow.tokens  # the first generated token, its prompt


def test_a_generation_setting_that_changes_the_first_step_keeps_generate(tiny_models):
    backend = _backend(tiny_models["tiny-t5"], probabilities=True)
    backend.net.generation_config.repetition_penalty = 1.3
    assert not backend.one_pass
    calls = []
    generate = backend.net.generate
    backend.net.generate = lambda **kw: calls.append(kw["input_ids"].shape[0]) or generate(**kw)
    replies = backend._run(_requests(rating=True))
    assert calls == [len(PASSAGES)] and all(r.probabilities for r in replies)


def test_replies_come_back_in_request_order_whatever_the_batching(tiny_models):
    requests = _requests(rating=False)
    alone = [_backend(tiny_models["tiny-t5"], batch_size=1)._run([r])[0] for r in requests]
    shuffled = list(range(len(requests)))
    random.Random(3).shuffle(shuffled)
    together = _backend(tiny_models["tiny-t5"], batch_size=8)._run([requests[i] for i in shuffled])
    assert [(r.text, r.tokens) for r in together] == [(alone[i].text, alone[i].tokens) for i in shuffled]


def test_the_plan_is_handed_out_shortest_first_over_the_whole_plan(demo_store):
    from proctor.grading import GradeOptions
    from proctor.grading.plan import items_of, make_plan
    from proctor.methods import get_method

    with opened_store(demo_store) as store:
        method = get_method("self-rating")
        plan = make_plan(store, items_of(store, method, store.banks.bank_version(None)), {}, GradeOptions(depth=10))
        in_order = list(plan.work(store))
        plan.by_length = True
        by_length = list(plan.work(store))
    assert len({w.query_id for w in in_order}) > 1  # several queries: the order is over all of them
    assert sorted(in_order, key=lambda w: len(w.passage) + len(w.question)) == by_length
    assert by_length != in_order and len(by_length) == plan.pairs


@pytest.mark.slow
def test_length_bucketing_over_the_plan_keeps_every_grade(cli, demo_store, tmp_path, tiny_models, monkeypatch):
    from proctor.llm.hf import HFBackend

    other = tmp_path / "other.db"
    other.write_bytes(demo_store.read_bytes())
    args = ("grade", "--method", "self-rating", "--llm", f"hf:{tiny_models['tiny-t5']}", "--batch-size", "4",
            "--max-queries", "2", "--max-passages", "4")
    assert cli(*args, "--store", demo_store).code == 0
    monkeypatch.setattr(HFBackend, "sorts_by_length", False)  # the plan's own order, as before
    assert cli(*args, "--store", other).code == 0
    bucketed = {(g.query_id, g.passage_id, g.question_id): (g.grade, g.parse_status, g.raw_reply)
                for g in grades_of(demo_store, "self-rating")}
    in_order = {(g.query_id, g.passage_id, g.question_id): (g.grade, g.parse_status, g.raw_reply)
                for g in grades_of(other, "self-rating")}
    assert len(bucketed) == 24 and bucketed == in_order


class OutOfMemoryAbove:
    """The model, raising CUDA's out-of-memory error (torch's own exception) on a pass of more than `limit`
    prompts — as a card does when a batch does not fit."""

    def __init__(self, net, limit: int) -> None:
        self.net, self.limit, self.sizes = net, limit, []

    def __getattr__(self, name):
        return getattr(self.net, name)

    def _check(self, size: int) -> None:
        import torch

        self.sizes.append(size)
        if size > self.limit:
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory. Tried to allocate for {size} prompts")

    def generate(self, **kw):
        self._check(kw["input_ids"].shape[0])
        return self.net.generate(**kw)

    def __call__(self, **kw):
        self._check(kw["input_ids"].shape[0])
        return self.net(**kw)


@pytest.mark.parametrize("rating", [False, True])
def test_out_of_memory_halves_the_batch_and_keeps_every_reply(tiny_models, capsys, rating):
    requests = _requests(rating=rating)
    expected = _backend(tiny_models["tiny-t5"], probabilities=True)._run(requests)
    backend = _backend(tiny_models["tiny-t5"], batch_size=8, probabilities=True)
    backend._net = OutOfMemoryAbove(backend.net, limit=3)
    replies = backend._run(requests)
    assert backend.net.sizes[:3] == [8, 4, 2] and backend.fits == 2 and max(backend.net.sizes[3:]) == 2
    assert [(r.text, r.tokens, r.error) for r in replies] == [(r.text, r.tokens, None) for r in expected]
    assert [r.probabilities for r in replies] == [pytest.approx(r.probabilities, abs=1e-6) for r in expected]
    err = capsys.readouterr().err
    assert "out of memory with 8 prompts a pass; 4 from now on" in err and "2 from now on" in err


def test_a_prompt_that_does_not_fit_alone_fails_and_the_run_goes_on(tiny_models):
    backend = _backend(tiny_models["tiny-t5"], batch_size=4)
    backend._net = OutOfMemoryAbove(backend.net, limit=0)
    replies = backend._run(_requests(rating=False))
    assert backend.fits == 1 and len(replies) == len(PASSAGES)
    assert all(r.error.startswith("OutOfMemoryError: CUDA out of memory") for r in replies)


class PaddedTokensAbove(OutOfMemoryAbove):
    """The model, recording each pass's (prompts, padded length) and running out of memory above `limit` padded
    tokens (a card's memory bounds prompts times their padded length, not the prompts alone)."""

    def _check(self, size: int) -> None:
        import torch

        rows, width = self.shape
        self.sizes.append((rows, width))
        if rows * width > self.limit:
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory. Tried to allocate for {rows}x{width} tokens")

    def generate(self, **kw):
        self.shape = tuple(kw["input_ids"].shape)
        return super().generate(**kw)


def test_a_token_budget_bounds_every_pass_and_keeps_every_reply(tiny_models):
    requests = _requests(rating=False)
    expected = _backend(tiny_models["tiny-t5"], batch_size=8)._run(requests)
    backend = _backend(tiny_models["tiny-t5"], batch_size=8)
    backend.budget = 60  # as on CUDA by default, where passes are bounded by padded tokens (CUDA_TOKENS)
    backend._net = PaddedTokensAbove(backend.net, limit=10_000)
    replies = backend._run(requests)
    sizes = backend.net.sizes
    assert sum(rows for rows, _ in sizes) == len(requests) and len(sizes) > 2 and max(r for r, _ in sizes) > 1
    assert all(rows * width <= 60 for rows, width in sizes if rows > 1)
    assert [width for _, width in sizes] == sorted(width for _, width in sizes)  # shortest first
    assert [(r.text, r.tokens, r.error) for r in replies] == [(r.text, r.tokens, None) for r in expected]


def test_out_of_memory_halves_the_token_budget_too(tiny_models, capsys):
    requests = _requests(rating=False)
    expected = _backend(tiny_models["tiny-t5"], batch_size=8)._run(requests)
    backend = _backend(tiny_models["tiny-t5"], batch_size=8)
    backend.budget = 600
    backend._net = PaddedTokensAbove(backend.net, limit=150)  # the longest prompt (133 tokens) fits alone
    replies = backend._run(requests)
    assert backend.budget < 600 and backend.fits < 8
    assert [(r.text, r.tokens, r.error) for r in replies] == [(r.text, r.tokens, None) for r in expected]
    assert "padded tokens) a pass; at most" in capsys.readouterr().err


@pytest.mark.slow
def test_out_of_memory_in_a_grading_run_is_recorded_not_raised(cli, demo_store, tiny_models, monkeypatch):
    from proctor.llm.hf import HFBackend

    loaded = HFBackend.net.fget

    def net_that_never_fits(self):
        return OutOfMemoryAbove(loaded(self), limit=0)

    monkeypatch.setattr(HFBackend, "net", property(net_that_never_fits))
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"hf:{tiny_models['tiny-t5']}",
                 "--max-queries", "1", "--max-passages", "2", "--format", "json")
    summary = json.loads(result.out)
    assert result.code == 3 and summary["failures"] == summary["graded_now"] == 6
    assert list(summary["failure_reasons"]) == ["OutOfMemoryError: CUDA out of memory. Tried to allocate for 1 prompts"]


def test_the_model_is_loaded_before_the_grading_clock_and_its_load_reported_apart(cli, demo_store, tiny_models,
                                                                                    monkeypatch):
    import time

    from proctor.grading import engine
    from proctor.llm.hf import HFBackend

    events: list[tuple[str, float]] = []
    load = HFBackend.load

    def timed_load(self):
        seconds = load(self)
        events.append(("loaded", time.monotonic()))
        return seconds

    class Clock(engine.Progress):
        def __init__(self, *args, **kwargs):
            events.append(("clock", time.monotonic()))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(HFBackend, "load", timed_load)
    monkeypatch.setattr(engine, "Progress", Clock)
    monkeypatch.setattr(HFBackend, "_answer", lambda self, requests, ids:
                        events.append(("answer", self._net is not None)) or [engine.Reply(text="4") for _ in requests])
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"hf:{tiny_models['tiny-t5']}",
                 "--max-queries", "1", "--max-passages", "2", "--format", "json")
    summary = json.loads(result.out)
    assert result.code == 0 and summary["graded_now"] == 6 and summary["model_load_seconds"] > 0
    assert [e[0] for e in events[:2]] == ["loaded", "clock"] and events[0][1] <= events[1][1]
    assert ("answer", True) in events  # the weights were there before the first batch
    again = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"hf:{tiny_models['tiny-t5']}",
                "--max-queries", "1", "--max-passages", "2", "--format", "json")
    assert "model_load_seconds" not in json.loads(again.out)  # nothing left to grade: nothing loaded


def test_on_cuda_the_load_runs_one_short_pass_and_its_failure_is_left_to_the_first_real_pass(tiny_models):
    from proctor.llm.hf import HFBackend

    backend = _backend(tiny_models["tiny-t5"])
    backend.warm_up()  # on the CPU: nothing
    calls = []
    backend.device = "cuda"  # as on a GPU machine; this one has none, so the pass itself fails
    original = HFBackend._answer
    backend._answer = lambda requests, ids: calls.append((len(requests), ids)) or original(backend, requests, ids)
    backend.warm_up()  # the error (no CUDA here) is not raised: the first real pass meets it and records it
    assert [n for n, _ in calls] == [1] and calls[0][1] == backend.tokenizer(["warm-up"])["input_ids"]
