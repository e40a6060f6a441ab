"""Every bad input is refused with FILE:LINE, exit 2 and the store unchanged; identical duplicates stay
harmless."""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import seed_demo
from proctor.io.fields import as_id
from proctor.store import Store


def _para(pid="d1", **extra):
    return {"paragraph_id": pid, "text": "bees make honey", "paragraph_data": {"judgments": [], "rankings": []},
            "exam_grades": None, **extra}


def _exampp(*paragraphs, qid="q1"):
    return json.dumps([qid, list(paragraphs)])


def _grades(rating):
    return [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
             "self_ratings": [{"question_id": "q1/a", "self_rating": rating}], "answers": [["q1/a", "x"]]}]


@pytest.fixture(scope="module")
def refusing_store(tmp_path_factory):
    """The demo collection in one store shared by the refusal tests: each checks that it is left unchanged."""
    return seed_demo(tmp_path_factory.mktemp("refusing"))


def _assert_import_refused(cli, store, kind, path, where: str, message: str) -> None:
    """`import KIND PATH` exits 2 with `where` (FILE:LINE) and `message`, no traceback, the store unchanged."""
    before = Store.open(store).dump()
    result = cli("import", kind, path, "--store", store)
    assert result.code == 2 and where in result.err and message in result.err, result.err
    assert "Traceback" not in result.err
    assert Store.open(store).dump() == before


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
def test_bad_input_is_refused_with_file_and_line(refusing_store, cli, tmp_path, kind, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    _assert_import_refused(cli, refusing_store, kind, path, f"{path}:", message)


GOOD = [
    ("queries", "q.jsonl", '{"query_id": 7, "text": "numbers are ids"}\n', 1),
    ("queries", "q.jsonl", '{"query_id": "q7", "text": "x", "text": "x"}\n', 1),
    ("corpus", "c.jsonl", '{"id": "d1", "text": "same"}\n{"id": "d1", "text": "same"}\n', 1),
    ("qrels", "x.qrels", "q1 0 d101 1\nq1 0 d101 1\n", 1),
]


@pytest.mark.parametrize("kind,name,content,n", GOOD)
def test_identical_duplicates_and_numeric_ids_are_harmless(tmp_path, cli, kind, name, content, n):
    path = tmp_path / name
    path.write_text(content)
    result = cli("import", kind, path, "--store", tmp_path / "s.db")
    assert result.code == 0, result.err


def test_response_ids_cannot_collide(tmp_path, cli):
    """run `a` + query `b/c` and run `a/b` + query `c` would both give `a/b/c/0`: refused, not merged."""
    answers = tmp_path / "g.jsonl"
    answers.write_text(json.dumps({"run_id": "a", "query_id": "b/c", "text": "One."}) + "\n")
    result = cli("import", "responses", answers, "--store", tmp_path / "s.db")
    assert result.code == 2 and "contains '/'" in result.err


def test_the_real_dl19_pool_still_imports(dl19_pool, tmp_path, cli):
    with gzip.open(dl19_pool, "rt") as handle:
        first = handle.readline()
    sample = tmp_path / "one.jsonl"
    sample.write_text(first)
    assert cli("import", "exampp", sample, "--store", tmp_path / "s.db").code == 0


def _rank(rank=1, score=1.0, method="r", query="q1"):
    return {"method": method, "paragraphId": "d1", "queryId": query, "rank": rank, "score": score}


def _rated(*ratings, llm="m"):
    return [{"llm": llm, "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
             "self_ratings": [{"question_id": q, "self_rating": r} for q, r in ratings], "answers": []}]


def _judged(relevance, query="q1"):
    return {"paragraph_data": {"judgments": [{"paragraphId": "d1", "query": query, "relevance": relevance}],
                               "rankings": []}}


REFUSED = [  # (kind, file name, content, line of the error, what the error says): each passed before
    ("queries", "q.jsonl", '{"query_id": 1.5, "text": "x"}\n', 1, "fractional number"),
    ("queries", "q.jsonl", '\n{"query_id": "q\\u0080x", "text": "x"}\n', 2, "control character"),
    ("queries", "q.jsonl", '{"query_id": "qx", "text": "bees\\ud800"}\n', 1, "lone UTF-16 surrogate"),
    ("queries", "q.jsonl", '{"query_id": "q\\udc00", "text": "bees"}\n', 1, "lone UTF-16 surrogate"),
    ("queries", "q.json", '{"q1": "a",\n "q2": "b",\n "q1": "c"}\n', 3, "given twice with different values"),
    ("queries", "q.json", '[{"id": "q1", "text": "a"},\n {"id": "q 2", "text": "b"}]\n', 2, "contains whitespace"),
    ("queries", "q.json", '[{"id": "q1", "text": "a"},\n {"id": "q1", "text": "b"}]\n', 2,
     "given twice (first on line 1)"),
    ("queries", "q.json", '{"q1": "a",\n "q2": ["b"]}\n', 2, "text must be a string"),
    ("queries", "q.jsonl", "[" * 100000 + "\n", 1, "nested too deeply"),
    ("queries", "q.jsonl", '{"query_id": ' + "9" * 5000 + ', "text": "x"}\n', 1, "more than 4300 digits"),
    ("runs", "r.run", "q1 Q0 d1 1 1 r\nq1 Q0 d2 -1 1 r\n", 2, "rank -1 is out of range"),
    ("runs", "r.run", "q1 Q0 d1 99999999999999999999999 1 r\n", 1, "out of range"),
    ("runs", "r.run", "q1 Q0 d1 1_0 1 r\n", 1, "not an integer"),
    ("runs", "r.run", "q1 Q0 d1 1 1_5 r\n", 1, "is not a number"),
    ("runs", "r.run", "q1 Q0 d1 1 1 r\x01x\n", 1, "control character"),
    ("qrels", "x.qrels", "q1 0 d\x001 1\n", 1, "control character"),
    ("qrels", "x.qrels", "q1 0 d1 -99999999999999999999999\n", 1, "out of range"),
    ("qrels", "x.qrels", "q1 0 d1 \u0661\n", 1, "not an integer"),  # an Arabic-Indic digit: int() reads it
    ("corpus", "c.jsonl", '{"id": 3.5, "text": "x"}\n', 1, "fractional number"),
    ("corpus", "c.jsonl", '{"id": "d1", "text": "x"}\n{"id": ["d2"], "text": "x"}\n', 2, "got a list"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [_rank(rank=1.5)]})), 1, "not an integer"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [_rank(rank=-1)]})), 1, "out of range"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [_rank(rank=10**30)]})), 1, "out of range"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [_rank(score=True)]})), 1, "not a number"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [_rank(query="q2")]})), 1,
     "a ranking for query 'q2' inside the line of query 'q1'"),
    ("exampp", "e.jsonl", _exampp(_para(paragraph_data={"rankings": [_rank(), _rank(rank=2, score=0.5)]})), 1,
     "ranks passage 'd1' twice"),
    ("exampp", "e.jsonl", _exampp(_para(), _para(text="other text")), 1, "given again with another text"),
    ("exampp", "e.jsonl", _exampp(_para(exam_grades=_rated(("q1/a", 1), ("q1/a", 3)))), 1,
     "rated twice differently"),
    ("exampp", "e.jsonl", _exampp(_para(exam_grades=_rated(("q1/a", 1))), _para(exam_grades=_rated(("q1/a", 3)))),
     1, "graded twice differently"),
    ("exampp", "e.jsonl", _exampp(_para(**_judged(1))) + "\n" + _exampp(_para(**_judged(2))) + "\n", 2,
     "judged 1 and 2 for query 'q1' (first on line 1)"),
    ("exampp", "e.jsonl", _exampp(_para(**_judged(99999999999999999999999))), 1, "out of range"),
    ("exampp", "e.jsonl", _exampp(_para(**_judged(True))), 1, "not an integer"),
    ("exampp", "e.jsonl", _exampp(_para(exam_grades=[{"llm": "m", "answers": [], "correctAnswered": [None]}])), 1,
     "question id must be a string or a number, got null"),
    ("exampp", "e.jsonl", _exampp(_para(exam_grades=_rated(("q1/a", 1), llm={"name": "m"}))), 1,
     "llm must be a string"),
    ("responses", "g.jsonl", json.dumps({"run_id": "gen", "topic_id": "q1", "references": [{"id": "d1"}],
                                         "answer": [{"text": "Bees.", "citations": [0]}]}) + "\n", 1,
     "cited document id must be a string or a number, got an object"),
]


