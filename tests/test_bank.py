"""Question banks: generation against a local server that misbehaves, parsing replies, YAML banks, export,
diff, impact, and the verification reports."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest
import yaml

from conftest import DL19
from dl19_fixture import dl19_replay_fixture, dl19_replay_store_fixture  # noqa: F401  (fixtures)
from fake_openai import FakeOpenAI
from inprocess import run_cli
from proctor.bank.parse import extract_items
from proctor.demo.write import write_collection
from proctor.io.bank_files import load_bank

TEN = [f"Question number {i} about the topic?" for i in range(10)]


@pytest.mark.parametrize(("reply", "expected"), [
    (json.dumps({"questions": TEN[:3]}), TEN[:3]),
    ("```json\n" + json.dumps({"questions": TEN[:2]}) + "\n```\nHope this helps!", TEN[:2]),
    ("Sure! Here they are: " + json.dumps(TEN[:2]) + " Let me know if you need more.", TEN[:2]),
    (json.dumps([{"question": TEN[0]}, {"question": TEN[1]}]), TEN[:2]),
    (json.dumps({"nuggets": ["Fact one here", "Fact two here"]}), ["Fact one here", "Fact two here"]),
    (json.dumps({"questions": [TEN[0], TEN[0].upper(), " " + TEN[1]]}), [TEN[0], TEN[1]]),
    ("1. What is the first thing?\n2. What is the second thing?\n", ["What is the first thing?",
                                                                     "What is the second thing?"]),
    ('{"questions": ["unterminated', None), ("I cannot help with that.", None), ("", None), (None, None),
])
def test_extract_items(reply, expected):
    assert extract_items(reply) == expected


def bank_reply(prompt: str) -> str:
    qid = prompt.split("'")[1]
    return "```json\n" + json.dumps({"questions": [f"What about {qid}, aspect {i}?" for i in range(12)]}) + "\n```"


def flaky(prompt: str, attempt: int) -> str:
    if "bees" in prompt and attempt == 1:
        return "429"
    if "sky" in prompt and attempt == 1:
        return "stall"
    if "tides" in prompt and attempt < 3:
        return "text"  # not JSON: asked again
    if "refrigerator" in prompt:
        return "text"  # never usable
    return "ok"


def test_generate_retries_and_reports_what_never_succeeded(tmp_path):
    paths = write_collection(tmp_path / "c")
    out = tmp_path / "bank.jsonl"
    with FakeOpenAI(faults=flaky, reply=bank_reply, stall_seconds=3) as server:
        result = run_cli("bank", "generate", "--queries", paths["queries"], "--style", "dl", "--llm",
                         "openai:gen-model", "--base-url", server.base_url, "--timeout", "1", "--backoff-max",
                         "0.05", "--retries", "3", "--out", out, "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["generated"] == 3 and [f["query_id"] for f in summary["failed"]] == ["q4"]
    assert len(summary["failed"][0]["reasons"]) == 4
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["query_id"] for line in lines] == ["q1", "q2", "q3"]
    for line in lines:
        assert len(line["items"]) == 10
        assert line["info"]["model"] == "gen-model" and "Break the query" in line["info"]["prompt"]
        assert line["info"]["prompt_version"] == "authors-2"
        for item in line["items"]:
            digest = hashlib.md5(item["question_text"].encode()).hexdigest()
            assert item["question_id"] == f"{line['query_id']}/{digest}"
    store = tmp_path / "s.db"
    imported = run_cli("import", "bank", out, "--store", store)
    assert imported.code == 0 and "30 questions" in imported.err


def test_generate_car_style_nuggets(tmp_path):
    topics = tmp_path / "car.jsonl"
    topics.write_text(json.dumps({"query_id": "tqa2:L_1", "facet_id": "T_2", "text": "Earth Science / Geology"}) + "\n")
    with FakeOpenAI(reply=lambda p: json.dumps({"nuggets": ["Rocks form in cycles", "Plates move slowly"]})) as s:
        result = run_cli("bank", "generate", "--queries", topics, "--style", "car", "--nuggets", "--llm",
                         "openai:m", "--base-url", s.base_url, "--out", tmp_path / "n.jsonl")
    assert result.code == 0, result.err
    line = json.loads((tmp_path / "n.jsonl").read_text())
    assert line["facet_id"] == "T_2" and line["query_text"] == "Earth Science / Geology"
    assert "subtopic 'Geology'" in line["info"]["prompt"]
    assert line["items"][0]["nugget_id"].startswith("tqa2:L_1/T_2/")


YAML_BANK = """
bank: manual
queries:
  - query_id: q1
    query_text: how do bees make honey
    questions:
      - text: What do bees collect from flowers?
        answers: [nectar]
      - text: Which flower part makes nectar?
        choices: {A: petal, B: nectary}
        correct: B
    nuggets:
      - Bees evaporate water from nectar
