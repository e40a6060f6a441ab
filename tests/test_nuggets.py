"""AutoNuggetizer on our engine: nugget importance (generation with nuggetizer's scorer prompt, banks, YAML,
exports, edits), reply parsing of label lists."""

from __future__ import annotations

import ast
import json

import pytest
import yaml

from fake_openai import FakeOpenAI
from proctor.io.bank_files import load_bank
from proctor.methods.label_lists import parse_labels

NUGGETS = ["Bees collect nectar from flowers", "Bees evaporate water from nectar", "Honey is stored in combs"]


@pytest.mark.parametrize(("reply", "expected"), [
    ("['vital', 'okay', 'vital']", ["vital", "okay", "vital"]),
    ("```python\n[\"Vital\", \"OKAY\", 'vital']\n```", ["vital", "okay", "vital"]),
    ("Labels: ['okay', 'okay', 'vital'] hope this helps", ["okay", "okay", "vital"]),
    ("['vital', 'okay']", None), ("['vital', 'great', 'okay']", None), ("vital, okay, vital", None), ("", None),
    (None, None),
])
def test_parse_labels(reply, expected):
    assert parse_labels(reply, 3, ("vital", "okay"))[0] == expected


def scorer(prompt: str) -> str:
    """Nuggets for the generation prompt; for nuggetizer's scorer prompt, vital for nuggets about bees."""
    if prompt.startswith("Based on the query, label each of the"):
        nuggets = ast.literal_eval(prompt.split("Nugget List: ")[1].split("\n")[0])
        if "sky" in prompt:
            return "['vital']"  # never the right number of labels
        return repr(["vital" if "Bees" in n else "okay" for n in nuggets])
    return json.dumps({"nuggets": NUGGETS})


def test_generate_nuggets_labels_importance_and_reports_failures(tmp_path, cli):
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\thow do bees make honey\nq2\twhy is the sky blue\n")
    out = tmp_path / "n.jsonl"
    with FakeOpenAI(reply=scorer) as server:
        result = cli("bank", "generate", "--queries", queries, "--nuggets", "--llm", "openai:m", "--base-url",
                     server.base_url, "--retries", "1", "--out", out, "--format", "json")
        prompts = list(server.attempts)
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert [f["query_id"] for f in summary["importance_failed"]] == ["q2"]
    assert summary["llm_calls"] == 2 + 1 + 2  # two generations, q1 scored at once, q2 asked twice
    lines = {line["query_id"]: line for line in map(json.loads, out.read_text().splitlines())}
    assert [i.get("importance") for i in lines["q1"]["items"]] == ["vital", "vital", "okay"]
    assert all("importance" not in i for i in lines["q2"]["items"])
    assert lines["q1"]["info"]["importance"]["prompt"] == "nuggetizer-scorer_template"
    scoring = next(p for p in prompts if p.startswith("Based on the query") and "bees" in p)
    assert "Search Query: how do bees make honey\nNugget List: " + repr(NUGGETS) + "\n" in scoring
    assert "label each of the 3 nuggets either a vital or okay" in scoring
    bank = load_bank(out)
    assert {q["text"]: (q["info"] or {}).get("importance") for q in bank.questions if q["query_id"] == "q1"} == dict(
        zip(NUGGETS, ["vital", "vital", "okay"], strict=True))


def test_generate_without_importance(tmp_path, cli):
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\thow do bees make honey\n")
    with FakeOpenAI(reply=scorer) as server:
        result = cli("bank", "generate", "--queries", queries, "--nuggets", "--no-importance", "--llm", "openai:m",
                     "--base-url", server.base_url, "--out", tmp_path / "n.jsonl")
        assert server.requests == 1
    assert result.code == 0, result.err


IMPORTANCE_YAML = """
bank: rag
queries:
  - query_id: q1
    query_text: how do bees make honey
    nuggets:
      - {text: Bees collect nectar from flowers, importance: vital}
      - {text: Honey is stored in combs, importance: okay}
      - text: Bees dance
"""


