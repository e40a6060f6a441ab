"""Grades outlive no text: replacing a passage, query or question text sets the grades made from it aside as
stale (not counted in labels or leaderboards, listed by `info` and `grade-sets list`), and the next `grade` grades
exactly those pairs again. A store of schema 3 sets aside the grades of passages without text when migrated."""

from __future__ import annotations

import json

import pytest

from conftest import raw_rows, raw_script, seed_demo
from fake_openai import FakeOpenAI
from proctor import api
from proctor.api import LabelChoice
from proctor.store import Store


def _grade(cli, store, server):
    result = cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:fake-model", "--base-url",
                 server.base_url, "--concurrency", "4", "--format", "json", "--bank", "bank")
    assert result.code == 0, result.err
    return json.loads(result.out)


def _retext_passage(folder, tmp_path):
    lines = (folder / "corpus.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["text"] = "Bees fan their wings (a replaced text)."
    (tmp_path / "corpus.jsonl").write_text(json.dumps(record) + "\n")
    return "corpus", tmp_path / "corpus.jsonl", ("passage_id", record["id"])


def _retext_query(folder, tmp_path):
    (tmp_path / "queries.tsv").write_text("q2\twhy is the sea blue\n")
    return "queries", tmp_path / "queries.tsv", ("query_id", "q2")


def _retext_question(folder, tmp_path):
    record = json.loads((folder / "bank.jsonl").read_text().splitlines()[0])
    record["items"][0]["question_text"] = "What do bees bring home from flowers?"
    (tmp_path / "more.jsonl").write_text(json.dumps(record) + "\n")
    return "bank", tmp_path / "more.jsonl", ("question_id", record["items"][0]["question_id"])


REPLACEMENTS = {"passage text": _retext_passage, "query text": _retext_query, "question text": _retext_question}


def _pairs(store, column, value, table="grades"):
    """Rows of `table` (grades, or those set aside in stale_grades) whose `column` is `value`, as the file
    holds them."""
    sql = (f"SELECT COUNT(*) FROM {table} JOIN grade_items USING (item) WHERE {column} = ?")
    return raw_rows(store, sql, (value,))[0][0]


@pytest.mark.parametrize("case", REPLACEMENTS)
def test_grades_of_a_replaced_text_are_stale_and_graded_again(tmp_path, cli, case):
    store = seed_demo(tmp_path / "demo")
    with FakeOpenAI() as server:
        first = _grade(cli, store, server)
        kind, path, (column, value) = REPLACEMENTS[case](tmp_path / "demo" / "collection", tmp_path)
        used = _pairs(store, column, value)
        assert used > 0
        refused = cli("import", kind, path, "--store", store)
        assert refused.code == 2 and "--replace" in refused.err
        replaced = cli("import", kind, path, "--store", store, "--replace")
        assert replaced.code == 0, replaced.err
        assert f"{used} grades were made from a text this import replaced" in replaced.err
        assert _pairs(store, column, value) == 0 and _pairs(store, column, value, "stale_grades") == used
        opened = Store.open(store)
        labels = api.labels(opened, LabelChoice(method="self-rating")).qrels
        counts = opened.counts()
        opened.close()
        if column != "question_id":  # a question is one of several: the pair keeps a label from the others
            assert all(value not in (qid, pid) for qid, per in labels.items() for pid in per)
        (gid, why), = counts["stale_grades"].items()
        assert sum(why.values()) == used
        info = cli("info", "--store", store)
        assert f"stale grades   {gid}" in info.out and f"{used} (" in info.out
        listed = json.loads(cli("grade-sets", "list", "--store", store, "--format", "json").out)
        assert sum(listed[0]["stale"].values()) == used
        again = _grade(cli, store, server)
    assert again["graded_now"] == used and again["already_graded"] == first["graded_now"] - used
    assert _pairs(store, column, value) == used


def test_migrating_a_schema_3_store_sets_aside_grades_of_passages_without_text(tmp_path, cli):
    store = seed_demo(tmp_path)
    with FakeOpenAI() as server:
        _grade(cli, store, server)
    textless = _pairs(store, "passage_id", "d101")
    raw_script(store,  # a store of schema 3, graded before schema 4 without the passage's text
               "UPDATE passages SET text = NULL WHERE passage_id = 'd101'",
               *(f"DROP TABLE {table}" for table in ("import_log", "stale_grades")),
               *(f"ALTER TABLE {table} DROP COLUMN origin"
                 for table in ("queries", "passages", "rankings", "judgments")),
               "UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    assert textless > 0
    opened = Store.open(store)
    assert "schema 3 to 4" in opened.migration_note and f"{textless} grades" in opened.migration_note
    assert opened.imports.stale_counts() and opened.corpus.unjudgeable() > 0
    assert opened.schema.version() == 7 and "origin" in opened.schema.columns("rankings")
    opened.close()
    assert _pairs(store, "passage_id", "d101") == 0


def test_an_exampp_file_replacing_a_text_keeps_its_own_new_grades(tmp_path, cli):
    store = seed_demo(tmp_path)
    grades = tmp_path / "collection" / "grades.jsonl"
    assert cli("import", "exampp", grades, "--store", store).code == 0
    lines = grades.read_text().splitlines()
    record = json.loads(lines[0])
    record[1][0]["text"] = "Bees make honey (a replaced text)."
    for rating in record[1][0]["exam_grades"][0]["self_ratings"]:
        rating["self_rating"] = 4
    lines[0] = json.dumps(record)
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n")
    result = cli("import", "exampp", changed, "--store", store, "--replace")
    assert result.code == 0 and "3 grades were made from a text this import replaced" in result.err, result.err
    pid = record[1][0]["paragraph_id"]
    assert raw_rows(store, "SELECT grade FROM grades JOIN grade_items USING (item) WHERE passage_id = ?",
                    (pid,)) == [(4,)] * 3
    assert _pairs(store, "passage_id", pid, "stale_grades") == 3
