"""Grading with local backends: replay of the recorded DL19 grades, the embedding grader, the pre-filter,
and Hugging Face models built by the test (random weights, a real tokenizer)."""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import grades_of, opened_store
from dl19_fixture import dl19_replay_store_fixture  # noqa: F401 (a fixture)
from tiny_models import tiny_models_fixture  # noqa: F401 (a fixture)


@pytest.mark.slow
def test_replay_reproduces_every_recorded_dl19_grade(cli, dl19_pool, dl19_replay_store):
    # the store is the session's replay of the whole pool (dl19_fixture: import --no-grades, the bank, grade
    # --method self-rating --llm replay:POOL --format json), built once and read here
    store = dl19_replay_store
    summary = json.loads((store.parent / "grade.json").read_text())
    assert summary["graded_now"] == 92600 and summary["failures"] == 0
    recorded = _recorded_self_ratings(dl19_pool)
    with opened_store(store) as opened:  # the grades as stored (not 92,600 `Grade` records: a second a run)
        [grade_set] = [s for s in opened.grades.grade_sets() if s.method == "self-rating"]
        ours = {(q, p, i): (grade, extra) for q, p, i, _, grade, _, _, _, extra in
                opened.grades.stored_rows(grade_set.id, grade_set.step)}
    assert grade_set.model == "google/flan-t5-large"
    assert len(recorded) == len(ours) == 92600
    assert all(ours[k][0] == v for k, v in recorded.items())
    # where the recorded text would parse differently under the papers' rule, the grade says so
    assert any(extra and "text_parse" in json.loads(extra) for _, extra in ours.values())
    qrels = cli("qrels", "--store", store, "--method", "self-rating")
    assert qrels.code == 0 and len(qrels.out.splitlines()) == 9260


def _recorded_self_ratings(pool) -> dict[tuple[str, str, str], int]:
    """`{(query, passage, question): self-rating}` of an exam_pp file, read with `json` (not Proctor's reader,
    which the replay itself uses: the oracle is independent of it, and three times cheaper)."""
    recorded = {}
    with gzip.open(pool, "rt") as handle:
        for qid, paragraphs in map(json.loads, handle):
            for p in paragraphs:
                for grades in p["exam_grades"]:
                    for r in grades["self_ratings"]:
                        recorded[(qid, p["paragraph_id"], r["question_id"])] = r["self_rating"]
    return recorded


def test_replay_pairs_without_a_recorded_grade_are_failures(cli, demo_store, tmp_path):
    source = tmp_path / "partial.jsonl"
    source.write_text(json.dumps(["q1", [{"paragraph_id": "d101", "text": "x", "paragraph_data": {},
                                          "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True},
                                                           "answers": [["q1/x", "4"]],
                                                           "self_ratings": [{"question_id": "q1/x",
                                                                             "self_rating": 4}]}]}]]) + "\n")
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"replay:{source}",
                 "--format", "json")
    summary = json.loads(result.out)
    assert result.code == 3 and summary["failures"] == summary["graded_now"] == 72 and summary["exit_status"] == 3
    assert "every one of the 72 pairs graded now failed (no recorded grade for this pair × 72)" in result.err
    assert summary["failure_reasons"] == {"no recorded grade for this pair": 72}


@pytest.mark.slow
def test_embedding_grader_orders_the_demo_systems(cli, demo_store):
    result = cli("grade", "--store", demo_store, "--method", "embedding", "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["by_status"] == {"similarity": 72}
    grades = list(grades_of(demo_store, "embedding"))
    assert all(0 <= g.grade <= 5 and -1 <= g.extra["similarity"] <= 1 for g in grades)
    board = cli("leaderboard", "--store", demo_store, "--method", "embedding", "--measure", "nDCG@5")
    order = [line.split("\t")[0] for line in board.out.splitlines()[1:] if not line.startswith("partial")]
    assert order == ["strong", "middling", "weak"]


@pytest.mark.slow
def test_prefilter_skips_the_llm_for_dissimilar_pairs(cli, demo_store):
    from fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                     "--base-url", server.base_url, "--prefilter", "embed:minilm", "--prefilter-below", "0.3",
                     "--format", "json")
        asked = server.requests
    summary = json.loads(result.out)
    assert result.code == 0, result.err
    pruned = summary["by_status"]["prefiltered"]
    assert pruned > 0 and asked == 72 - pruned
    grades = [g for g in grades_of(demo_store, "self-rating", "m") if g.parse_status == "prefiltered"]
    assert all(g.grade == 0 and g.raw_reply is None and g.extra["similarity"] < 0.3 for g in grades)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-t5", "tiny-gpt2"])
def test_hf_backend_grades_with_real_models(cli, demo_store, tiny_models, name):
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", f"hf:{tiny_models[name]}",
                 "--max-queries", "1", "--max-passages", "3", "--batch-size", "4", "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["pairs_in_pool"] == 9 and summary["graded_now"] == 9
    grades = list(grades_of(demo_store, "self-rating", name))
    assert len(grades) == 9 and all(g.parse_status in {"number", "defaulted", "unanswerable", "failed"}
                                    for g in grades)
    assert all(g.raw_reply is not None for g in grades)
    if name == "tiny-gpt2":  # a 128-token window: the context is cut, never the question
        assert summary["truncated_contexts"] == 9 and all(g.extra.get("truncated") for g in grades)


@pytest.mark.slow
def test_hf_backend_reads_grade_probabilities(cli, demo_store, tiny_models):
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm",
                 f"hf:{tiny_models['tiny-t5']}", "--grade-probabilities", "--max-queries", "1",
                 "--max-passages", "2", "--format", "json")
    assert result.code == 0, result.err
    grades = list(grades_of(demo_store, "self-rating", "tiny-t5"))
    assert len(grades) == 6 and {g.parse_status for g in grades} == {"distribution"}
    for g in grades:
        probabilities = g.extra["probabilities"]
        assert sum(probabilities.values()) == pytest.approx(1.0)
        assert g.grade == max(range(6), key=lambda k: probabilities[str(k)])
        assert 0 <= g.extra["expected_grade"] <= 5


def test_embedding_vectors_are_streamed_batch_by_batch():
    """Issue 18 item 13: only the latest batch's vectors are kept (memory stays flat over a large pool),
    and the similarities do not depend on what was encoded before."""
    from proctor.llm.embed import EmbeddingBackend

    backend = EmbeddingBackend("minilm")
    first = [("What is a cat?", "A cat is a small domesticated feline."), ("What is a cat?", "Dogs bark.")]
    second = [("Who wrote Hamlet?", "Hamlet is a tragedy by William Shakespeare."), ("Who wrote Hamlet?", "Dogs bark.")]
    alone = EmbeddingBackend("minilm").similarities(second)
    backend.similarities(first)
    after = backend.similarities(second)
    assert set(backend.vectors) == {t for pair in second for t in pair}
    assert after == pytest.approx(alone, abs=1e-6) and after[0] > after[1]
