"""Nugget banks in castorini/nuggetizer's and TREC AutoJudge's formats: detected on import, written on export,
lossless round trips; malformed lines named with file and line (exit 2, store unchanged) or skipped."""

from __future__ import annotations

import json

import pytest

from proctor.io.bank_files import bank_format

NUGGETIZER = [
    {"query": "how do bees make honey", "qid": "t1", "nuggets": [
        {"text": "Bees collect nectar", "importance": "vital"},
        {"text": "Water evaporates from nectar", "importance": "okay", "reasoning": "supporting detail"},
        {"text": "Honey is stored in combs"}]},
    {"query": "why is the sky blue", "qid": "t2", "creator_reasoning_traces": ["kept"],
     "nuggets": [{"text": "Rayleigh scattering", "importance": "vital"}]},
]
AUTOJUDGE = [
    {"query_id": "1053", "title_query": "Rising Demand for Avocado", "format_version": "v3",
     "creator": [{"is_human": False, "llm_model": "gpt-4o", "creation_date": "2025-01-01T00:00:00+00:00"}],
     "nugget_bank": {
         "What share of avocado imports comes from Mexico?": {
             "question": "What share of avocado imports comes from Mexico?",
             "question_id": "c9391413e0dbae07eb36b484dcbcab2a", "query_id": "1053", "importance": "vital",
             "answers": {"about 90%": {"answer": "about 90%", "references": [{"doc_id": "doc-042"}]},
                         "roughly 90 percent": {"answer": "roughly 90 percent"}}},
         "Why do avocados need much water?": {
             "question": "Why do avocados need much water?", "question_id": "q2", "query_id": "1053"}},
     "claim_bank": {
         "Mexico is the largest avocado exporter.": {
             "claim": "Mexico is the largest avocado exporter.", "claim_id": "k1", "query_id": "1053",
             "importance": "okay", "references": [{"doc_id": "doc-108"}]}}},
    {"query_id": "1054", "title_query": "Coffee prices", "format_version": "v3",
     "claim_bank": {"Frost hit Brazil.": {"claim": "Frost hit Brazil.", "claim_id": "k1", "query_id": "1054"}}},
]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize(("fmt", "records"), [("nuggetizer", NUGGETIZER), ("autojudge", AUTOJUDGE)])
def test_round_trip_is_lossless(tmp_path, cli, fmt, records):
    source = write_jsonl(tmp_path / f"{fmt}.jsonl", records)
    assert bank_format(source) == fmt
    store = tmp_path / "s.db"
    result = cli("import", "bank", source, "--store", store)
    assert result.code == 0, result.err
    out = tmp_path / "out.jsonl"
    result = cli("bank", "export", "--store", store, "--as", fmt, "--out", out)
    assert result.code == 0, result.err
    assert [json.loads(line) for line in out.read_text().splitlines()] == records
    again = tmp_path / "s2.db"  # the export imports as the same bank version
    assert cli("import", "bank", out, "--store", again, "--name", fmt).code == 0
    first = cli("info", "--store", store, "--format", "json").out
    second = cli("info", "--store", again, "--format", "json").out
    assert json.loads(first)["bank_versions"][0]["version"] == json.loads(second)["bank_versions"][0]["version"]


def test_imported_items_keep_kind_importance_and_answers(tmp_path, cli):
    store = tmp_path / "s.db"
    assert cli("import", "bank", write_jsonl(tmp_path / "aj.jsonl", AUTOJUDGE), "--store", store).code == 0
    out = tmp_path / "bank.yaml"
    assert cli("bank", "export", "--store", store, "--as", "yaml", "--out", out).code == 0
    import yaml

    queries = {q["query_id"]: q for q in yaml.safe_load(out.read_text())["queries"]}
    question = next(q for q in queries["1053"]["questions"] if q["text"].startswith("What share"))
    assert question["answers"] == ["about 90%", "roughly 90 percent"] and question["importance"] == "vital"
    assert queries["1053"]["nuggets"] == [{"text": "Mexico is the largest avocado exporter.", "id": "1053/k1",
                                           "importance": "okay"}]
    assert queries["1054"]["nuggets"][0]["id"] == "1054/k1"  # the same AutoJudge id in two topics stays apart


BAD_NUGGETIZER = [
    json.dumps(NUGGETIZER[0]),
    json.dumps({"query": "q", "qid": "t3", "nuggets": [{"text": "A fact", "importance": "crucial"}]}),
    "{not json",
    json.dumps({"query": "q", "qid": "t4", "nuggets": [{"importance": "vital"}]}),
]
BAD_AUTOJUDGE = [
    json.dumps(AUTOJUDGE[1]),
    json.dumps({"query_id": "9", "format_version": "v3", "claim_bank": {"x": {"claim": "x", "query_id": "8"}}}),
]


