"""Prompts are the papers' texts; parsers map recorded replies to the right grades (table-driven)."""

from __future__ import annotations

import pytest

from proctor.errors import UsageError
from proctor.methods import METHOD_NAMES, get_method
from proctor.methods.embedding import THRESHOLDS, grade_of
from proctor.methods.qa import edit_distance, matches, normalise_answer

SELF_RATING_TEXT = (
    "Can the question be answered based on the available context? choose one:\n"
    "- 5: The answer is highly relevant, complete, and accurate.\n"
    "- 4: The answer is mostly relevant and complete but may have minor gaps or inaccuracies.\n"
    "- 3: The answer is partially relevant and complete, with noticeable gaps or inaccuracies.\n"
    "- 2: The answer has limited relevance and completeness, with significant gaps or inaccuracies.\n"
    "- 1: The answer is minimally relevant or complete, with substantial shortcomings.\n"
    "- 0: The answer is not relevant or complete at all.\n"
    "Question: Why is the sky blue?\n"
    "Context: Rayleigh scattering.")


def test_self_rating_prompt_is_003_table_2():
    assert get_method("self-rating").template.render("Why is the sky blue?", "Rayleigh scattering.") == SELF_RATING_TEXT


def test_qa_prompt_is_exampp_4_2_1():
    assert get_method("qa").template.render("Q?", "C.") == (
        "provide a complete and concise answer to the question based on the context. Question: Q? Context: C.")


@pytest.mark.parametrize(("reply", "grade", "status"), [
    ("4", 4, "number"), ("5", 5, "number"), ("0", 0, "number"), (" 3 ", 3, "number"),
    ("Rating: 2.", 2, "number"), ("(3)", 3, "number"), ("4/5", 4, "number"), ("I'd say 4, maybe 5", 4, "number"),
    ("10", 1, "defaulted"), ("4.5", 1, "defaulted"), ("1-19-1807", 1, "defaulted"), ("5:30 pm", 1, "defaulted"),
    ("synapse", 1, "defaulted"), ("d.", 1, "defaulted"),
    ("unanswerable", 0, "unanswerable"), ("No.", 0, "unanswerable"), ("No answer", 0, "unanswerable"),
    ("It does not say.", 0, "unanswerable"), ("not enough information", 0, "unanswerable"),
    ("Unknown", 0, "unanswerable"), ("", None, "failed"), ("   ", None, "failed"), (None, None, "failed"),
])
def test_self_rating_parser(reply, grade, status):
    parsed = get_method("self-rating").parse(reply)
    assert (parsed.grade, parsed.status) == (grade, status)


def test_probabilities_take_the_most_likely_grade_and_keep_the_expectation():
    parsed = get_method("self-rating").parse("synapse", probabilities={0: 0.7, 4: 0.2, 5: 0.1})
    assert (parsed.grade, parsed.status) == (0, "distribution")
    assert parsed.extra["expected_grade"] == pytest.approx(1.3)
    assert parsed.extra["text_parse"] == {"grade": 1, "status": "defaulted"}


@pytest.mark.parametrize(("reply", "gold", "grade", "status"), [
    ("Rayleigh scattering", ["Rayleigh scattering"], 1, "correct"),
    ("rayleigh scatterings.", ["Rayleigh scattering"], 1, "correct"),
    ("The nectar", ["nectar"], 1, "correct"),
    ("Rayleigh scattering of sunlight by air", ["Rayleigh scattering"], 0, "wrong"),
    ("the Moon", ["the Sun"], 0, "wrong"),
    ("a.", ["a"], 0, "wrong"), ("(iii)", ["three"], 0, "wrong"), ("unanswerable", ["x"], 0, "wrong"),
    ("two", None, 1, "answered"), ("", ["x"], None, "failed"),
])
def test_qa_parser(reply, gold, grade, status):
    parsed = get_method("qa").parse(reply, gold_answers=gold)
    assert (parsed.grade, parsed.status) == (grade, status)


def test_qa_normalisation_and_edit_distance():
    assert normalise_answer("The Bees are fanning their Wings!") == "bee fan wing"
    assert edit_distance("kitten", "sitting") == 3
    assert matches("fanning wings", "fan their wings") and not matches("wings", "wax cells")


@pytest.mark.parametrize(("similarity", "grade"), [
    (0.9, 5), (0.65, 5), (0.649, 4), (0.55, 4), (0.5, 3), (0.4, 2), (0.3, 1), (0.25, 1), (0.2, 0), (-0.1, 0)])
def test_embedding_thresholds(similarity, grade):
    assert grade_of(similarity) == grade
    assert [g for _, g in THRESHOLDS] == [5, 4, 3, 2, 1]


def test_registry():
    assert set(METHOD_NAMES) == {"self-rating", "nugget-rating", "qa", "embedding", "thomas", "fagb", "fagb-few",
                                 "helm", "sun", "sun-few", "umbrela", "four-prompts", "four-prompts-cot", "query-gen"}
    assert get_method("nugget-rating").items == "nugget"
    with pytest.raises(UsageError):
        get_method("magic")
