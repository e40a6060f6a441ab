"""Generated answers and RAG runs: formats, segmentation, citations, bad records, and one leaderboard that
ranks generated and retrieval systems together."""

from __future__ import annotations

import json

import pytest

from conftest import seed_demo
from proctor.io.segment import count_tokens, segment, sentences, truncate_words
from proctor.store import Store
from rag_collection import SYSTEMS, rag24_record, rag25_record, write_jsonl, write_text_dir


def test_sentences_and_segments():
    text = "First sentence here. Second one! Third? Dr. Who is not split at 3.5 either.\n\nNew paragraph"
    assert sentences(text)[:3] == ["First sentence here.", "Second one!", "Third?"]
    long = " ".join(f"Sentence number {i} has some words in it." for i in range(200))
    parts = segment(long, max_tokens=400)
    assert len(parts) > 1 and all(count_tokens(p) <= 400 for p in parts)
    assert " ".join(parts) == long  # nothing lost, sentences kept whole
    assert truncate_words("a b c d", 2) == ("a b", True) and truncate_words("a b", 5) == ("a b", False)


@pytest.fixture
def store(tmp_path):
    return seed_demo(tmp_path, runs=["strong"])


def test_generated_and_retrieval_systems_in_one_leaderboard(cli, store, tmp_path):
    result = cli("import", "responses", write_jsonl(tmp_path / "answers.jsonl"), "--store", store)
    assert result.code == 0, result.err
    assert "12 responses" in result.err and "3 runs" in result.err
    assert cli("grade", "--store", store, "--method", "embedding").code == 0
    cover = cli("leaderboard", "--store", store, "--metric", "cover", "--min-grade", "4", "--budget", "20",
                "--format", "json")
    scores = {row["system"]: row["score"] for row in json.loads(cover.out)["systems"]}
    assert set(scores) == {"strong", *SYSTEMS}
    assert scores["gen-good"] > scores["gen-mediocre"] > scores["gen-bad"]
    assert scores["strong"] > scores["gen-mediocre"]
    qrels = cli("leaderboard", "--store", store, "--measure", "P@3", "--min-grade", "4", "--format", "json")
    p3 = {row["system"]: row["score"] for row in json.loads(qrels.out)["systems"]}
    assert p3["gen-good"] > p3["gen-mediocre"] >= p3["gen-bad"]
    gold = cli("leaderboard", "--store", store, "--metric", "cover", "--min-grade", "4", "--gold", "gen-good",
               "--format", "json")
    normalised = {row["system"]: row["score"] for row in json.loads(gold.out)["systems"]}
    assert normalised["gen-good"] == pytest.approx(1.0) and normalised["gen-bad"] < 0.5


def test_order_and_ids_are_the_systems(cli, store, tmp_path):
    assert cli("import", "responses", write_text_dir(tmp_path / "answers"), "--store", store).code == 0
    db = Store.open(store)
    rows = sorted(r for r in db.corpus.ranking_rows() if r[0] == "gen-good" and r[1] == "q2")
    assert [r[2] for r in rows] == ["gen-good/q2/0"] and rows[0][3] == 1
    assert db.corpus.passage_texts()["gen-good/q2/0"].startswith("The sky is blue")


def test_word_budget_truncates_every_system_alike(cli, store, tmp_path):
    result = cli("import", "responses", write_jsonl(tmp_path / "a.jsonl"), "--store", store,
                 "--word-budget", "10")
    assert result.code == 0
    texts = Store.open(store).corpus.passage_texts()
    assert all(len(texts[f"{run}/{q}/0"].split()) <= 10 for run in SYSTEMS for q in ("q1", "q2", "q3", "q4"))
    assert Store.open(store).corpus.segments()["gen-good/q1/0"]["truncated"]