@pytest.mark.parametrize(("lines", "bad"), [(BAD_NUGGETIZER, [2, 3, 4]), (BAD_AUTOJUDGE, [2])])
def test_malformed_lines_name_file_and_line_or_are_skipped(tmp_path, cli, lines, bad):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    store = tmp_path / "s.db"
    assert cli("import", "queries", write_queries(tmp_path), "--store", store).code == 0
    before = cli("info", "--store", store, "--format", "json").out
    result = cli("import", "bank", path, "--store", store)
    assert result.code == 2 and f"bad.jsonl:{bad[0]}:" in result.err and "Traceback" not in result.err
    assert cli("info", "--store", store, "--format", "json").out == before  # nothing half-imported
    result = cli("import", "bank", path, "--store", store, "--on-error", "skip")
    assert result.code == 0, result.err
    for line in bad:
        assert f"skipped: {path}:{line}:" in result.err
    assert "unknown importance 'crucial'" in result.err or "names query '8'" in result.err


def write_queries(tmp_path):
    path = tmp_path / "q.tsv"
    # the texts the bank files state (another text would be refused as a contradiction)
    path.write_text("t1\thow do bees make honey\nt2\twhy is the sky blue\nt3\tq\nt4\tq\n9\tq\n1054\tCoffee prices\n")
    return path


