"""Where the AutoJudge runner's inputs came from (`proctor.autojudge.sources`): the user's files read as Proctor's
readers read them (plain or gzipped whatever the name, a byte-order mark dropped, a broken file never a
traceback), and one rule for the (run, topic) of a report, whether read from its JSON record or from the record
the runner parsed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from proctor.autojudge.documents import scope_documents
from proctor.autojudge.sources import bank_origins, report_key, report_origins, topic_of
from proctor.io.nugget_banks import read_autojudge, read_nuggetizer


def _report(run: str, **meta) -> dict:
    return {"metadata": {"run_id": run, **meta}, "responses": [{"text": "A sentence.", "citations": ["d1"]}],
            "documents": {"d1": {"text": "A document."}}}


def _lines(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_origins_are_read_as_the_readers_read_files(tmp_path):
    """A gzipped reports file not named .gz, and one starting with a byte-order mark: every report is found on
    its line (before, the first gave no origin and the second lost its first line)."""
    packed = tmp_path / "reports.jsonl"  # gzip, whatever the name says
    packed.write_bytes(gzip.compress(_lines(_report("r1", topic_id="t1"), _report("r1", topic_id="t2"))))
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + _lines(_report("r2", topic_id="t1")) + b"not json\n"
                       + _lines(_report("r2", topic_id="t2")))
    responses = [SimpleNamespace(path=packed), SimpleNamespace(path=marked)]
    assert report_origins(responses) == {("r1", "t1"): [(str(packed), 1)], ("r1", "t2"): [(str(packed), 2)],
                                         ("r2", "t1"): [(str(marked), 1)], ("r2", "t2"): [(str(marked), 3)]}


@pytest.mark.parametrize("content", [b"\x1f", b"\xff\xfe not UTF-8\n", b""])
def test_a_file_that_cannot_be_read_gives_no_origin_and_no_traceback(tmp_path, content):
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(content)
    assert report_origins([SimpleNamespace(path=broken)]) == {}


@pytest.mark.parametrize(("meta", "topic"), [
    ({"topic_id": "t1", "request_id": "other"}, "t1"),  # topic_id first, as AutoJudge's loader
    ({"narrative_id": 7}, "7"),  # TREC RAG 2025: the narrative id is the topic (an integer becomes its text)
    ({"request_id": "r9"}, "r9"),
    ({"topic_id": "", "narrative_id": "n1"}, ""),  # given is given: an empty id is not skipped for the next key
    ({}, None),
])
def test_one_rule_for_the_topic_of_a_report(meta, topic):
    record = _report("run", **meta)
    parsed = SimpleNamespace(metadata=SimpleNamespace(run_id="run", **meta))
    assert topic_of(record["metadata"]) == topic_of(parsed.metadata) == topic
    assert report_key(record) == report_key(parsed) == (None if topic is None else ("run", topic))
    if topic is not None:  # the documents a report carries are scoped to the same (run, topic)
        assert scope_documents(record) == [{"id": f"d1@run/{topic}", "text": "A document."}]


def test_a_record_without_metadata_has_no_key(tmp_path):
    assert report_key({"responses": []}) is None and report_key({"metadata": "r1"}) is None
    assert report_key(SimpleNamespace(metadata=None)) is None
    path = Path(tmp_path / "x.jsonl")
    path.write_text('{"metadata": 3}\n[1, 2]\n')
    assert report_origins([SimpleNamespace(path=path)]) == {}


def test_a_banks_topic_is_read_as_the_readers_read_it(tmp_path):
    """The runner's `--nugget-banks` (a folder here): each record's topic as Proctor's reader of its format takes
    it — an AutoJudge bank's `query_id`, else its `metadata.topic_id` (not its `metadata.query_id`), a
    nuggetizer record's `qid` — so a refused bank line is named where the reader found it."""
    import click

    folder = tmp_path / "banks"
    folder.mkdir()
    question = {"Why?": {"question": "Why?", "query_id": None}}
    autojudge = folder / "a.jsonl"
    autojudge.write_text("".join(json.dumps(r) + "\n" for r in [
        {"query_id": "q1", "title_query": "one", "format_version": "v3", "nugget_bank": question},
        {"metadata": {"topic_id": "q2", "query_id": "other"}, "title_query": "two", "format_version": "v3",
         "nugget_bank": question},
        {"metadata": {"query_id": "q9"}, "title_query": "none", "nugget_bank": question}]))
    nuggetizer = folder / "n.jsonl"
    nuggetizer.write_text(json.dumps({"query": "three", "qid": "q3", "nuggets": [{"text": "x", "importance": "vital"}]})
                          + "\n")
    with click.Context(click.Command("run"), obj=None) as context:
        context.params["nugget_banks"] = str(folder)
        origins = bank_origins()
    assert origins == {"q1": (str(autojudge), 1), "q2": (str(autojudge), 2), "q3": (str(nuggetizer), 1)}
    assert sorted(read_autojudge(autojudge, on_error="skip").query_texts) == ["q1", "q2"]  # the reader agrees
    assert sorted(read_nuggetizer(nuggetizer).query_texts) == ["q3"]