def test_importance_in_banks_exports_and_edits(tmp_path, cli):
    source = tmp_path / "rag.yaml"
    source.write_text(IMPORTANCE_YAML)
    store = tmp_path / "s.db"
    assert cli("import", "bank", source, "--store", store).code == 0
    for fmt, suffix in (("yaml", "yaml"), ("items", "jsonl")):
        out = tmp_path / f"out.{suffix}"
        assert cli("bank", "export", "--store", store, "--as", fmt, "--out", out).code == 0
        got = {q["text"]: (q["info"] or {}).get("importance") for q in load_bank(out).questions}
        assert got == {"Bees collect nectar from flowers": "vital", "Honey is stored in combs": "okay",
                       "Bees dance": None}
    edited = yaml.safe_load((tmp_path / "out.yaml").read_text())
    honey = next(n for n in edited["queries"][0]["nuggets"] if n["text"] == "Honey is stored in combs")
    honey["importance"] = "vital"
    (tmp_path / "edit.yaml").write_text(yaml.safe_dump(edited))
    before = load_bank(tmp_path / "out.yaml").version
    assert load_bank(tmp_path / "edit.yaml").version != before  # an importance edit is a new bank version
    diff = cli("bank", "diff", tmp_path / "out.yaml", tmp_path / "edit.yaml", "--format", "json")
    assert json.loads(diff.out)["importance"] == [{"query_id": "q1", "question_id": honey["id"],
                                                   "text": "Honey is stored in combs", "old": "okay", "new": "vital"}]
    assert "1 with a new importance, 2 unchanged" in cli("bank", "diff", tmp_path / "out.yaml",
                                                         tmp_path / "edit.yaml").out
    assert cli("import", "bank", tmp_path / "edit.yaml", "--store", store, "--name", "rag").code == 0
    result = cli("info", "--store", store)
    assert result.out.count("bank           rag@") == 2


