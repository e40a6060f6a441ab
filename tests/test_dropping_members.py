"""`grade-sets drop` of a member of an ensemble: refused, naming the ensembles that use it (the store unchanged),
unless `--cascade` drops them with it; afterwards every reading command works, where before `agreement` and
`analyze` failed until the ensemble was dropped by hand. An ensemble itself, or a grade set no ensemble uses,
drops as before."""

from __future__ import annotations

import json

import pytest

from conftest import opened_store, store_dump
from grade_set_kinds import every_kind
from inprocess import copy_store

REFUSED = [  # (the grade set to drop, extra options)
    ("self-rating", ("--yes",)),
    ("self-rating", ()),
    ("embedding", ("--yes",)),
    ("second bank version", ("--yes",)),
]


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return every_kind(tmp_path_factory)


@pytest.fixture
def store(kinds, tmp_path):
    return copy_store(kinds[0], tmp_path / "s.db"), kinds[1]


def _ensembles_using(ids, kind):
    return [ids[e] for e in ("ensemble", "ensemble across bank versions")
            if kind in {"ensemble": ("self-rating", "embedding"),
                        "ensemble across bank versions": ("self-rating", "second bank version")}[e]]


@pytest.mark.parametrize("kind, options", REFUSED, ids=[f"{k} {' '.join(o)}" for k, o in REFUSED])
def test_dropping_a_member_is_refused_naming_its_ensembles(cli, store, kind, options):
    path, ids = store
    before = store_dump(path)
    result = cli("grade-sets", "drop", ids[kind], "--store", path, *options)
    assert result.code == 2 and "Traceback" not in result.err
    assert f"grade set {ids[kind]}" in result.err and "--cascade" in result.err
    for ensemble in _ensembles_using(ids, kind):
        assert ensemble in result.err
    assert store_dump(path) == before


def test_cascade_drops_the_member_with_its_ensembles_and_reading_still_works(cli, store, tmp_path):
    path, ids = store
    result = cli("grade-sets", "drop", ids["self-rating"], "--store", path, "--yes", "--cascade")
    assert result.code == 0, result.err
    assert ids["ensemble"] in result.err and ids["ensemble across bank versions"] in result.err
    with opened_store(path) as s:
        left = {g.id for g in s.grades.grade_sets()}
    assert not left & {ids["self-rating"], ids["ensemble"], ids["ensemble across bank versions"]}
    assert ids["embedding"] in left and ids["second bank version"] in left
    listing = cli("grade-sets", "list", "--store", path, "--format", "json")
    assert listing.code == 0 and len(json.loads(listing.out)) == len(left)
    agreement = cli("agreement", "--store", path, "--grade-set", ids["embedding"], "--judged-relevant", "1")
    assert agreement.code == 0, agreement.err


@pytest.mark.parametrize("kind", ["ensemble", "thomas"])
def test_a_grade_set_no_ensemble_uses_drops_as_before(cli, store, kind):
    path, ids = store
    result = cli("grade-sets", "drop", ids[kind], "--store", path, "--yes")
    assert result.code == 0, result.err
    with opened_store(path) as s:
        assert ids[kind] not in {g.id for g in s.grades.grade_sets()}
        assert ids["self-rating"] in {g.id for g in s.grades.grade_sets()}
