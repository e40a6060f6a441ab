"""`proctor export exampp` then `proctor import exampp` gives every grade set back as it was: the same grade set
(id, method, model, prompt version, bank, params, label step, info) and the same grades (grade, parse status,
raw reply, answer, verdict, extra) in a fresh store, and changes nothing in its own store (the dump is the
same). One case per grading method of the registry and per derived kind (a user template, Workbench grades,
ensembles of one bank version and across versions). What the exam_pp fields cannot say (the grade set, parse
statuses, grades ≤ 1 of a graded scale) travels in the entry's `proctor` extension, never guessed per passage."""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import opened_store, store_dump
from grade_set_kinds import every_kind, fresh_store
from inprocess import copy_store
from proctor.methods import METHOD_NAMES

KINDS = [*METHOD_NAMES, "user template", "imported from the Workbench", "ensemble", "ensemble across bank versions"]


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return every_kind(tmp_path_factory)


def _state(path, grade_set_ids):
    """Each grade set's identity and its label step's grades exactly as stored."""
    with opened_store(path) as store:
        sets = {s.id: s for s in store.grades.grade_sets()}
        return {gid: (sets[gid].identity(), list(store.grades.stored_rows(gid, sets[gid].step)))
                for gid in grade_set_ids if gid in sets}


def _export(cli, store, grade_set, out):
    result = cli("export", "exampp", "--store", store, "--grade-set", grade_set, "--out", out)
    assert result.code == 0, result.err
    return result


def test_every_method_of_the_registry_has_a_case():
    assert set(METHOD_NAMES) <= set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_a_grade_set_comes_back_identical_in_a_fresh_store(cli, kinds, tmp_path, kind):
    source, ids = kinds
    out = tmp_path / "export.jsonl"
    _export(cli, source, ids[kind], out)
    expected = _state(source, [ids[kind]])
    assert expected[ids[kind]][1], "the grade set has grades"
    fresh = fresh_store(tmp_path / "fresh", source)
    result = cli("import", "exampp", out, "--store", fresh)
    assert result.code == 0, result.err
    assert _state(fresh, [ids[kind]]) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_an_export_imported_into_its_own_store_changes_nothing(cli, kinds, tmp_path, kind):
    source, ids = kinds
    own = copy_store(source, tmp_path / "own" / "s.db")
    out = tmp_path / "export.jsonl.gz"
    _export(cli, own, ids[kind], out)
    before = store_dump(own)
    result = cli("import", "exampp", out, "--store", own)
    assert result.code == 0, result.err
    assert "already imported: nothing changed" in result.err
    assert store_dump(own) == before


@pytest.mark.parametrize("kind", ["embedding", "ensemble"])
def test_grades_of_a_graded_scale_are_self_ratings_whatever_their_value(cli, kinds, tmp_path, kind):
    """The Workbench's own fields say it too: every grade of a 0-5 grade set is a self-rating, also where all of a
    passage's grades are 0 or 1 (the exporter no longer guesses "self-rated" per passage)."""
    source, ids = kinds
    out = tmp_path / "export.jsonl.gz"
    _export(cli, source, ids[kind], out)
    with gzip.open(out, "rt") as handle:
        entries = [eg for line in handle for para in json.loads(line)[1]
                   for eg in para["exam_grades"] or [] if eg["proctor"]["grade_set"]["id"] == ids[kind]]
    assert entries and all(eg["prompt_info"]["is_self_rated"] is True for eg in entries)
    low = [eg for eg in entries if all(r["self_rating"] <= 1 for r in eg["self_ratings"])]
    assert low and all(len(eg["self_ratings"]) == len(eg["proctor"]["grades"]) for eg in low)


@pytest.mark.parametrize("kind", ["thomas", "umbrela", "ensemble across bank versions"])
def test_grades_of_the_query_itself_have_no_empty_question_id(cli, kinds, tmp_path, kind):
    source, ids = kinds
    out = tmp_path / "export.jsonl"
    _export(cli, source, ids[kind], out)
    for line in out.read_text().splitlines():
        for para in json.loads(line)[1]:
            for eg in para["exam_grades"] or []:
                assert all(q for q, _ in eg["answers"]), "an exam_grades entry with an empty question id"


def test_an_ensemble_is_exported_with_its_members(cli, kinds, tmp_path):
    source, ids = kinds
    result = _export(cli, source, ids["ensemble"], tmp_path / "e.jsonl")
    assert ids["self-rating"] in result.err and ids["embedding"] in result.err


def test_a_grade_set_of_a_bank_the_store_lacks_is_refused(cli, kinds, tmp_path):
    source, ids = kinds
    out = tmp_path / "export.jsonl"
    _export(cli, source, ids["nugget-rating"], out)
    from conftest import seed_demo

    bare = seed_demo(tmp_path / "bare")
    before = store_dump(bare)
    result = cli("import", "exampp", out, "--store", bare)
    assert result.code == 2 and "Traceback" not in result.err
    assert "grades bank nuggets@" in result.err and "which the store does not hold" in result.err
    assert store_dump(bare) == before


def _only_the_ensemble(entry: dict, ids: dict) -> bool:
    return entry["proctor"]["grade_set"]["id"] == ids["ensemble"]


def _other_model(entry: dict, ids: dict) -> bool:
    entry["proctor"]["grade_set"]["model"] = "someone else"
    return True


def _bad_grade(entry: dict, ids: dict) -> bool:
    entry["proctor"]["grades"][0][1] = 7
    return True


def _bad_extra(entry: dict, ids: dict) -> bool:
    entry["proctor"]["grades"][0][6] = "{not json"
    return True


MUTATIONS = [  # (how the exported file is changed, extra import options, what the refusal says)
    (_only_the_ensemble, (), "is neither in the store nor in this file"),
    (_other_model, (), "is not the id its fields give"),
    (_bad_grade, (), "is not a grade 0..5"),
    (_bad_extra, (), "is not JSON"),
    (None, ("--bank", "bank"), "--bank applies to exam_pp grades without one"),
]


@pytest.mark.parametrize("mutate, options, message", MUTATIONS,
                         ids=[m[0].__name__ if m[0] else "--bank" for m in MUTATIONS])
def test_an_extension_that_cannot_be_given_back_is_refused(cli, kinds, tmp_path, mutate, options, message):
    source, ids = kinds
    out = tmp_path / "export.jsonl"
    _export(cli, source, ids["ensemble"], out)
    lines = []
    for line in out.read_text().splitlines():
        qid, paragraphs = json.loads(line)
        for para in paragraphs:
            if mutate is not None:
                para["exam_grades"] = [eg for eg in para["exam_grades"] or [] if mutate(eg, ids)]
        lines.append(json.dumps([qid, paragraphs]))
    out.write_text("\n".join(lines) + "\n")
    fresh = fresh_store(tmp_path / "fresh", source)
    before = store_dump(fresh)
    result = cli("import", "exampp", out, "--store", fresh, *options)
    assert result.code == 2 and "Traceback" not in result.err
    assert message in result.err and str(out) in result.err
    if mutate is _only_the_ensemble:  # the line where the ensemble first appears, as every input refusal names it
        first = next(n for n, line in enumerate(lines, 1) if ids["ensemble"] in line)
        assert f"{out}:{first}: ensemble {ids['ensemble']}" in result.err, result.err
    assert store_dump(fresh) == before
