"""A relevance threshold must lie on the grade set's own scale: 4 on Thomas' 0-2 scale would make every label
non-relevant and every score a silent 0, so leaderboards, EXAM-Cover, binary qrels and the "to review" queue
refuse it, naming the option and the scale."""

from __future__ import annotations

import json

import pytest

from conftest import seed_demo, store_dump
from fake_openai import FakeOpenAI
from proctor import api
from proctor.errors import UsageError


@pytest.fixture(scope="module")
def thomas(tmp_path_factory):
    """The demo store graded with Thomas' 0-2 prompt by the test server; (store, grade set id)."""
    from proctor.cli import main

    store = seed_demo(tmp_path_factory.mktemp("thomas"))
    with FakeOpenAI() as server:
        assert main(["grade", "--store", str(store), "--method", "thomas", "--llm", "openai:judge", "--base-url",
                     server.base_url]) == 0
    s = api.open_store(store)
    try:
        (grade_set,) = [g.id for g in s.grades.grade_sets()]
    finally:
        s.close()
    return store, grade_set


CASES = [  # (arguments after --store S --grade-set ID, the message)
    (("leaderboard", "--measure", "P@3", "--min-grade", "4"), "--min-grade 4: grade set {id} (thomas) grades 0-2"),
    (("leaderboard", "--measure", "P(rel=3)@3"), "P(rel=3)@3: rel=3: grade set {id} (thomas) grades 0-2"),
    (("leaderboard", "--metric", "cover", "--min-grade", "3"), "--min-grade 3: grade set {id} (thomas) grades 0-2"),
    (("leaderboard", "--measure", "P@3", "--min-grade", "3", "--intervals", "--format", "json"),
     "so the threshold must be 1..2"),
    (("qrels", "--binary", "--min-grade", "5"), "--min-grade 5: grade set {id} (thomas) grades 0-2"),
]


@pytest.mark.parametrize("args, message", CASES, ids=[" ".join(c[0][1:]) for c in CASES])
def test_a_threshold_beyond_the_scale_is_refused(cli, thomas, args, message):
    store, grade_set = thomas
    before = store_dump(store)
    result = cli(args[0], "--store", store, "--grade-set", grade_set, *args[1:])
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err
    assert message.format(id=grade_set) in result.err
    assert store_dump(store) == before


def test_thresholds_on_the_scale_still_score(cli, thomas):
    store, grade_set = thomas
    result = cli("leaderboard", "--store", store, "--grade-set", grade_set, "--measure", "P@3", "--min-grade", "2",
                 "--format", "json")
    assert result.code == 0, result.err
    assert {row["system"] for row in json.loads(result.out)["systems"]} == {"strong", "middling", "weak", "partial"}


@pytest.mark.parametrize("min_grade", [3, 9, 0, -1])
def test_the_review_queue_refuses_a_threshold_off_the_scale(thomas, min_grade):
    store, grade_set = thomas
    s = api.open_store(store)
    try:
        with pytest.raises(UsageError, match="grades 0-2, so the threshold must be 1..2"):
            api.review_queue(s, grade_set, min_grade=min_grade)
        assert api.review_queue(s, grade_set, min_grade=2)["items"]
    finally:
        s.close()


def test_the_review_apps_queue_refuses_its_threshold_off_the_scale(thomas):
    """The app's threshold (4 by default) on a 0-2 grade set: a refusal naming the scale, not a nonsense queue."""
    from test_review import Server

    store, grade_set = thomas
    server = Server(store)
    try:
        code, page = server.get(f"/to-review?gs={grade_set}")
    finally:
        server.proc.terminate()
        server.proc.wait()
    assert code == 400 and "grades 0-2, so the threshold must be 1..2" in page
