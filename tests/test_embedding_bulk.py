"""The embedding method's bulk path (`proctor.grading.similarity`): a query's texts encoded in one call, the
model loaded before the clock, grades mapped at once and written as rows — with the grades the per-pair path
(`EmbeddingBackend.similarities`, still the pre-filter's) gives, the same failures, resume and device choice."""

from __future__ import annotations

import json

import pytest

from conftest import grades_of, opened_store, raw_write
from proctor.llm.embed import EmbeddingBackend
from proctor.methods.embedding import grade_of, similarity_extra
from proctor.methods.embedding import grades_of as vector_grades
from proctor.store.repository import dumps


def test_the_vectorised_thresholds_and_extra_are_the_per_pair_ones():
    similarities = [-1.0, 0.0, 0.2499999, 0.25, 0.3, 0.35, 0.45, 0.5499, 0.55, 0.6499999, 0.65, 0.9, 1.0,
                    0.123456789, -0.0000004, 0.33333349]
    assert vector_grades(similarities).tolist() == [grade_of(s) for s in similarities]
    assert [similarity_extra(s) for s in similarities] == [dumps({"similarity": round(s, 6)}) for s in similarities]


def test_the_embedder_picks_cuda_when_torch_sees_one():
    import torch

    assert EmbeddingBackend("minilm").device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert EmbeddingBackend("minilm", device="cpu").device == "cpu"


@pytest.mark.slow
def test_bulk_grades_are_the_per_pair_grades(cli, demo_store):
    result = cli("grade", "--store", demo_store, "--method", "embedding", "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["graded_now"] == 72 and summary["by_status"] == {"similarity": 72}
    assert summary["llm_calls"] == 4 and summary["model_load_seconds"] >= 0  # 4 queries: one call each; the load apart
    grades = grades_of(demo_store, "embedding")
    with opened_store(demo_store) as store:
        passages = store.corpus.passage_texts()
        questions = {item[0]: item[1] for items in store.banks.bank_items("question", *store.banks.bank_version(None))
                     .values() for item in items}
    per_pair = EmbeddingBackend("minilm").similarities([(questions[g.question_id], passages[g.passage_id])
                                                         for g in grades])
    assert [g.grade for g in grades] == [grade_of(s) for s in per_pair]
    assert [g.extra["similarity"] for g in grades] == pytest.approx(per_pair, abs=2e-6)
    assert all(g.parse_status == "similarity" and g.raw_reply is None and set(g.extra) == {"similarity"}
               for g in grades)
    again = json.loads(cli("grade", "--store", demo_store, "--method", "embedding", "--format", "json").out)
    assert again["already_graded"] == 72 and again["graded_now"] == 0


@pytest.mark.slow
def test_a_query_that_fails_to_encode_is_recorded_and_graded_again_later(cli, demo_store, monkeypatch):
    encode, calls = EmbeddingBackend.encode, []

    def failing_on_the_second_query(self, texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("the device went away")
        return encode(self, texts)

    monkeypatch.setattr(EmbeddingBackend, "encode", failing_on_the_second_query)
    result = cli("grade", "--store", demo_store, "--method", "embedding", "--format", "json")
    summary = json.loads(result.out)
    assert result.code == 0 and summary["failures"] == 18 and summary["by_status"] == {"similarity": 54, "failed": 18}
    assert summary["failure_reasons"] == {"RuntimeError: the device went away": 18}
    with opened_store(demo_store) as store:  # the kept counts of the grade set, read (and kept) now
        assert [(s.grades, s.failures) for s in store.grades.grade_sets() if s.method == "embedding"] == [(72, 18)]
    failed = [g for g in grades_of(demo_store, "embedding") if g.parse_status == "failed"]
    assert len(failed) == 18 and all(g.grade is None and g.extra == {"error": "RuntimeError: the device went away"}
                                     for g in failed)
    monkeypatch.setattr(EmbeddingBackend, "encode", encode)
    again = json.loads(cli("grade", "--store", demo_store, "--method", "embedding", "--format", "json").out)
    assert again["already_graded"] == 54 and again["graded_now"] == 18 and again["failures"] == 0
    assert {g.parse_status for g in grades_of(demo_store, "embedding")} == {"similarity"}
    with opened_store(demo_store) as store:  # the bulk write dropped the kept counts: they are counted afresh
        assert [(s.grades, s.failures) for s in store.grades.grade_sets() if s.method == "embedding"] == [(72, 0)]


@pytest.mark.slow
def test_a_template_that_shows_the_passage_reports_passages_longer_than_the_window(cli, demo_store, tmp_path):
    template = tmp_path / "embedding.yaml"
    template.write_text("name: embedding\nversion: with-context\nitems: question\nsource: a test\n"
                        "template: \"{question} {context}\"\n")
    with opened_store(demo_store) as store:
        first = sorted(store.corpus.passage_texts())[0]
    long = tmp_path / "long.tsv"
    long.write_text(f"{first}\t{'a passage far longer than the window of 256 word pieces ' * 40}\n")
    assert cli("import", "corpus", long, "--store", demo_store, "--replace").code == 0
    with opened_store(demo_store) as store:
        texts = store.corpus.passage_texts()
    backend = EmbeddingBackend("minilm")
    expected = {pid for pid, text in texts.items() if text and backend.fit("", text, "")[1]}
    result = cli("grade", "--store", demo_store, "--method", "embedding", "--template", template, "--format", "json")
    assert result.code == 0, result.err
    grades = grades_of(demo_store, "embedding")
    cut = {g.passage_id for g in grades if g.extra.get("truncated")}
    assert cut == expected & {g.passage_id for g in grades} and cut
    assert json.loads(result.out)["truncated_contexts"] == sum(1 for g in grades if g.extra.get("truncated"))


@pytest.mark.slow
def test_the_model_loads_while_a_fresh_step_is_planned(cli, demo_store, monkeypatch):
    """A fresh step's model load begins on a worker thread before its planning ends (start-up overlapped with
    planning, its seconds still reported apart); a step with grades plans first, so a rerun with nothing left
    to grade loads nothing."""
    import threading

    from proctor.grading import runner
    from proctor.llm import embed

    monkeypatch.setattr(embed, "_ENCODERS", {})  # this process loads the model again, for real
    began, waits, seen = threading.Event(), [30.0], []
    load, plan = EmbeddingBackend.load, runner.make_plan

    def loading(self):
        began.set()
        return load(self)

    def planning(*args, **kwargs):
        seen.append(began.wait(waits[0]))  # whether the load had begun while the step was being planned
        return plan(*args, **kwargs)

    monkeypatch.setattr(EmbeddingBackend, "load", loading)
    monkeypatch.setattr(runner, "make_plan", planning)
    args = ("grade", "--store", demo_store, "--method", "embedding", "--format", "json")
    first = json.loads(cli(*args).out)
    assert seen == [True] and first["graded_now"] == 72 and first["model_load_seconds"] > 0
    began.clear()
    waits[0] = 0.0
    raw_write(demo_store, "DELETE FROM grades WHERE query_id = (SELECT MIN(query_id) FROM grades)")
    again = json.loads(cli(*args).out)
    assert seen == [True, False] and 0 < again["graded_now"] < 72 and began.is_set()  # loaded after planning
    began.clear()
    assert json.loads(cli(*args).out)["graded_now"] == 0 and seen == [True, False, False] and not began.is_set()
