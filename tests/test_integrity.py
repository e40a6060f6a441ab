"""Nothing in the store is silently replaced: an import that contradicts what the store holds is refused (FILE:LINE,
what is stored and which import wrote it, the store byte-identical), the identical file again changes nothing,
and `--replace` replaces, says what it replaced and logs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import opened_store, raw_rows, seed_demo, store_dump
from inprocess import copy_store, run_cli


def _edit(source: Path, target: Path, line: int, change) -> Path:
    """A copy of `source` with line `line` (1-based) changed by `change(text) -> text` (None drops it)."""
    lines = source.read_text().splitlines()
    new = change(lines[line - 1])
    lines[line - 1:line] = [] if new is None else [new]
    target.write_text("\n".join(lines) + "\n")
    return target


def _json(change):
    """An edit of one JSON line by `change(obj)`, which changes it in place."""

    def edit(text: str) -> str:
        obj = json.loads(text)
        change(obj)
        return json.dumps(obj)
    return edit


def _first_entry(obj):
    return obj[1][0]["exam_grades"][0]


def _rate(obj, rating=2):
    _first_entry(obj)["self_ratings"][0]["self_rating"] = rating


def _no_ratings(obj):
    del _first_entry(obj)["self_ratings"]


def _retext(obj):
    obj[1][0]["text"] = "Bees make honey from nectar (a different text)."


def _judge(obj):
    obj[1][0]["paragraph_data"]["judgments"] = [{"query": "q1", "relevance": 0}]


def _bank_question(obj):
    obj["items"][0]["question_text"] = "What do bees bring home?"


def _bank_query(obj):
    obj["query_text"] = "how do wasps make honey"


CONTRADICTIONS = {
    # case: (kind, file in the collection, line, edit, the new file's name, what the message names)
    "query text": ("queries", "queries.tsv", 2, lambda t: "q2\twhy is the sea blue", None,
                   ["why is the sky blue", "why is the sea blue", "import queries"]),
    "passage text": ("corpus", "corpus.jsonl", 2, _json(lambda o: o.update(text="other")), None,
                     ["'d102'", "'other'", "import corpus"]),
    "judgment": ("qrels", "qrels.txt", 1, lambda t: "q1 0 d101 0", None,
                 ["relevance 3", "relevance 0", "import qrels"]),
    "run score": ("runs", "runs/middling.run", 2, lambda t: t.replace("8.0", "8.5"), None,
                  ["score 8.0", "score 8.5", "import runs"]),
    "run rank": ("runs", "runs/middling.run", 2, lambda t: t.replace(" 2 8.0", " 7 8.0"), None,
                 ["rank 2", "rank 7"]),
    "run other passage": ("runs", "runs/middling.run", 2, lambda t: t.replace("d103", "d199"), None,
                          ["does not rank this passage", "import runs"]),
    "run lacks a ranking": ("runs", "runs/middling.run", 1, lambda t: None, None,
                            ["which this file lacks", "import runs"]),
    "bank question text": ("bank", "bank.jsonl", 1, _json(_bank_question), "other-bank.jsonl",
                           ["another text in bank 'bank'", "What do bees bring home?"]),
    "bank query text": ("bank", "bank.jsonl", 1, _json(_bank_query), None,
                        ["how do bees make honey", "how do wasps make honey", "import queries"]),
    "exampp grade": ("exampp", "grades.jsonl", 1, _json(_rate), None,
                     ["grade 5", "grade 2", "import exampp"]),
    "exampp entry without self_ratings": ("exampp", "grades.jsonl", 1, _json(_no_ratings), None,
                                          ["grade 5", "grade None", "'failed'", "import exampp"]),
    "exampp passage text": ("exampp", "grades.jsonl", 1, _json(_retext), None,
                            ["'d101'", "a different text", "import"]),
    "exampp judgment": ("exampp", "grades.jsonl", 1, _json(_judge), None, ["relevance 3", "relevance 0"]),
}


@pytest.fixture(scope="module")
def graded_template(tmp_path_factory) -> tuple[Path, Path]:
    """The demo store with the demo's exam_pp grades imported, built once for the module, and the collection's
    folder: read only (`graded` gives each test a copy of the store; the files are only read)."""
    folder = tmp_path_factory.mktemp("graded")
    store = seed_demo(folder)
    assert run_cli("import", "exampp", folder / "collection" / "grades.jsonl", "--store", store).code == 0
    return store, folder / "collection"


@pytest.fixture
def graded(graded_template, tmp_path) -> tuple[Path, Path]:
    """A copy of the graded demo store for the test (the import log names the collection's files, as the
    original does); the collection's folder."""
    store, folder = graded_template
    return copy_store(store, tmp_path / "s.db"), folder