@pytest.mark.parametrize(("name", "text", "where"), [
    ("bad.jsonl", json.dumps({"query_id": "q1", "items": [{"nugget_id": "n1", "nugget_text": "A fact",
                                                            "importance": "vital"}]}) + "\n"
     + json.dumps({"query_id": "q2", "items": [{"nugget_id": "n2", "nugget_text": "B fact",
                                                 "importance": "crucial"}]}) + "\n", "bad.jsonl:2:"),
    ("bad.yaml", IMPORTANCE_YAML.replace("importance: okay", "importance: 3"), "queries[0].nuggets[1]"),
])
def test_unknown_importance_is_refused(tmp_path, cli, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    store = tmp_path / "s.db"
    result = cli("import", "bank", path, "--store", store)
    assert result.code == 2 and where in result.err and "unknown importance" in result.err
    assert "Traceback" not in result.err


# nuggetizer's prompt texts as published (castorini/nuggetizer src/nuggetizer/prompts/prompt_templates, commit
# d00dc3e), pasted here a second time so that an edit of the packaged templates cannot go unnoticed.
NUGGETIZER_SCORER = (
    'Based on the query, label each of the {num_nuggets} nuggets either a vital or okay based on the following '
    'criteria. Vital nuggets represent concepts that must be present in a "good" answer; on the other hand, okay '
    'nuggets contribute worthwhile information about the target but are not essential. Return the list of labels '
    'in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make '
    'sure to provide a label for each nugget.\n\nSearch Query: {query}\nNugget List: {nuggets}\n\nOnly return the '
    'list of labels (List[str]). Do not explain.\nLabels:')
NUGGETIZER_ASSIGNER = (
    'Based on the query and passage, label each of the {num_nuggets} nuggets either as support, partial_support, '
    'or not_support using the following criteria. A nugget that is fully captured in the passage should be labeled '
    'as support. A nugget that is partially captured in the passage should be labeled as partial_support. If the '
    'nugget is not captured at all, label it as not_support. Return the list of labels in a Pythonic list format '
    '(type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for '
    'each nugget.\n\nSearch Query: {query}\nPassage: {context}\nNugget List: {nuggets}\nOnly return the list of '
    'labels (List[str]). Do not explain.\nLabels:')

NUGGETIZER_CREATOR = (
    'Update the list of atomic nuggets of information (1-12 words), if needed, so they best provide the '
    'information required for the query. Leverage only the initial list of nuggets (if exists) and the provided '
    'context (this is an iterative process).  Return only the final list of all nuggets in a Pythonic list format '
    '(even if no updates). Make sure there is no redundant information. Ensure the updated nugget list has at most '
    '{creator_max_nuggets} nuggets (can be less), keeping only the most vital ones. Order them in decreasing order '
    'of importance. Prefer nuggets that provide more interesting information.\n\nSearch Query: {query}\nContext:\n'
    '{context}\nSearch Query: {query}\nInitial Nugget List: {nuggets}\nInitial Nugget List Length: '
    '{nuggets_length}\n\nOnly update the list of atomic nuggets (if needed, else return as is). Do not explain. '
    'Always answer in short nuggets (not questions). List in the form ["a", "b", ...] and a and b are strings with '
    'no mention of ".\nUpdated Nugget List:')


def test_prompts_are_nuggetizers_exact_text():
    from proctor.bank.importance import fill, nuggetizer_prompts
    from proctor.methods.base import load_template

    values = {"query": "q text", "nuggets": repr(NUGGETS), "num_nuggets": 3}
    score = nuggetizer_prompts()["score"]
    assert fill(score["user"], **values) == NUGGETIZER_SCORER.format(**values)
    assert score["system"].startswith("You are NuggetizeScoreLLM, an intelligent assistant")
    assign = load_template("nugget-assign")
    before, after = assign.parts("", {k: str(v) for k, v in values.items()})
    assert before + "ANSWER" + after == NUGGETIZER_ASSIGNER.format(context="ANSWER", **values)
    assert assign.system.startswith("You are NuggetizeAssignerLLM, an intelligent assistant")
    from proctor.bank.pool_nuggets import PoolTopic, create_prompt

    topic = PoolTopic("q", "q text", [("p1", "first passage"), ("p2", "second passage")])
    assert create_prompt(topic, 0, 2, NUGGETS[:2], 30) == NUGGETIZER_CREATOR.format(
        query="q text", context="[1] first passage\n[2] second passage", nuggets=NUGGETS[:2], nuggets_length=2,
        creator_max_nuggets=30)


def pool_reply(prompt: str) -> str:
    """nuggetizer-style replies: the creator returns one new nugget per passage of the window, newest first;
    the scorer calls every other nugget vital. q2's first creator reply is unusable."""
    if prompt.startswith("Based on the query, label each of the"):
        nuggets = ast.literal_eval(prompt.split("Nugget List: ")[1].split("\n")[0])
        return repr(["vital" if i % 2 == 0 else "okay" for i in range(len(nuggets))])
    initial = ast.literal_eval(prompt.split("Initial Nugget List: ")[1].split("\n")[0])
    context = prompt.split("Context:\n")[1].split("\nSearch Query:")[0]
    new = [f"Fact of {line.split('] ')[1].split()[0]}" for line in context.splitlines()]
    return "```python\n" + repr(new + initial) + "\n```"


def test_generate_from_pool_windows_max_nuggets_and_importance(tmp_path, cli):
    store = tmp_path / "s.db"
    (tmp_path / "q.tsv").write_text("q1\thow do bees make honey\nq2\twhy is the sky blue\n")
    passages = {f"p{i:02d}": f"P{i:02d} passage text" for i in range(1, 13)} | {
        "x1": "X1 unrelated", "s1": "S1 sky", "s2": "S2 sky"}
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in passages.items()))
    qrels = [f"q1 0 p{i:02d} 2" for i in range(1, 13)] + ["q1 0 x1 1", "q2 0 s1 2", "q2 0 s2 3"]
    (tmp_path / "q.qrels").write_text("\n".join(qrels) + "\n")
    for kind, name in (("queries", "q.tsv"), ("corpus", "c.jsonl"), ("qrels", "q.qrels")):
        assert cli("import", kind, tmp_path / name, "--store", store).code == 0
    out = tmp_path / "pool.jsonl"

    def faults(prompt: str, attempt: int) -> str:
        return "text" if "S2 sky" in prompt and "Initial Nugget List: []" in prompt and attempt == 1 else "ok"

    with FakeOpenAI(reply=pool_reply, faults=faults) as server:
        result = cli("bank", "generate", "--from-pool", "--store", store, "--nuggets", "--max-nuggets", "5",
                     "--llm", "openai:m", "--base-url", server.base_url, "--out", out, "--format", "json")
        prompts = list(server.attempts)
    assert result.code == 0, result.err
    assert json.loads(result.out)["llm_calls"] == 2 + 1 + 2 + 1
    lines = {line["query_id"]: line for line in map(json.loads, out.read_text().splitlines())}
    q1 = [item["nugget_text"] for item in lines["q1"]["items"]]
    assert q1 == ["Fact of P11", "Fact of P12", "Fact of P01", "Fact of P02", "Fact of P03"]
    assert [item["importance"] for item in lines["q1"]["items"]] == ["vital", "okay", "vital", "okay", "vital"]
    assert [item["nugget_text"] for item in lines["q2"]["items"]] == ["Fact of S2", "Fact of S1"]  # judged 3 first
    assert lines["q1"]["info"]["passages"] == [f"p{i:02d}" for i in range(1, 13)]  # x1 (judged 1) not read
    second = next(p for p in prompts if "P11 passage text" in p)
    assert "Initial Nugget List: " + repr(q1[2:] + ["Fact of P04", "Fact of P05"]) + "\n" in second
    assert "at most 5 nuggets" in second and "Initial Nugget List Length: 5" in second
    assert "[1] P11 passage text\n[2] P12 passage text\nSearch Query: how do bees make honey" in second
