"""The embedding method's bulk path writes a query's grades as columns (`similarity_extras`, `add_query_grades`):
byte for byte the extras and rows the per-pair code makes (`similarity_extra`, `upsert_attempt_rows`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proctor.methods.embedding import similarity_extra, similarity_extras
from proctor.records import GradeSet
from proctor.store import Store


def test_the_vectorised_extras_are_the_per_pair_ones_byte_for_byte():
    rng = np.random.default_rng(36)
    values = [rng.uniform(-1.05, 1.05, 100_000),  # fixed notation, and beyond ±1.04 (the per-pair code)
              rng.uniform(-2e-4, 2e-4, 20_000),  # around 0: "-0.0", exponent notation below 1e-4
              rng.uniform(-1, 1, 20_000).astype(np.float32).astype(np.float64),  # float32 sums, as encoders give
              np.round(rng.uniform(-1, 1, 20_000), 6) + rng.choice([-5e-7, 5e-7, 0.0, 4.9999e-7, -5.0001e-7], 20_000),
              np.array([0.0, -0.0, 1.0, -1.0, 1e-6, -1e-6, 1.5e-6, 1e-5, 9.9e-5, 0.0001, -0.0001, 0.1, 0.5, 0.25,
                        -4e-7, 4e-7, 5e-7, -5e-7, 0.0000005, 0.1234565, 0.9999995, 1.0000004, 2.5, -7.25, 1e300,
                        math.nan, math.inf, -math.inf, 5e-324])]
    for similarities in values:
        assert similarity_extras(similarities) == [similarity_extra(s) for s in similarities.tolist()]
    assert similarity_extras(np.array([])) == []
    assert similarity_extras([0.1, 1e-06]) == ['{"similarity": 0.1}', '{"similarity": 1e-06}']


def _store(tmp_path, name: str) -> tuple[Store, str]:
    store = Store.create_or_open(tmp_path / f"{name}.db")
    return store, store.grades.ensure_grade_set(GradeSet("embedding", "embed:test", "v1", None, None))


def _rows(step, query, columns, status="similarity"):
    return [(step, query, p, q, None, g, status, None, None, e) for p, q, g, e in zip(*columns, strict=True)]


def _dump(store: Store) -> list[tuple]:
    return [row[:11] + row[12:] for row in store.dump()["grades"]]  # the writing time apart


@pytest.mark.parametrize("pairs", [3, 50, 137])  # fewer than one statement's rows, exactly one, several and a rest
def test_a_query_written_as_columns_is_the_upsert_of_its_rows(tmp_path, pairs):
    ours, ours_id = _store(tmp_path, "columns")
    theirs, theirs_id = _store(tmp_path, "rows")
    columns = ([f"p{n % 40}" for n in range(pairs)], [f"q{n // 40}" for n in range(pairs)],
               [n % 6 for n in range(pairs)], [similarity_extra(n / 7) for n in range(pairs)])
    retried = ([columns[0][0]], [columns[1][0]], [5], [similarity_extra(0.7)])
    for step, query, written in (("embedding", "Q1", columns), ("embedding", "Q2", columns),
                                 ("embedding", "Q1", retried)):  # the last: a retry, through the upsert
        with ours.transaction():
            ours.grades.add_query_grades(ours_id, step, query, "similarity", written)
        with theirs.transaction():
            theirs.grades.upsert_attempt_rows(theirs_id, _rows(step, query, written))
    assert _dump(ours) == _dump(theirs) and len(_dump(ours)) == 2 * pairs
    assert [row[-1] for row in _dump(ours) if row[2] == "Q1" and row[3] == columns[0][0] and row[4] == "q0"] == [2]
    assert ours.grades.step_statuses(ours_id) == theirs.grades.step_statuses(theirs_id) == {
        "embedding": {"similarity": 2 * pairs}}


def test_a_pair_given_twice_is_written_as_the_upsert_writes_it(tmp_path):
    ours, ours_id = _store(tmp_path, "columns")
    theirs, theirs_id = _store(tmp_path, "rows")
    twice = (["p1", "p2", "p1"], ["q", "q", "q"], [1, 2, 3], ['{"similarity": 0.3}'] * 3)
    with ours.transaction():
        ours.grades.add_query_grades(ours_id, "embedding", "Q", "similarity", twice)
    with theirs.transaction():
        theirs.grades.upsert_attempt_rows(theirs_id, _rows("embedding", "Q", twice))
    assert _dump(ours) == _dump(theirs)
    assert [(row[3], row[6], row[-1]) for row in _dump(ours)] == [("p1", 3, 2), ("p2", 2, 1)]
