"""Readers of queries, runs, qrels, corpora and banks: the formats they accept and what they reject."""

from __future__ import annotations

import gzip
import json

import pytest

from proctor.errors import InputError
from proctor.io.banks import read_bank
from proctor.io.corpus import read_corpus
from proctor.io.queries import read_queries
from proctor.io.trec import read_qrels, read_run, read_runs


@pytest.mark.parametrize(("name", "content"), [
    ("q.json", '{"1": "first query", "2": "second query"}'),
    ("q.tsv", "1\tfirst query\n2\tsecond query\n"),
    ("q.jsonl", '{"query_id": "1", "text": "first query"}\n{"qid": 2, "query": "second query"}\n'),
    ("q.txt", '{"id": "1", "text": "first query"}\n{"id": "2", "text": "second query"}\n'),
])
def test_query_formats(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    assert [(qid, text) for _, qid, text in read_queries(path)] == [("1", "first query"), ("2", "second query")]


def test_query_tsv_without_tab_names_line(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("1\tok\n2 no tab here\n")
    with pytest.raises(InputError, match=r"q\.tsv:2:"):
        read_queries(path)


def test_run_plain_and_gz_with_several_tags(tmp_path):
    text = "1 Q0 a 1 3.5 sysA\n1 Q0 b 2 2.5 sysA\n1 Q0 a 1 9 sysB\n"
    (tmp_path / "r.txt").write_text(text)
    (tmp_path / "r.txt.gz").write_bytes(gzip.compress(text.encode()))
    lines = read_run(tmp_path / "r.txt")
    assert lines == read_run(tmp_path / "r.txt.gz")
    assert {(r.run, r.query_id, r.passage_id, r.rank, r.score) for r in lines} == {
        ("sysA", "1", "a", 1, 3.5), ("sysA", "1", "b", 2, 2.5), ("sysB", "1", "a", 1, 9.0)}


@pytest.mark.parametrize(("content", "line", "message"), [
    ("1 Q0 a 1 3.5 s\n1 Q0 b 2 s\n", 2, "expected 6 columns"),
    ("1 Q0 a one 3.5 s\n", 1, "rank 'one' is not an integer"),
    ("1 Q0 a 1 high s\n", 1, "score 'high' is not a number"),
    ("1 Q0 a 1 1 s\n1 Q0 a 2 0.5 s\n", 2, "ranked twice"),
])
def test_run_errors(tmp_path, content, line, message):
    path = tmp_path / "run.txt"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        read_run(path)
    assert err.value.line == line and message in err.value.message


def test_runs_from_a_folder_and_duplicate_names(tmp_path):
    (tmp_path / "a.run").write_text("1 Q0 x 1 1 A\n")
    (tmp_path / "b.run").write_text("1 Q0 x 1 1 B\n")
    assert set(read_runs([tmp_path])) == {"A", "B"}
    (tmp_path / "c.run").write_text("1 Q0 y 1 1 A\n")
    with pytest.raises(InputError, match="run 'A' also comes from"):
        read_runs([tmp_path])


@pytest.mark.parametrize(("content", "line", "message"), [
    ("1 0 a 1\n1 0 b\n", 2, "expected 4 columns"),
    ("1 0 a 1\n1 0 b x\n", 2, "relevance 'x' is not an integer"),
    ("1 0 a 1\n1 0 a 2\n", 2, "judged 2 here and 1 on line 1"),
])
def test_qrels_errors(tmp_path, content, line, message):
    path = tmp_path / "qrels"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        read_qrels(path)
    assert err.value.line == line and message in err.value.message


def test_corpus_jsonl_and_tsv(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"id": "p1", "text": "alpha"}\n{"docid": "p2", "contents": "beta", '
                                      '"title": "T"}\n')
    (tmp_path / "c.tsv").write_text("p1\talpha\np2\tbeta\n")
    assert [r[1:] for r in read_corpus(tmp_path / "c.jsonl")] == [("p1", "alpha"), ("p2", "T\nbeta")]
    assert [r[1:] for r in read_corpus(tmp_path / "c.tsv")] == [("p1", "alpha"), ("p2", "beta")]


def test_bank_items_format_with_nuggets_facets_and_answers(tmp_path):
    lines = [
        {"query_id": "Q", "facet_id": "F1", "query_text": "Title / Sub", "info": {"hash": "x"},
         "items": [{"query_id": "Q", "facet_id": "F1", "question_id": "Q/F1/aa", "question_text": "Why?",
                    "gold_answers": ["because", "as"]}]},
        {"query_id": "Q", "facet_id": None, "query_text": "Title",
         "items": [{"query_id": "Q", "nugget_id": "Q/bb", "nugget_text": "A key fact"}]},
    ]
    path = tmp_path / "bank.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bank = read_bank(path)
    by_id = {q["question_id"]: q for q in bank.questions}
    assert by_id["Q/F1/aa"]["kind"] == "question" and by_id["Q/F1/aa"]["facet_id"] == "F1"
    assert by_id["Q/F1/aa"]["answers"] == ["as", "because"]
    assert by_id["Q/bb"]["kind"] == "nugget" and by_id["Q/bb"]["text"] == "A key fact"
    assert bank.query_texts == {"Q": "Title"}


def test_bank_older_questions_format(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"query_id": "7", "facet_id": None, "test_collection": "DL", "query_text": "q",
                                "info": None, "questions": [{"question_id": "7/x", "question_text": "What?",
                                                             "query_id": "7", "facet_id": None,
                                                             "info": None}]}) + "\n")
    bank = read_bank(path)
    assert [(q["question_id"], q["text"], q["kind"]) for q in bank.questions] == [("7/x", "What?", "question")]


@pytest.mark.parametrize(("line", "message"), [
    ({"query_id": "1"}, "expected a list under key 'items'"),
    ({"query_id": "1", "items": [{"question_id": "1/a"}]}, "needs a non-empty"),
    ({"query_id": "1", "items": [{"question_id": "1/a", "question_text": "x", "query_id": "2"}]},
     "names query '2'"),
    ({"query_id": "1", "items": [{"question_id": "1/a", "question_text": "x", "gold_answers": 5}]},
     "gold answers must be"),
])
def test_bank_errors_name_the_line(tmp_path, line, message):
    path = tmp_path / "bank.jsonl"
    good = {"query_id": "0", "items": [{"question_id": "0/a", "question_text": "ok"}]}
    path.write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(InputError) as err:
        read_bank(path)
    assert err.value.line == 2 and message in err.value.message


def test_a_query_given_twice_is_an_error(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("1\tfirst\n2\tsecond\n1\tagain\n")
    with pytest.raises(InputError, match=r"q\.tsv:3: query '1' given twice \(first on line 1\)"):
        read_queries(path)