@pytest.mark.parametrize("case", CONTRADICTIONS)
def test_an_import_contradicting_the_store_is_refused_and_changes_nothing(graded, cli, tmp_path, case):
    store, folder = graded
    kind, name, line, edit, new_name, named = CONTRADICTIONS[case]
    changed = _edit(folder / name, tmp_path / (new_name or Path(name).name), line, edit)
    before = store_dump(store)
    result = cli("import", kind, changed, "--store", store)
    assert result.code == 2, result.err
    assert f"{changed}:{line}:" in result.err and "Traceback" not in result.err
    assert all(part in result.err for part in named), result.err
    assert "--replace" in result.err
    assert store_dump(store) == before
    from proctor import api
    from proctor.errors import InputError

    opened = api.open_store(store)
    try:
        with pytest.raises(InputError) as refused:  # the same refusal from Python names the parameter
            api.import_files(opened, kind, [changed])
    finally:
        opened.close()
    assert refused.value.params == ("replace",) and "--replace" not in str(refused.value)
    assert f"{changed}:{line}:" in str(refused.value) and "pass replace" in str(refused.value)
    assert refused.value.spelled({"replace": "--replace"}) == result.err.removeprefix("proctor: error: ").strip()
    assert store_dump(store) == before


@pytest.mark.parametrize("kind, name", [("queries", "queries.tsv"), ("corpus", "corpus.jsonl"),
                                        ("qrels", "qrels.txt"), ("runs", "runs/middling.run"),
                                        ("bank", "bank.jsonl"), ("exampp", "grades.jsonl")])
def test_the_identical_file_again_changes_nothing(graded, cli, kind, name):
    store, folder = graded
    before = store_dump(store)
    result = cli("import", kind, folder / name, "--store", store)
    assert result.code == 0, result.err
    assert store_dump(store) == before


REPLACED = {
    # case: (kind, file, line, edit, what the summary counts, a read of the store and the value it then gives)
    "passage text": ("corpus", "corpus.jsonl", 2, _json(lambda o: o.update(text="other")), "1 passages",
                     (lambda s: s.corpus.passage_texts()["d102"], "other")),
    "query text": ("queries", "queries.tsv", 2, lambda t: "q2\twhy is the sea blue", "1 queries",
                   (lambda s: s.corpus.queries()["q2"], "why is the sea blue")),
    "judgment": ("qrels", "qrels.txt", 1, lambda t: "q1 0 d101 0", "1 judgments",
                 (lambda s: s.corpus.judgments()["q1"]["d101"], 0)),
    "run": ("runs", "runs/middling.run", 24, lambda t: None, "24 rankings",
            (lambda s: sum(row[0] == "middling" for row in s.corpus.ranking_rows()), 23)),
    "exampp grade": ("exampp", "grades.jsonl", 1, _json(_rate), "1 grades",
                     (lambda s: sum(g.grade == 2 and g.passage_id == "d101"
                                    for gs in s.grades.grade_sets() for g in s.grades.records(gs)), 1)),
}


@pytest.mark.parametrize("case", REPLACED)
def test_replace_replaces_and_says_what(graded, cli, tmp_path, case):
    store, folder = graded
    kind, name, line, edit, counted, (read, value) = REPLACED[case]
    changed = _edit(folder / name, tmp_path / Path(name).name, line, edit)
    result = cli("import", kind, changed, "--store", store, "--replace")
    assert result.code == 0, result.err
    assert f"replaced {counted}" in result.err
    with opened_store(store) as opened:
        assert read(opened) == value
        last = opened.imports.import_log()[-1]
    assert (last["kind"], last["path"]) == (kind, str(changed))
    assert int(counted.split()[0]) == last["replaced"][counted.split()[1]]
    again = cli("import", kind, changed, "--store", store)  # now the stored content: the same file is a no-op
    assert again.code == 0 and "nothing changed" in again.err


def test_the_import_log_names_every_file_that_changed_the_store(graded, cli):
    store, folder = graded
    with opened_store(store) as opened:
        rows = opened.imports.import_log()
    assert [r["kind"] for r in rows] == ["queries", "corpus", "qrels", "bank", "runs", "runs", "runs", "runs", "exampp"]
    assert rows[0]["counts"] == {"queries": 4} and rows[-1]["path"] == str(folder / "grades.jsonl")


def _same(obj):
    pass


def _other_query(obj):
    obj["query_id"] = "q2"
    obj.pop("query_text", None)
    for item in obj["items"]:
        item["query_id"] = "q2"


SHARED_QUESTIONS = {
    # case: (edit of the bank's first record, extra options, exit status, what the message says)
    "same id and text in another bank": (_same, (), 0, "bank other@"),
    "same id, another text": (_bank_question, (), 2, "is stored with another text in bank 'bank'"),
    "same id, another query": (_other_query, (), 2, "already belongs to query 'q1'"),
    "same id, another text, --replace": (_bank_question, ("--replace",), 0, "replaced"),
    "same id, another query, --replace": (_other_query, ("--replace",), 2, "ids are never moved"),
}


