"""An ensemble across bank versions holds one grade per (query, passage): each member's label, not per-question
grades. EXAM-Cover (which counts questions answered), `--min-questions` above 1 (the m-th largest of a
passage's question grades) and facet labels cannot be computed from it: they are refused with the reason
(docs/trust.md), the store unchanged, where before they gave Success@k under the name EXAM-Cover and all-0
labels. The same commands on an ensemble of one bank version still work."""

from __future__ import annotations

import pytest

from conftest import store_dump
from grade_set_kinds import every_kind

REFUSED = [  # (command and options after --store S --grade-set ID, the option the message names)
    (("leaderboard", "--metric", "cover", "--min-grade", "3"), "--metric cover"),
    (("leaderboard", "--metric", "cover", "--min-grade", "3", "--normalize", "pool"), "--metric cover"),
    (("qrels", "--min-questions", "2"), "--min-questions 2"),
    (("qrels", "--min-questions", "3", "--binary", "--min-grade", "3"), "--min-questions 3"),
    (("qrels", "--facets"), "--facets"),
]


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return every_kind(tmp_path_factory)


@pytest.mark.parametrize("args, option", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_per_question_numbers_of_an_ensemble_across_versions_are_refused(cli, kinds, args, option):
    store, ids = kinds
    grade_set = ids["ensemble across bank versions"]
    before = store_dump(store)
    result = cli(args[0], "--store", store, "--grade-set", grade_set, *args[1:])
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err
    assert option in result.err and f"grade set {grade_set} is an ensemble across bank versions" in result.err
    assert "one grade per (query, passage)" in result.err
    assert store_dump(store) == before


@pytest.mark.parametrize("args, _", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_the_same_commands_work_on_an_ensemble_of_one_bank_version(cli, kinds, args, _):
    store, ids = kinds
    result = cli(args[0], "--store", store, "--grade-set", ids["ensemble"], *args[1:])
    assert result.code == 0, result.err


def test_its_labels_are_still_read(cli, kinds):
    store, ids = kinds
    result = cli("qrels", "--store", store, "--grade-set", ids["ensemble across bank versions"])
    assert result.code == 0, result.err and result.out