@pytest.mark.parametrize(("fmt", "make"), [("rag24", rag24_record), ("rag25", rag25_record)])
def test_trec_rag_records_keep_their_citations(cli, store, tmp_path, fmt, make):
    path = tmp_path / f"{fmt}.jsonl"
    path.write_text("".join(json.dumps(make(f"{fmt}-run", q)) + "\n" for q in ("q1", "q2", "q3", "q4")))
    result = cli("import", "responses", path, "--store", store)  # format detected
    assert result.code == 0, result.err
    db = Store.open(store)
    segments = db.corpus.segments()
    first = segments[f"{fmt}-run/q1/0"]
    assert first["citations"] == ["d101", "d102"] and first["position"] == 0
    second = segments[f"{fmt}-run/q1/1"]
    assert second["citations"] == ["d102"]
    assert len([s for s in segments if s.startswith(f"{fmt}-run/q1/")]) == len(make("x", "q1")["answer"])
    ranks = sorted((r[3], r[2]) for r in db.corpus.ranking_rows() if r[0] == f"{fmt}-run" and r[1] == "q1")
    assert [pid for _, pid in ranks] == [f"{fmt}-run/q1/{i}" for i in range(len(ranks))]


BAD_RECORDS = [
    ({"run_id": "r", "topic_id": "q1", "references": ["d1"], "answer": [{"text": "x", "citations": [3]}]},
     "cites index 3, but there are 1 references"),
    ({"run_id": "r", "topic_id": "q1", "references": [], "answer": []}, "non-empty list"),
    ({"run_id": "r", "references": [], "answer": [{"text": "x"}]}, "missing field 'topic_id'"),
    ({"run_id": "r", "topic_id": "q1", "answer": [{"text": 5}]}, "answer[0].text' must be str"),
    ({"run_id": "r", "topic_id": "q1", "answer": [{"text": "  "}]}, "empty answer"),
]


@pytest.mark.parametrize(("record", "message"), BAD_RECORDS)
def test_malformed_records_fail_with_file_and_line(cli, store, tmp_path, record, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(rag24_record("ok", "q1")) + "\n" + json.dumps(record) + "\n")
    before = Store.open(store).dump()
    result = cli("import", "responses", path, "--store", store, "--format", "rag24")
    assert result.code == 2 and f"{path}:2:" in result.err and message in result.err, result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    assert Store.open(store).dump() == before


def test_on_error_skip_reports_and_keeps_the_rest(cli, store, tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(rag24_record("ok", "q1")) + "\n" + json.dumps(BAD_RECORDS[0][0]) + "\n"
                    + "{not json\n")
    result = cli("import", "responses", path, "--store", store, "--format", "rag24", "--on-error", "skip")
    assert result.code == 0, result.err
    assert f"{path}:2:" in result.err and f"{path}:3:" in result.err and "skipped 2 malformed records" in result.err
    assert "ok" in Store.open(store).corpus.runs()


def test_abbreviations_do_not_end_sentences():
    """Issue 18 item 14: "Dr.", "Mr." and "U.S." (and decimals, "e.g.") are not sentence ends."""
    text = ("Dr. Smith met Mr. Jones in the U.S. capital on Monday. They talked for 3.5 hours, e.g. about taxes! "
            "Did Mrs. Brown join? The U.S. economy grew. The U.K. economy did not.\n\nA new paragraph starts here")
    assert sentences(text) == [
        "Dr. Smith met Mr. Jones in the U.S. capital on Monday.", "They talked for 3.5 hours, e.g. about taxes!",
        "Did Mrs. Brown join?", "The U.S. economy grew.", "The U.K. economy did not.", "A new paragraph starts here"]
    long = " ".join(f"Dr. Jones of the U.S. Navy gave answer {i} to Mr. Lee." for i in range(120))
    parts = segment(long, max_tokens=400)
    assert len(parts) > 1 and all(count_tokens(p) <= 400 for p in parts)
    assert all(p.startswith("Dr. Jones") and p.endswith("Mr. Lee.") for p in parts)  # cut between sentences only
    assert " ".join(parts) == long