@pytest.mark.parametrize("case", SHARED_QUESTIONS)
def test_a_question_may_be_in_several_banks_with_its_one_text(graded, cli, tmp_path, case):
    store, folder = graded
    edit, options, code, said = SHARED_QUESTIONS[case]
    other = _edit(folder / "bank.jsonl", tmp_path / "other.jsonl", 1, _json(edit))
    before = store_dump(store)
    result = cli("import", "bank", other, "--store", store, *options)
    assert result.code == code and said in result.err, result.err
    if code == 2:
        assert store_dump(store) == before and f"{other}:1:" in result.err
    else:
        texts = raw_rows(store, "SELECT DISTINCT text FROM questions WHERE question_id ="  # the file's rows
                         " (SELECT question_id FROM questions WHERE bank_id = 'other' LIMIT 1)")
        assert len(texts) == 1  # one question: one text, whichever bank holds it


def test_the_two_dl19_banks_share_six_questions(dl19_pool, tmp_path, cli):
    banks = [dl19_pool.parent / "dl19-questions-graded.jsonl.gz", dl19_pool.parent / "dl19-questions-v2.jsonl.gz"]
    store = tmp_path / "s.db"
    for bank in banks:
        result = cli("import", "bank", bank, "--store", store)
        assert result.code == 0, result.err
    shared = raw_rows(store, "SELECT COUNT(*) FROM (SELECT question_id FROM questions GROUP BY question_id"  # rows
                      " HAVING COUNT(DISTINCT bank_id) = 2 AND COUNT(DISTINCT text) = 1)")[0][0]
    assert shared == 6
    info = json.loads(cli("info", "--store", store, "--format", "json").out)
    assert info["questions"] == 430 + 430 - 6


def test_a_different_response_is_refused_then_replaced(graded, cli, tmp_path):
    store, _ = graded
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps({"run_id": "rag", "query_id": "q1", "text": "Bees make honey from nectar."}) + "\n")
    second.write_text(json.dumps({"run_id": "rag", "query_id": "q2", "text": "Light scatters."}) + "\n"
                      + json.dumps({"run_id": "rag", "query_id": "q1", "text": "Bees fan nectar dry."}) + "\n")
    assert cli("import", "responses", first, "--store", store).code == 0
    before = store_dump(store)
    refused = cli("import", "responses", second, "--store", store)
    assert refused.code == 2 and f"{second}:2:" in refused.err and "--replace" in refused.err
    assert store_dump(store) == before
    replaced = cli("import", "responses", second, "--store", store, "--replace")
    assert replaced.code == 0 and "replaced 1 responses" in replaced.err, replaced.err
    with opened_store(store) as opened:
        ranked = opened.corpus.ranked_lists()["rag"]["q1"]
        texts = opened.corpus.passage_texts_of(ranked)
    assert [texts[pid] for pid in ranked] == ["Bees fan nectar dry."]


def test_a_response_topic_text_never_replaces_the_query_text(graded, cli, tmp_path):
    store, _ = graded
    path = tmp_path / "rag.jsonl"
    record = {"run_id": "rag", "topic_id": "q1", "topic": "a long narrative about bees", "references": ["d101"],
              "response_length": 3, "answer": [{"text": "Bees make honey.", "citations": [0]}]}
    path.write_text(json.dumps(record) + "\n")
    result = cli("import", "responses", path, "--store", store, "--format", "rag24")
    assert result.code == 0 and "1 queries carry another text than the store's" in result.err, result.err
    with opened_store(store) as opened:
        stored = opened.corpus.queries()["q1"]
    assert stored == "how do bees make honey"


def test_a_refused_grade_names_the_import_that_wrote_it_when_both_began_in_the_same_second(graded, tmp_path,
                                                                                          monkeypatch):
    """The import log is searched by the grade batch's time: the refused import's own entry, begun in the same
    second, is not the one that wrote the stored grade."""
    from proctor import api, importing
    from proctor.errors import InputError

    store, folder = graded
    stamp = raw_rows(store, "SELECT imported_at FROM import_log WHERE kind = 'exampp'")[0][0]
    monkeypatch.setattr(importing, "now", lambda: stamp)  # this import begins at the first one's time
    changed = _edit(folder / "grades.jsonl", tmp_path / "grades.jsonl", 1, _json(_no_ratings))
    opened = api.open_store(store)
    try:
        with pytest.raises(InputError) as refused:
            api.import_files(opened, "exampp", [changed])
    finally:
        opened.close()
    assert f"(from `import exampp {folder / 'grades.jsonl'}` at {stamp})" in str(refused.value), str(refused.value)
