"""A template's declared `scale: [low, high]` is kept: a reply whose grade lies outside it is `invalid` (label 0,
counted), as the packaged range parsers make a reply without a number in range, so no label off the scale
reaches EXAM-Qrels, nDCG gains or an ensemble."""

from __future__ import annotations

import json

import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from proctor.methods import get_method, user_method

SCALED = """\
name: self-rating
version: three
source: a test wording on a 0-3 scale
scale: [0, 3]
template: |-
  Rate from 0 to 3 how well the context answers the question.
  Question: {question}
  Context: {context}
"""

CASES = [  # (reply, grade, status) with `scale: [0, 3]`
    ("0", 0, "number"),
    ("3", 3, "number"),
    ("4", 0, "invalid"),
    ("5", 0, "invalid"),
    ("I would say 5 of 5", 0, "invalid"),
    ("unanswerable", 0, "unanswerable"),
    ("some text without a number", 1, "defaulted"),
    ("", None, "failed"),
]


@pytest.mark.parametrize("reply, grade, status", CASES, ids=[repr(c[0]) for c in CASES])
def test_a_reply_outside_the_declared_scale_is_invalid(tmp_path, reply, grade, status):
    template = tmp_path / "three.yaml"
    template.write_text(SCALED)
    method = user_method(str(template))
    parsed = method.parse(reply)
    assert (parsed.grade, parsed.status) == (grade, status)
    if status == "invalid":
        assert "outside the declared scale 0-3" in parsed.extra["reason"]


@pytest.mark.parametrize("reply, expected", [("4", (4, "number")), ("5", (5, "number"))])
def test_the_packaged_scale_is_unchanged(reply, expected):
    parsed = get_method("self-rating").parse(reply)
    assert (parsed.grade, parsed.status) == expected


def test_a_probability_reply_off_the_scale_is_invalid(tmp_path):
    template = tmp_path / "three.yaml"
    template.write_text(SCALED)
    parsed = user_method(str(template)).parse("5", probabilities={5: 0.9, 2: 0.1})
    assert (parsed.grade, parsed.status) == (0, "invalid")


def test_grading_with_a_declared_scale_counts_invalid_and_labels_stay_on_it(cli, tmp_path):
    """End to end: the test server replies 0..5; every 4 and 5 is counted invalid, qrels carry labels 0..3."""
    store = seed_demo(tmp_path)
    template = tmp_path / "three.yaml"
    template.write_text(SCALED)
    with FakeOpenAI() as server:
        result = cli("grade", "--store", store, "--method", "self-rating", "--template", template, "--llm",
                     "openai:judge", "--base-url", server.base_url, "--format", "json")
    assert result.code == 0, result.err
    by_status = json.loads(result.out)["by_status"]
    assert by_status["invalid"] > 0  # the server's digest grades include 4 and 5
    qrels = cli("qrels", "--store", store)
    assert qrels.code == 0, qrels.err
    labels = {int(line.split()[3]) for line in qrels.out.splitlines()}
    assert labels <= {0, 1, 2, 3}
