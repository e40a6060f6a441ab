"""The documents AutoJudge reports carry, as citation support reads them without `--corpus`: each report's
documents are its own (`ID@RUN/TOPIC`), its citations of them renamed alike in every citation form (document
ids, `{id: score}` maps, indices into `references`); in the track's runner, each sentence is judged against the
text its own report gives (kiddie's runs give `Chlorophyll` two different texts)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import tira_shape
from fake_openai import FakeOpenAI
from proctor.autojudge.documents import scope_documents
from proctor.errors import UsageError

DOC = {"id": "d1", "text": "Bees make honey from nectar.", "title": "Honey"}


def report(**fields) -> dict:
    """A report of run r1 for topic t1 carrying d1 (and whatever `fields` add or replace)."""
    return {"metadata": {"run_id": "r1", "topic_id": "t1"}, "documents": {"d1": DOC}, **fields}


def test_cited_document_ids_are_scoped_to_their_report():
    record = report(responses=[{"text": "Honey.", "citations": ["d1", "elsewhere"]}])
    assert scope_documents(record) == [{"id": "d1@r1/t1", "text": DOC["text"], "title": "Honey"}]
    assert record["responses"][0]["citations"] == ["d1@r1/t1", "elsewhere"]  # not carried: for --corpus


def test_score_maps_and_reference_indices_are_renamed():
    scored = report(responses=[{"text": "Honey.", "citations": {"d1": 0.9, "other": 0.1}}])
    scope_documents(scored)
    assert scored["responses"][0]["citations"] == {"d1@r1/t1": 0.9, "other": 0.1}
    indexed = report(references=["other", "d1"], answer=[{"text": "Honey.", "citations": [1]}])
    scope_documents(indexed)
    assert indexed["references"] == ["other", "d1@r1/t1"] and indexed["answer"][0]["citations"] == [1]


def test_documents_of_a_ranking_are_carried_too():
    record = {"metadata": {"run_id": "r1", "request_id": "t2"},
              "ranking": [{"doc_id": "d7", "rank": 1, "doc": {"id": "d7", "text": "Seven."}}],
              "responses": [{"text": "x", "citations": ["d7"]}]}
    assert scope_documents(record) == [{"id": "d7@r1/t2", "text": "Seven."}]
    assert record["responses"][0]["citations"] == ["d7@r1/t2"]


def test_a_report_without_documents_is_left_as_it_is():
    record = {"metadata": {"run_id": "r1", "topic_id": "t1"}, "responses": [{"text": "x", "citations": ["d1"]}]}
    assert scope_documents(record) == [] and record["responses"][0]["citations"] == ["d1"]


def test_one_id_with_two_texts_in_one_report_is_refused():
    record = report(ranking=[{"doc_id": "d1", "rank": 1, "doc": {"id": "d1", "text": "Another text."}}])
    with pytest.raises(UsageError, match="run/topic r1/t1: document 'd1' is given twice with different texts"):
        scope_documents(record)


@pytest.mark.slow
@pytest.mark.skipif(not importlib.util.find_spec("autojudge_base"), reason="needs autojudge-base (extra test)")
def test_each_sentence_is_judged_against_its_own_reports_text(tmp_path, peer_nltk):
    from autojudge_base.cli import main

    from test_autojudge import in_process

    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    dataset = tira_shape.kiddie_dataset(tmp_path / "input", ["leaf"])
    argv = tira_shape.tira_argv(tira_shape.tira_command("workflow.yml", "citations"), dataset, tmp_path / "out",
                                tira_shape.image_judges(tmp_path / "image"))
    prompts: list[str] = []
    with FakeOpenAI(reply=lambda prompt: prompts.append(prompt) or "Full Support") as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "m", "NLTK_DATA": str(peer_nltk)}
        done = in_process(main, argv, env)
        assert done.returncode == 0, done.stderr[-3000:]
    run1 = next(p for p in prompts if "Leaves change color in fall because" in p)
    run2 = next(p for p in prompts if "Trees have green stuff" in p)
    assert "during spring and summer" in run1 and "during spring and summer" not in run2  # run2's shorter text
    lines = [json.loads(line) for line in (tmp_path / "out" / "citations.documents.jsonl").read_text().splitlines()]
    assert {"Chlorophyll@run1/leaf", "Chlorophyll@run2/leaf"} <= {line["id"] for line in lines}