@pytest.mark.parametrize("kind,name,content,line,message", REFUSED, ids=[f"{r[0]}-{r[4][:30]}" for r in REFUSED])
def test_refused_in_process_with_file_and_line(cli, refusing_store, tmp_path, kind, name, content, line, message):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8", "surrogatepass"))
    _assert_import_refused(cli, refusing_store, kind, path, f"{path}:{line}: ", message)


ACCEPTED = [  # (kind, file name, content, rows the store then holds)
    ("queries", "q.jsonl", '{"query_id": 7.0, "text": "an integral number is its decimal text"}\n',
     {"queries": [("7", "an integral number is its decimal text")]}),
    ("queries", "q.json", '{"q\\ud83d\\ude00": "a surrogate pair is one character"}\n',
     {"queries": [("q\U0001F600", "a surrogate pair is one character")]}),
    ("runs", "r.run", "q1 Q0 d1 0 1.5 r\n", {"rankings": [("r", "q1", "d1", 0, 1.5)]}),  # TREC runs count from 0
    ("qrels", "x.qrels", "q1 0 d1 -1\nq1 0 d1 -1\n", {"judgments": [("q1", "d1", -1)]}),
    ("exampp", "e.jsonl", _exampp(_para(**_judged(2)), _para(**_judged(2))) + "\n" + _exampp(_para(**_judged(2)))
     + "\n", {"judgments": [("q1", "d1", 2)], "passages": [("d1", "bees make honey")]}),
]