def _doc_blocks(language: str) -> list[str]:
    """The ```LANGUAGE blocks of docs/banks.md."""
    import re

    from conftest import ROOT

    text = (ROOT / "docs" / "banks.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("language,suffix", [("yaml", ".yaml"), ("jsonl", ".jsonl")])
def test_the_documented_bank_examples_import_as_they_stand(tmp_path, cli, language, suffix):
    (block,) = _doc_blocks(language)
    path = tmp_path / f"bees{suffix}"
    path.write_text(block, encoding="utf-8")
    store = tmp_path / "s.db"
    result = cli("import", "bank", path, "--store", store, "--name", "bees")
    assert result.code == 0, result.err
    import yaml

    exported = tmp_path / "out.yaml"
    assert cli("bank", "export", "--store", store, "--as", "yaml", "--out", exported).code == 0
    queries = yaml.safe_load(exported.read_text())["queries"]
    questions = [q for entry in queries for q in entry.get("questions") or []]
    nuggets = {n["text"]: n.get("importance") for entry in queries for n in entry.get("nuggets") or []}
    keys = [set(q.get("answers") or []) | {(q.get("choices") or {}).get(q.get("correct"))} for q in questions]
    assert len(questions) == 2 and any("nectary" in k for k in keys) and any("nectar" in k for k in keys)
    assert nuggets == {"Bees store honey in wax cells": "vital", "Honey keeps for years": "okay"}
    assert {entry.get("facet_id") for entry in queries} == {None, "storage"}


def test_a_yaml_bank_of_another_shape_is_refused_with_the_shape_and_its_line(tmp_path, cli):
    store = tmp_path / "s.db"
    bare = tmp_path / "bare.yaml"
    bare.write_text("- query_id: q1\n  questions:\n    - text: What?\n- query_id: q2\n")
    result = cli("import", "bank", bare, "--store", store)
    assert result.code == 2 and not store.exists()
    assert f"{bare}:1: expected a mapping with a list under `queries`, found a list of 2 entries" in result.err
    assert "queries: [{query_id: q1" in result.err and "docs/banks.md" in result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    lost = tmp_path / "lost.yaml"
    lost.write_text("queries:\n  - query_id: q1\n    questions:\n      - text: What?\n  - query_text: no id\n")
    result = cli("import", "bank", lost, "--store", store)
    expected = f"{lost}:5: queries[1]: needs a query_id (found a mapping with keys query_text)"
    assert result.code == 2 and expected in result.err
    empty = tmp_path / "empty.yaml"
    empty.write_text("queries:\n  - query_id: q1\n    questions:\n      - text: What?\n      - answers: [x]\n")
    result = cli("import", "bank", empty, "--store", store)
    assert result.code == 2 and f"{empty}:5: queries[0].questions[1]: needs a non-empty `text`" in result.err


RAGTIME26 = [  # the RAGTIME 2026 nugget format (autojudge-base 1.0.0 `Ragtime26NuggetBank`)
    {"metadata": {"team_id": "t", "topic_id": "t1", "run_id": "b"}, "nugget_bank": [
        {"question": "Where do bees collect nectar?", "aggregator_type": "OR", "importance": "vital",
         "answers": [{"answer": "flowers", "references": ["d1"]}, {"answer": "blossoms"}]},
        {"question": "How is nectar dried?", "aggregator_type": "AND",
         "answers": [{"answer": "fan"}, {"answer": "wax"}]},
        {"question": "Who makes honey?", "answers": [{"answer": "bees"}]}]},
]


def test_ragtime26_questions_give_answer_nuggets_with_their_aggregator(tmp_path, cli):
    """An AND/OR question is kept as given (and exported so) and gives one answer nugget per answer, which
    nugget assignment labels; a question without an aggregator gives none."""
    from proctor import api

    source = write_jsonl(tmp_path / "rt.jsonl", RAGTIME26)
    store = tmp_path / "s.db"
    assert cli("import", "bank", source, "--store", store).code == 0
    opened = api.open_store(store)
    try:
        items = opened.banks.bank_questions()
    finally:
        opened.close()
    answers = sorted((q["text"], q["info"]["aggregator"], q["info"].get("importance")) for q in items
                     if q["kind"] == "nugget")
    assert answers == [("How is nectar dried? fan", "AND", None), ("How is nectar dried? wax", "AND", None),
                       ("Where do bees collect nectar? blossoms", "OR", "vital"),
                       ("Where do bees collect nectar? flowers", "OR", "vital")]
    assert sum(q["kind"] == "question" for q in items) == 3
    out = tmp_path / "out.jsonl"
    assert cli("bank", "export", "--store", store, "--as", "autojudge", "--out", out).code == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert "claim_bank" not in line and {q: e.get("aggregator_type") for q, e in line["nugget_bank"].items()} == {
        "Where do bees collect nectar?": "OR", "How is nectar dried?": "AND", "Who makes honey?": None}


@pytest.mark.parametrize("nugget, message", [
    ({"question": "Q?", "aggregator_type": "XOR", "answers": [{"answer": "a"}]}, "unknown aggregator_type 'XOR'"),
    ({"question": "Q?", "aggregator_type": "AND"}, "aggregator_type AND combines the question's answers, but it has"),
    ({"question": "Q?", "importance": "high", "answers": [{"answer": "a"}]}, "unknown importance 'high'"),
    ({"question": "Q?", "importance": 2, "answers": [{"answer": "a"}]}, "unknown importance 2"),
])
def test_ragtime26_lines_proctor_cannot_score_are_refused_with_their_line(tmp_path, cli, nugget, message):
    path = write_jsonl(tmp_path / "rt.jsonl", [*RAGTIME26, {"metadata": {"topic_id": "t2"}, "nugget_bank": [nugget]}])
    result = cli("import", "bank", path, "--store", tmp_path / "s.db")
    assert result.code == 2 and f"rt.jsonl:2: nugget_bank[0]: {message}" in result.err


def test_a_v3_aggregator_ragtime26_does_not_have_is_kept_and_said(tmp_path, cli):
    line = {"query_id": "t3", "format_version": "v3", "nugget_bank": {"Q?": {
        "question": "Q?", "aggregator_type": "NOT", "answers": {"a": {"answer": "a"}}}}}
    result = cli("import", "bank", write_jsonl(tmp_path / "v3.jsonl", [line]), "--store", tmp_path / "s.db")
    assert result.code == 0 and "aggregator_type NOT is kept, but only AND and OR are scored" in result.err


def test_answer_nuggets_are_graded_by_nugget_assignment_only(tmp_path, cli):
    """The passage-level nugget methods (nugget-rating) grade the bank's claims, as before AND/OR questions
    gave answer nuggets: their EXAM-Cover would count answers, not questions."""
    from proctor import api
    from proctor.errors import UsageError
    from proctor.grading.plan import items_of
    from proctor.methods import get_method

    claims = {"query_id": "t1", "format_version": "v3",
              "claim_bank": {"Bees make honey.": {"claim": "Bees make honey.", "claim_id": "k1"}}}
    store = tmp_path / "s.db"
    assert cli("import", "bank", write_jsonl(tmp_path / "rt.jsonl", RAGTIME26), "--store", store).code == 0
    assert cli("import", "bank", write_jsonl(tmp_path / "k.jsonl", [claims]), "--store", store).code == 0
    opened = api.open_store(store)
    try:
        rt, k = ({v["bank"]: (v["bank"], v["version"]) for v in opened.banks.versions()}[name] for name in ("rt", "k"))
        with pytest.raises(UsageError, match="no nuggets in bank rt@"):
            items_of(opened, get_method("nugget-rating"), rt)
        assert items_of(opened, get_method("nugget-rating"), k) == {"t1": [("t1/k1", "Bees make honey.", None)]}
    finally:
        opened.close()
