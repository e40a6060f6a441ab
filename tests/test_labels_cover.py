"""Grades → labels, and EXAM-Cover, on hand-built grades."""

from __future__ import annotations

import pytest

from proctor.errors import UsageError
from proctor.evaluate.cover import CoverTable, cover_per_query
from proctor.evaluate.labels import LabelStats, binarize, exam_labels

GRADES = [
    ("Q", "p1", "Q/F/a", 5), ("Q", "p1", "Q/F/b", 2), ("Q", "p1", "Q/G/c", 4),
    ("Q", "p2", "Q/F/a", 1), ("Q", "p2", "Q/F/b", 3), ("Q", "p2", "Q/G/c", None),
    ("Q", "p3", "Q/F/a", None), ("Q", "p3", "Q/F/b", None), ("Q", "p3", "Q/G/c", None),
    ("R", "p1", "R/x", 0),
]


def test_label_is_max_grade_and_failures_are_counted():
    stats = LabelStats()
    assert exam_labels(GRADES, stats=stats) == {"Q": {"p1": 5, "p2": 3}, "R": {"p1": 0}}
    assert (stats.grades, stats.failed, stats.passages_without_grade) == (6, 4, 1)


def test_min_questions_takes_the_mth_largest():
    assert exam_labels(GRADES, min_questions=2) == {"Q": {"p1": 4, "p2": 1}, "R": {"p1": 0}}
    assert exam_labels(GRADES, min_questions=3) == {"Q": {"p1": 2, "p2": 0}, "R": {"p1": 0}}
    with pytest.raises(UsageError):
        exam_labels(GRADES, min_questions=0)


def test_facets_from_bank_or_from_ids():
    from_ids = exam_labels(GRADES, facets={})
    assert from_ids["Q/F"] == {"p1": 5, "p2": 3} and from_ids["Q/G"] == {"p1": 4}
    from_bank = exam_labels(GRADES, facets={"Q/F/a": "X", "Q/F/b": "X", "Q/G/c": "X"})
    assert from_bank["Q/X"] == {"p1": 5, "p2": 3}


def test_binary():
    assert binarize({"Q": {"p1": 5, "p2": 3, "p3": 0}}, 4) == {"Q": {"p1": 1, "p2": 0, "p3": 0}}


COVER_GRADES = [
    ("Q", "p1", "a", 5), ("Q", "p1", "b", 0), ("Q", "p1", "c", 0), ("Q", "p1", "d", 0),
    ("Q", "p2", "a", 4), ("Q", "p2", "b", 4), ("Q", "p2", "c", 1), ("Q", "p2", "d", 0),
    ("Q", "p3", "a", 0), ("Q", "p3", "b", 0), ("Q", "p3", "c", 5), ("Q", "p3", "d", 2),
    ("S", "s1", "x", 5), ("S", "s1", "y", 0),
]


def test_cover_counts_questions_answered_in_the_budget():
    table = CoverTable.build(COVER_GRADES, tau=4)
    ranked = {"Q": ["p1", "p9", "p2", "p3"], "S": ["s9"]}
    scores, _ = cover_per_query(ranked, table, budget=3)
    assert scores == {"Q": 2 / 4, "S": 0.0}
    scores, _ = cover_per_query(ranked, table, budget=4)
    assert scores["Q"] == 3 / 4


def test_cover_missing_queries_zero_or_skip():
    table = CoverTable.build(COVER_GRADES, tau=4)
    ranked = {"Q": ["p3"]}
    assert cover_per_query(ranked, table)[0] == {"Q": 0.25, "S": 0.0}
    assert cover_per_query(ranked, table, missing="skip")[0] == {"Q": 0.25}


def test_n_exam_per_query_ratios_under_their_own_name():
    table = CoverTable.build(COVER_GRADES, tau=4)
    scores, left_out = cover_per_query({"Q": ["p1"], "S": ["s1"]}, table, normalize="pool-per-query")
    assert scores == {"Q": 1 / 3, "S": 1.0}
    assert left_out == []
    table5 = CoverTable.build([("Q", "p1", "a", 3)], tau=5)
    # as exam_pp's n-exam: a query the pool covers nothing of counts 0, and is named
    assert cover_per_query({"Q": ["p1"]}, table5, normalize="pool-per-query") == ({"Q": 0.0}, ["Q"])


def test_n_exam_is_a_ratio_of_sums_over_queries():
    from proctor.evaluate.cover import reference_cover

    table = CoverTable.build(COVER_GRADES, tau=4)
    ranked = {"Q": ["p1"], "S": ["s1"]}
    plain, _ = cover_per_query(ranked, table)
    pool = reference_cover(table)
    scores, left_out = cover_per_query(ranked, table, normalize="pool")
    mean = sum(scores.values()) / len(scores)
    assert mean == pytest.approx(sum(plain.values()) / sum(pool.values())) and left_out == []
    table5 = CoverTable.build([("Q", "p1", "a", 3)], tau=5)
    assert cover_per_query({"Q": ["p1"]}, table5, normalize="pool") == ({}, ["Q"])


@pytest.mark.parametrize("seed", range(3))
def test_labels_for_several_m_in_one_pass_equal_exam_labels_per_m(seed):
    import random
    from collections import Counter

    from proctor.evaluate.labels import labels_for_each

    rng = random.Random(seed)
    rows = [(f"q{rng.randrange(4)}", f"p{rng.randrange(30)}", f"x{k}", rng.choice([None, 0, 1, 2, 3, 4, 5]))
            for k in range(600)]
    histogram = sorted(Counter((q, p, g) for q, p, _, g in rows).items(),
                       key=lambda r: (r[0][0], r[0][1], -1 if r[0][2] is None else -r[0][2]))
    flat = [(q, p, g, n) for (q, p, g), n in histogram]
    each_stats = LabelStats()
    each = labels_for_each(flat, [1, 2, 3, 5, 2], stats=each_stats)
    assert set(each) == {1, 2, 3, 5}
    for m in (1, 2, 3, 5):
        stats = LabelStats()
        assert each[m] == exam_labels(rows, min_questions=m, stats=stats)
        assert stats == each_stats
    with pytest.raises(UsageError):
        labels_for_each(flat, [2, 0])