@pytest.mark.parametrize("kind,name,content,rows", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_identical_repeats_integral_numbers_and_rank_zero_are_accepted(cli, tmp_path, kind, name, content, rows):
    path = tmp_path / name
    path.write_text(content)
    result = cli("import", kind, path, "--store", tmp_path / "s.db")
    assert result.code == 0, result.err
    dump = Store.open(tmp_path / "s.db").dump()
    for table, expected in rows.items():
        assert dump[table] == expected


def test_nugget_self_ratings_name_the_nugget(cli, tmp_path):
    """exam_pp writes `question_id: null` and a `nugget_id` for nugget ratings."""
    grades = [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "NuggetSelfRatedPrompt"},
               "self_ratings": [{"question_id": None, "nugget_id": "q1/n1", "self_rating": 4}], "answers": []}]
    path = tmp_path / "e.jsonl"
    path.write_text(_exampp(_para(exam_grades=grades)) + "\n")
    assert cli("import", "exampp", path, "--store", tmp_path / "s.db").code == 0
    grade = Store.open(tmp_path / "s.db").dump()["grades"][0]
    assert grade[2:5] == ("q1", "d1", "q1/n1") and grade[6] == 4


def _generated_store(tmp_path, cli):
    store = seed_demo(tmp_path, runs=["strong"])
    answers = tmp_path / "g.jsonl"
    answers.write_text(json.dumps({"run_id": "gen", "query_id": "q1", "text": "Bees make honey. From nectar."}) + "\n")
    assert cli("import", "responses", answers, "--store", store).code == 0
    return store, answers


def test_reimporting_the_same_responses_changes_nothing(cli, tmp_path):
    store, answers = _generated_store(tmp_path, cli)
    before = Store.open(store).dump()
    result = cli("import", "responses", answers, "--store", store)
    assert result.code == 0 and "nothing changed" in result.err, result.err
    assert Store.open(store).dump() == before


@pytest.mark.parametrize("kind,content,message", [
    ("responses", {"run_id": "gen", "query_id": "q1", "text": "Bees sleep."},
     "run 'gen' already holds a different response to query 'q1'"),
    ("runs", "q1 Q0 d101 1 2.0 gen", "run 'gen' is already in the store as generated responses"),
    ("exampp", ["q1", [_para("d101", paragraph_data={"rankings": [_rank(method="gen")]})]],
     "run 'gen' is already in the store as generated responses"),
])
def test_responses_and_retrieval_runs_never_merge(cli, tmp_path, kind, content, message):
    store, _ = _generated_store(tmp_path, cli)
    path = tmp_path / "second.txt"
    path.write_text((content if isinstance(content, str) else json.dumps(content)) + "\n")
    _assert_import_refused(cli, store, kind, path, f"{path}:1: ", message)


@pytest.mark.parametrize("value,expected", [
    ("q1", "q1"), (7, "7"), (7.0, "7"), (-3, "-3"),
])
def test_the_one_id_check_accepts(value, expected):
    assert as_id(value, "query") == expected


@pytest.mark.parametrize("value,message", [
    (1.5, "fractional number"), (float("nan"), "got nan"), (float("inf"), "got inf"), (True, "got a boolean"),
    (None, "got null"), ({"a": 1}, "got an object"), ([1], "got a list"), ("", "is empty"),
    ("a b", "whitespace"), ("a\u00a0b", "whitespace"), ("a\x85b", "whitespace"), ("a\x80b", "control character"),
    ("a\x7fb", "control character"), ("a\ud800", "control character"), ("q\u200bz", "invisible character"),
])
def test_the_one_id_check_refuses(value, message):
    with pytest.raises(ValueError, match=message):
        as_id(value, "query")


def test_exampp_facet_judgments_and_rankings_belong_to_their_query(tmp_path, cli):
    line = json.dumps(["q1", [{"paragraph_id": "d1", "text": "x", "paragraph_data": {
        "judgments": [{"query": "q1/f1", "relevance": 1}],
        "rankings": [{"method": "r", "queryId": "q1/f1", "rank": 1, "score": 1.0}]}, "exam_grades": None}]])
    path = tmp_path / "car.jsonl"
    path.write_text(line + "\n")
    assert cli("import", "exampp", path, "--store", tmp_path / "s.db").code == 0
    store = Store.open(tmp_path / "s.db")
    assert store.corpus.judgments() == {"q1/f1": {"d1": 1}}
    assert store.corpus.ranking_rows() == [("r", "q1/f1", "d1", 1, 1.0)]
