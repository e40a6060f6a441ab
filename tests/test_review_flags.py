"""The review app's spurious flag: a question is flagged when passages judged non-relevant answer it at least
as often (as a share) as passages judged relevant — not whenever one non-relevant passage does (on DL19 that
flagged 80% of the questions). The grade matrix names passages by their first words and questions by text."""

from __future__ import annotations

import pytest

from conftest import seed_demo
from proctor.analyze.verify import question_rates
from proctor.cli import main
from proctor.demo.collection import PASSAGES, QUESTIONS
from proctor.review.pages import Cache, Thresholds, choose_grade_set, query_page
from proctor.store import Store


def test_the_rule_compares_the_rates_on_relevant_and_non_relevant_passages():
    judgments = {"q": {f"r{i}": 2 for i in range(4)} | {f"n{i}": 0 for i in range(4)}}
    rows = [("q", "r0", "sharp", 5), ("q", "r1", "sharp", 4), ("q", "r2", "sharp", 1), ("q", "r3", "sharp", 0),
            ("q", "n0", "sharp", 5), ("q", "n1", "sharp", 0), ("q", "n2", "sharp", 0), ("q", "n3", "sharp", None),
            ("q", "r0", "loose", 4), ("q", "r1", "loose", 0), ("q", "r2", "loose", 0), ("q", "r3", "loose", 0),
            ("q", "n0", "loose", 5), ("q", "n1", "loose", 4), ("q", "n2", "loose", 0), ("q", "n3", "loose", 0),
            ("q", "n0", "alone", 5), ("q", "unjudged", "alone", 5)]
    rates = question_rates(rows, judgments, min_grade=4, judged_relevant=1)
    sharp, loose, alone = rates[("q", "sharp")], rates[("q", "loose")], rates[("q", "alone")]
    # answered by 2 of 4 relevant and 1 of 3 graded non-relevant (a failed grade is not a graded passage)
    assert (sharp.relevant_answering, sharp.relevant_graded, sharp.non_relevant_answering,
            sharp.non_relevant_graded) == (2, 4, 1, 3)
    assert not sharp.spurious  # the old rule flagged it: one non-relevant passage answers it
    assert loose.relevant_rate == 0.25 and loose.non_relevant_rate == 0.5 and loose.spurious
    assert alone.relevant_rate is None and not alone.spurious  # nothing relevant to compare with: not flagged


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The demo collection with its example self-ratings replayed as a grade set."""
    root = tmp_path_factory.mktemp("flags")
    store = seed_demo(root)
    assert main(["grade", "--store", str(store), "--method", "self-rating", "--llm",
                 f"replay:{root / 'collection' / 'grades.jsonl'}"]) == 0
    return store


def _expected_flags(qid: str, min_grade: int, judged_relevant: int) -> list[bool]:
    """The rule on the collection's own data: share of non-relevant answering >= share of relevant answering."""
    out = []
    for i in range(len(QUESTIONS[qid])):
        relevant = [r[i] >= min_grade for _, _, judgment, r in PASSAGES[qid] if judgment >= judged_relevant]
        other = [r[i] >= min_grade for _, _, judgment, r in PASSAGES[qid] if judgment < judged_relevant]
        out.append(bool(relevant and other and any(other) and sum(other) / len(other) >= sum(relevant) / len(relevant)))
    return out


@pytest.mark.parametrize("min_grade,judged_relevant", [(4, 1), (4, 2), (2, 2), (4, 3), (1, 3)])
def test_the_query_page_flags_by_the_rule_and_names_passages_by_their_first_words(graded, min_grade,
                                                                                   judged_relevant):
    store = Store.open(graded)
    try:
        grade_set = choose_grade_set(store, None)
        flagged_any = False
        for qid in QUESTIONS:
            page = query_page(store, Cache(), qid, grade_set, Thresholds(min_grade, judged_relevant))
            by_text = {q["text"]: q["flagged"] for q in page["questions"]}
            expected = _expected_flags(qid, min_grade, judged_relevant)
            assert [by_text[text] for text, _ in QUESTIONS[qid]] == expected, qid
            assert page["flagged"] == sum(expected)
            flagged_any |= any(expected)
            texts = {pid: text for pid, text, _, _ in PASSAGES[qid]}
            for row in page["matrix"]:
                words = texts[row["id"]].split()
                assert row["first"] == " ".join(words[:8]) + (" …" if len(words) > 8 else "")
    finally:
        store.close()
    assert flagged_any == (judged_relevant == 3)  # the demo's one question that does not tell them apart


def test_the_page_shows_first_words_question_texts_on_hover_and_the_rule(graded):
    from test_review import Server

    server = Server(graded, in_process=True)
    try:
        status, html = server.get("/query/q1")
    finally:
        server.stop()
    assert status == 200, html
    first = " ".join(PASSAGES["q1"][0][1].split()[:8]) + " …"
    assert f'<span class="first">{first}</span>' in html
    assert f'title="Q1: {QUESTIONS["q1"][0][0]}"' in html
    assert "at least as large as its share of the passages judged relevant" in html and "relevant answering" in html