"""


def test_yaml_bank_and_export_round_trips(tmp_path):
    source = tmp_path / "manual.yaml"
    source.write_text(YAML_BANK)
    store = tmp_path / "s.db"
    assert run_cli("import", "bank", source, "--store", store).code == 0
    questions = {q["text"]: q for q in load_bank(source).questions}
    assert questions["Which flower part makes nectar?"]["answers"] == ["nectary"]
    assert questions["Bees evaporate water from nectar"]["kind"] == "nugget"
    for fmt in ("items", "questions", "yaml"):
        out = tmp_path / f"export.{ 'yaml' if fmt == 'yaml' else 'jsonl'}"
        assert run_cli("bank", "export", "--store", store, "--as", fmt, "--out", out).code == 0
        again = {q["question_id"]: (q["text"], q["kind"], q["answers"]) for q in load_bank(out).questions}
        assert again == {q["question_id"]: (q["text"], q["kind"], q["answers"]) for q in load_bank(source).questions}
    assert yaml.safe_load((tmp_path / "export.yaml").read_text())["queries"][0]["query_id"] == "q1"


def test_bad_yaml_names_the_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("queries:\n  - query_id: q1\n    questions: [unclosed\n")
    result = run_cli("import", "bank", bad, "--store", tmp_path / "s.db")
    assert result.code == 2 and "bad.yaml:" in result.err and "invalid YAML" in result.err


def test_diff(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(yaml.safe_dump({"queries": [{"query_id": "q", "questions": [
        "What do bees collect from flowers?", "Where is honey stored?", "Who keeps bees?"]}]}))
    b.write_text(yaml.safe_dump({"queries": [{"query_id": "q", "questions": [
        "What do bees collect from the flowers?", "Who keeps bees?", "Why do bees swarm?"]}]}))
    result = json.loads(run_cli("bank", "diff", a, b, "--format", "json").out)
    assert [r["new"] for r in result["reworded"]] == ["What do bees collect from the flowers?"]
    assert [q["text"] for q in result["added"]] == ["Why do bees swarm?"]
    assert [q["text"] for q in result["removed"]] == ["Where is honey stored?"]
    assert result["unchanged"] == 1


def test_impact_grades_only_what_is_new(tmp_path, demo_store):
    store = demo_store
    old = tmp_path / "collection" / "bank.jsonl"
    lines = [json.loads(line) for line in old.read_text().splitlines()]
    lines[0]["items"].append({"query_id": "q1", "question_id": "q1/new", "question_text": "Do bees sleep?"})
    lines[1]["items"] = lines[1]["items"][1:]
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with FakeOpenAI() as server:
        first = run_cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m",
                        "--base-url", server.base_url)
        assert first.code == 0 and server.requests == 72
        refused = run_cli("bank", "impact", old, new, "--store", store)
        assert refused.code == 2 and "pass --llm" in refused.err
        result = run_cli("bank", "impact", old, new, "--store", store, "--llm", "openai:m", "--base-url",
                         server.base_url, "--format", "json")
        assert result.code == 0, result.err
        assert server.requests == 72 + 6  # the new question × the 6 pool passages of q1
    data = json.loads(result.out)
    assert data["questions"] == {"old": 12, "new": 12}
    assert all(c["query_id"] in ("q1", "q2") for c in data["changed"])
    assert {s["system"] for s in data["systems"]} == {"strong", "middling", "weak", "partial"}


@pytest.mark.slow
def test_dl19_spurious_uncovered_and_impact_of_removing_them(dl19_replay, tmp_path):
    replay_store = dl19_replay  # written to: bank impact adds a grade set
    spurious = run_cli("verify", "spurious", "--store", replay_store, "--judged-relevant", "2", "--limit", "2",
                       "--format", "json")
    assert spurious.code == 0, spurious.err
    data = json.loads(spurious.out)
    worst = data["most_spurious_per_query"]
    assert len(worst) == 43 and all(len(v) == 2 for v in worst.values())
    top = data["questions"][0]
    assert top["non_relevant_answering"] >= data["questions"][1]["non_relevant_answering"]
    uncovered = json.loads(run_cli("verify", "uncovered", "--store", replay_store, "--judged-relevant", "2",
                                   "--format", "json").out)
    assert uncovered["judged_relevant_passages"] == 2501 and 0 < uncovered["uncovered"] < 2501
    assert all(p["best_grade"] is None or p["best_grade"] < 4 for p in uncovered["passages"])
    drop = {q for qs in worst.values() for q in qs}
    new = tmp_path / "fewer.jsonl"
    with gzip.open(DL19 / "dl19-questions-graded.jsonl.gz", "rt") as handle, open(new, "w") as out:
        for line in handle:
            record = json.loads(line)
            record["questions"] = [q for q in record["questions"] if q["question_id"] not in drop]
            out.write(json.dumps(record) + "\n")
    first = json.loads(run_cli("info", "--store", replay_store, "--format", "json").out)["grade_sets"][0]["id"]
    impact = run_cli("bank", "impact", DL19 / "dl19-questions-graded.jsonl.gz", new, "--store", replay_store,
                     "--official", DL19 / "dl19-official-leaderboard.json")
    assert impact.code == 0, impact.err
    assert "passage labels change" in impact.out and "Kendall 0.7538 →" in impact.out
    # bank B's grade set now stands beside A's: reading grades without naming one lists both
    both = run_cli("verify", "answers", "--store", replay_store)
    assert both.code == 2 and first in both.err and "several grade sets match" in both.err
    for report in ("answers", "distribution"):
        for fmt in ("text", "md", "json"):
            assert run_cli("verify", report, "--store", replay_store, "--grade-set", first, "--query", "1037798",
                           "--format", fmt).code == 0


def test_a_spurious_mark_is_part_of_the_version_and_survives_a_yaml_round_trip(tmp_path):
    marked = YAML_BANK.replace("      - text: Which flower part makes nectar?\n",
                               "      - text: Which flower part makes nectar?\n        spurious: true\n")
    assert marked != YAML_BANK
    source, plain = tmp_path / "marked.yaml", tmp_path / "plain.yaml"
    source.write_text(marked)
    plain.write_text(YAML_BANK)
    assert load_bank(source).version != load_bank(plain).version
    store = tmp_path / "s.db"
    assert run_cli("import", "bank", source, "--store", store).code == 0
    out = tmp_path / "export.yaml"
    assert run_cli("bank", "export", "--store", store, "--as", "yaml", "--out", out).code == 0
    assert load_bank(out).version == load_bank(source).version
    bad = tmp_path / "bad.yaml"
    bad.write_text(YAML_BANK.replace("      - text: Which flower part makes nectar?\n",
                                     "      - text: Which flower part makes nectar?\n        spurious: maybe\n"))
    result = run_cli("import", "bank", bad, "--store", store)
    assert result.code == 2 and "`spurious` must be true or false" in result.err
