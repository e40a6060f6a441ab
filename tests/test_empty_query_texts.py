"""An empty (or whitespace-only) query text is refused as an empty question text is: FILE:LINE, exit 2, the
store unchanged; beside other data (a bank's `query_text`, a response's topic) a blank text means "not given"."""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import store_dump
from proctor.store import Store

CASES = [  # (file name, content, the line named)
    ("q.tsv", "q7\tbees\nq8\t\n", 2),
    ("q.tsv", "q7\t   \t \nq8\tbees\n", 1),
    ("q.tsv.gz", "q7\tbees\nq8\t \n", 2),
    ("q.jsonl", '{"query_id": "q7", "text": "bees"}\n{"query_id": "q8", "text": ""}\n', 2),
    ("q.jsonl", '{"qid": "q7", "query": "\\t\\n "}\n', 1),
    ("q.json", '{\n "q7": "bees",\n "q8": "  "\n}\n', 3),
    ("q.json", '[\n {"query_id": "q7", "text": "bees"},\n {"query_id": "q8", "text": ""}\n]\n', 3),
]


@pytest.mark.parametrize("name,content,line", CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_an_empty_query_text_is_refused_naming_its_line(cli, demo_store, tmp_path, name, content, line):
    path = tmp_path / name
    data = content.encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    before = store_dump(demo_store)
    result = cli("import", "queries", path, "--store", demo_store)
    qid = "q8" if "q8" in content.split("\n")[line - 1] or name.endswith(".json") and line == 3 else "q7"
    assert result.code == 2 and result.out == ""
    assert result.err == f"proctor: error: {path}:{line}: query {qid!r}: the text is empty\n"
    assert store_dump(demo_store) == before


def test_a_new_store_is_not_left_behind(cli, tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("q1\t\n")
    assert cli("import", "queries", path, "--store", tmp_path / "new.db").code == 2
    assert not (tmp_path / "new.db").exists()


def test_a_blank_query_text_in_a_bank_file_is_no_text(cli, tmp_path):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"query_id": "q1", "facet_id": None, "query_text": " ",
                                "items": [{"question_id": "q1/a", "question_text": "What do bees make?"}]}) + "\n")
    assert cli("import", "bank", bank, "--store", tmp_path / "s.db").code == 0
    store = Store.open(tmp_path / "s.db")
    try:
        assert store.corpus.queries().get("q1") is None  # known without a text, never the text " "
    finally:
        store.close()
