"""Fidelity to the papers: invalid yes/no replies get label 0 (002 §4.1), QA needs answer keys (004
§3.1.1), Spearman with random tie-breaking (001 §4.1.1)."""

from __future__ import annotations

import json

from fake_openai import FakeOpenAI
from inprocess import run_cli


def test_an_invalid_check_gives_four_prompts_cot_label_0_invalid(demo_store):
    def reply(prompt: str) -> str:
        return "Perhaps." if "predict whether the passage includes an answer" in prompt else "2"

    with FakeOpenAI(reply=reply) as server:
        result = run_cli("grade", "--store", demo_store, "--method", "four-prompts-cot", "--llm", "openai:m",
                         "--base-url", server.base_url, "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["steps"][0]["by_status"] == {"invalid": 24}  # the check step: no failure, label 0 (002 §4.1)
    qrels = run_cli("qrels", "--store", demo_store, "--method", "four-prompts-cot")
    labels = [line.split() for line in qrels.out.splitlines()]
    assert len(labels) == 24 and {label for *_, label in labels} == {"0"}
    assert data["steps"][-1]["by_status"] == {"invalid": 24}


def test_qa_refuses_a_bank_without_answer_keys(demo_store, tmp_path):
    bank = tmp_path / "nokeys.jsonl"
    bank.write_text(json.dumps({"query_id": "q1", "items": [
        {"question_id": "q1/k1", "question_text": "Why do bees dance?"},
        {"question_id": "q1/k2", "question_text": "What is honey?", "gold_answers": ["sugar"]}]}) + "\n")
    assert run_cli("import", "bank", bank, "--store", demo_store, "--name", "nokeys").code == 0
    result = run_cli("grade", "--store", demo_store, "--method", "qa", "--llm", "openai:m", "--base-url",
                     "http://127.0.0.1:9/v1", "--bank", "nokeys")
    assert result.code == 2 and "bank nokeys@" in result.err and "1 of 2 questions have no answer key" in result.err


def test_spearman_with_random_tie_breaking(tmp_path):
    board = tmp_path / "lb.tsv"
    board.write_text("a\t0.5\nb\t0.5\nc\t0.2\nd\t0.1\n")
    official = tmp_path / "o.json"
    official.write_text('{"a": 1, "b": 2, "c": 3, "d": 4}')

    def correlate(*extra):
        result = run_cli("correlate", board, "--official", official, "--format", "json", *extra)
        assert result.code == 0, result.err
        return json.loads(result.out)

    average, random_10 = correlate(), correlate("--ties", "random", "--repeats", "10", "--seed", "3")
    assert average["ties"] == "average" and random_10["ties"] == "random"
    assert average["spearman"] != random_10["spearman"]
    assert 0.8 - 1e-12 <= random_10["spearman"] <= 1.0 + 1e-12  # a/b in either order: 1.0 or 0.8, averaged
    assert correlate("--ties", "random", "--repeats", "10", "--seed", "3")["spearman"] == random_10["spearman"]
    one = correlate("--ties", "random", "--repeats", "1", "--seed", "3")["spearman"]
    assert min(abs(one - 0.8), abs(one - 1.0)) <= 1e-12  # scipy's, to rounding


def test_nugget_rating_is_the_authors_prompt():
    """The text the authors' workbench builds (NuggetSelfRatedPrompt: pretext, key fact, then the context)."""
    from proctor.methods import get_method

    pretext = '''Given the context, evaluate the coverage of the specified key fact (nugget). Use this scale:
        - 5: Detailed, clear coverage.
        - 4: Sufficient coverage, minor omissions.
        - 3: Mentioned, some inaccuracies or lacks detail.
        - 2: Briefly mentioned, significant omissions or inaccuracies.
        - 1: Minimally mentioned, largely inaccurate.
        - 0: Not mentioned at all.
        '''
    nugget, context = "Bees evaporate water from nectar", "Bees fan their wings over the honeycomb."
    expected = f"{pretext}\n Key fact: {nugget}\n" + f"Context: {context}"
    template = get_method("nugget-rating").template
    assert template.render(nugget, context) == expected
    assert template.version == "NuggetSelfRatedPrompt"  # the workbench's prompt class, as exam_pp files name it


def test_generation_prompts_are_the_authors_texts():
    """Nugget prompts as the authors' workbench sends them; question prompts and their JSON block as 000 prints."""
    from proctor.bank.generate import Topic, prompts, render

    dl, car = Topic("q1", None, "how do bees make honey"), Topic("c1", "f1", "Earth Science", "Geology")
    assert render(dl, "dl", "nuggets", 10) == (
        "Break the query 'how do bees make honey' into concise nuggets that must be mentioned. Generate 10 concise "
        "insightful nuggets that reveal whether information relevant for 'how do bees make honey' was provided, "
        "showcasing a deep understanding of the subject matter. Avoid basic or introductory-level nuggets. Keep "
        "nuggets to a maximum of 4 words.\nGive the nugget set in the following JSON format:\n```json\n"
        '{ "nuggets": [nugget_text_1, nugget_text2, ... ] }\n```')
    assert render(car, "car", "nuggets", 10).endswith(
        "Avoid basic or introductory-level nuggets. Keep nuggets to a maximum of 4 words.\nGive the nugget set in "
        "the following JSON format:\n```json\n{ \"nuggets\": [nugget_text_1, nugget_text2, ... ] }\n```")
    assert render(car, "car", "questions", 10) == (
        "Explore the connection between 'Earth Science' with a specific focus on the subtopic 'Geology'. Generate "
        "insightful questions that delve into advanced aspects of 'Geology', showcasing a deep understanding of the "
        "subject matter. Avoid basic or introductory-level inquiries. Give the question set in the following JSON "
        'format:\n```json\n{"questions":[question_text_1, question_text_2,...]}\n```')
    assert prompts()["version"] == "authors-2"
