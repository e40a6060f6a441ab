"""Every bad input is refused with FILE:LINE, exit 2 and the store unchanged; identical duplicates stay
harmless."""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import run_process
from proctor.store import Store


def _para(pid="d1", **extra):
    return {"paragraph_id": pid, "text": "bees make honey", "paragraph_data": {"judgments": [], "rankings": []},
            "exam_grades": None, **extra}


def _exampp(*paragraphs, qid="q1"):
    return json.dumps([qid, list(paragraphs)])


def _grades(rating):
    return [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
             "self_ratings": [{"question_id": "q1/a", "self_rating": rating}], "answers": [["q1/a", "x"]]}]


BAD = [  # (kind, file name, content, what the error says)
    ("queries", "q.tsv", "q 1\tbees\n", "contains whitespace"),
    ("queries", "q.jsonl", '{"query_id": {"a": 1}, "text": "bees"}\n', "got an object"),
    ("queries", "q.jsonl", '{"query_id": true, "text": "bees"}\n', "got a boolean"),
    ("queries", "q.jsonl", '{"query_id": null, "text": "bees"}\n', "got null"),
    ("queries", "q.jsonl", '{"query_id": NaN, "text": "bees"}\n', "got nan"),
    ("queries", "q.jsonl", '{"query_id": "q\\tx", "text": "bees"}\n', "control character"),
    ("queries", "q.jsonl", '{"query_id": "q1", "text": "bees", "text": "ants"}\n', "given twice with different"),
    ("corpus", "c.jsonl", '{"id": "d 1", "text": "x"}\n', "contains whitespace"),
    ("corpus", "c.jsonl", '{"id": "d1", "text": "x"}\n{"id": "d1", "text": "y"}\n', "another text"),
    ("runs", "r.run", "q1 Q0 d1 1 nan r\n", "not a finite number"),
    ("runs", "r.run", "q1 Q0 d1 1 inf r\n", "not a finite number"),
    ("qrels", "x.qrels", "q1 0 d1 99999999999999999999999\n", "out of range"),
    ("qrels", "x.qrels", "q1 0 d1 1\nq1 0 d1 2\n", "judged 2 here and 1"),
    ("exampp", "e.jsonl", _exampp(_para(exam_grades=_grades(7))), "not a grade 0..5"),
    ("exampp", "e.jsonl", _exampp(_para(exam_grades=_grades(-2))), "not a grade 0..5"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"judgments": [{"query": "q2", "relevance": 1}]})),
     "a judgment for query 'q2' inside the line of query 'q1'"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"judgments": [{"query": "q1", "relevance": 1}]}),
                                  _para(paragraph_data={"judgments": [{"query": "q1", "relevance": 2}]})),
     "judged 1 and 2"),
    ("exampp", "e.jsonl", _exampp(_para(), qid="q9"), "unknown query id 'q9'"),
    ("exampp", "e.jsonl", _exampp(_para(pid={"a": 1})), "got an object"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [
        {"method": "r", "queryId": "q1", "rank": 1, "score": float("nan")}]})), "not a finite number"),
    ("responses", "g.jsonl", '{"run_id": "a/b", "query_id": "q1", "text": "Bees make honey."}\n', "contains '/'"),
    ("responses", "g.jsonl", '{"run_id": "strong", "query_id": "q1", "text": "Bees make honey."}\n',
     "already in the store as a retrieval run"),
    ("bank", "b.jsonl", '{"query_id": "q1", "items": [{"question_id": "q1/a b", "question_text": "Why?"}]}\n',
     "contains whitespace"),
]


@pytest.mark.parametrize("kind,name,content,message", BAD, ids=[f"{b[0]}-{b[3][:30]}" for b in BAD])
def test_bad_input_is_refused_with_file_and_line(demo_store, tmp_path, kind, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    before = Store.open(demo_store).dump()
    result = run_process("import", kind, path, "--store", demo_store)
    assert result.code == 2 and f"{path}:" in result.err and message in result.err, result.err
    assert "Traceback" not in result.err
    assert Store.open(demo_store).dump() == before


GOOD = [
    ("queries", "q.jsonl", '{"query_id": 7, "text": "numbers are ids"}\n', 1),
    ("queries", "q.jsonl", '{"query_id": "q7", "text": "x", "text": "x"}\n', 1),
    ("corpus", "c.jsonl", '{"id": "d1", "text": "same"}\n{"id": "d1", "text": "same"}\n', 1),
    ("qrels", "x.qrels", "q1 0 d101 1\nq1 0 d101 1\n", 1),
]


@pytest.mark.parametrize("kind,name,content,n", GOOD)
def test_identical_duplicates_and_numeric_ids_are_harmless(tmp_path, kind, name, content, n):
    path = tmp_path / name
    path.write_text(content)
    result = run_process("import", kind, path, "--store", tmp_path / "s.db")
    assert result.code == 0, result.err


def test_response_ids_cannot_collide(tmp_path):
    """run `a` + query `b/c` and run `a/b` + query `c` would both give `a/b/c/0`: refused, not merged."""
    answers = tmp_path / "g.jsonl"
    answers.write_text(json.dumps({"run_id": "a", "query_id": "b/c", "text": "One."}) + "\n")
    result = run_process("import", "responses", answers, "--store", tmp_path / "s.db")
    assert result.code == 2 and "contains '/'" in result.err


def test_the_real_dl19_pool_still_imports(dl19_pool, tmp_path):
    with gzip.open(dl19_pool, "rt") as handle:
        first = handle.readline()
    sample = tmp_path / "one.jsonl"
    sample.write_text(first)
    assert run_process("import", "exampp", sample, "--store", tmp_path / "s.db").code == 0
