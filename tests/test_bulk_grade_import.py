"""Import speed: `Store.grades.grade_import` holds the kept results' triggers on `grades` during a bulk write
and drops the kept results of every grade set it wrote to once at the end. The kept results never give an
older answer than the grades, other grade sets keep theirs, the triggers come back exactly (also after an error
or a crash: see test_large_import), another connection never sees the store without them, and a trigger of the
user's own keeps every trigger in place. The exam_pp reader merges an entry given again question by question."""

from __future__ import annotations

import json

import pytest

from conftest import RawConnection, raw_rows, raw_write, top_grades_of
from proctor.errors import InputError
from proctor.io.exampp import read_exampp
from proctor.records import Grade, GradeSet
from proctor.store import Store, now

A = GradeSet("self-rating", "m", "a", None, None, {"source": "test"}, "self-rating")
B = GradeSet("self-rating", "m", "b", None, None, {"source": "test"}, "self-rating")
KEPT = ("grade_set_counts", "label_cache", "cover_cache")
TRIGGERS = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'grades' ORDER BY name"
"""The triggers on `grades`, as another connection reads them."""


def _grades(version: str, shift: int = 0) -> list[Grade]:
    return [Grade(f"q{q}", f"q{q}p{p}", f"q{q}/{i}", "self-rating", "m", version, (q + p + i + shift) % 6, "ok")
            for q in range(3) for p in range(4) for i in range(3)]


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store.create_or_open(tmp_path / "s.db")
    with store.transaction():
        for grade_set in (A, B):
            store.grades.ensure_grade_set(grade_set)
            store.grades.upsert_grades(grade_set.id, _grades(grade_set.prompt_version))
    _fill(store)
    return store


def _fill(store: Store) -> None:
    for grade_set in (A, B):
        list(store.caches.top_grades(grade_set.id, grade_set.step))
        assert store.caches.cover_grades(grade_set.id, grade_set.step) is not None
    store.tallies.grade_counts()


def _kept(store: Store) -> dict[str, set[str]]:
    return {table: store.caches.kept_grade_sets(table) for table in KEPT}



def _rows(grades: list[Grade]) -> list[tuple]:
    return [(g.query_id, g.passage_id, g.question_id, g.raw_reply, g.grade, g.parse_status, g.answer, g.correct,
             None) for g in grades]


def test_a_bulk_write_drops_the_kept_results_of_its_grade_set_once_and_brings_the_triggers_back(store):
    triggers = store.schema.triggers("grades")
    assert len(triggers) == 9 and _kept(store) == dict.fromkeys(KEPT, {A.id, B.id})
    changed = _grades("a", shift=1)[:5] + [Grade("q9", "q9p0", "q9/0", "self-rating", "m", "a", 2, "ok")]
    with store.transaction(), store.grades.grade_import(now()) as grades:
        assert store.schema.triggers("grades") == []  # held: no per-row deletes
        grades.write(A.id, A.step, _rows(changed))
    assert store.schema.triggers("grades") == triggers
    assert _kept(store) == dict.fromkeys(KEPT, {B.id})  # A's kept results dropped, B's kept
    assert list(store.caches.top_grades(A.id, A.step)) == top_grades_of(store, A.id, A.step)
    assert store.grades.step_statuses(A.id) == {"self-rating": {"ok": 37}}
    stored = {(q, p, i): g for q, p, i, g in store.grades.grade_rows(A.id, A.step)}
    assert all(stored[g.query_id, g.passage_id, g.question_id] == g.grade for g in changed)
    assert _kept(store) == dict.fromkeys(KEPT, {B.id}) | {"label_cache": {A.id, B.id},
                                                          "grade_set_counts": {A.id, B.id}}  # filled again


def test_writing_the_same_grades_again_changes_nothing_and_keeps_every_kept_result(store):
    before = _kept(store)
    with store.transaction(), store.grades.grade_import(now()) as grades:
        grades.write(A.id, A.step, _rows(_grades("a")))
    assert _kept(store) == before and grades.changed == set()


def test_another_connection_never_sees_the_store_without_its_triggers(store, tmp_path):
    other = RawConnection(tmp_path / "s.db")
    with store.transaction(), store.grades.grade_import(now()) as grades:
        grades.write(A.id, A.step, _rows(_grades("a", shift=2)))
        assert len(other.rows(TRIGGERS)) == 9
        assert {r[0] for r in other.rows("SELECT grade_set_id FROM label_cache")} == {A.id, B.id}
    assert {r[0] for r in other.rows("SELECT grade_set_id FROM label_cache")} == {B.id}
    other.close()


def test_an_error_inside_the_bulk_write_rolls_everything_back(store):
    triggers, before, kept = store.schema.triggers("grades"), store.dump(), _kept(store)
    with pytest.raises(InputError), store.transaction(), store.grades.grade_import(now()) as grades:
        grades.write(A.id, A.step, _rows(_grades("a", shift=3)))
        raise InputError("e.jsonl", 7, "a bad line")
    assert store.schema.triggers("grades") == triggers and store.dump() == before and _kept(store) == kept


def test_a_trigger_of_the_users_own_keeps_every_trigger_in_place(store):
    raw_write(store.path, "CREATE TABLE audit (query_id TEXT)")
    raw_write(store.path, "CREATE TRIGGER audit_grades AFTER INSERT ON grades BEGIN INSERT INTO audit"
              " VALUES (NEW.query_id); END")
    with store.transaction(), store.grades.grade_import(now()) as grades:
        assert len(store.schema.triggers("grades")) == 10
        grades.write(A.id, A.step, _rows([Grade("q8", "q8p0", "q8/0", "self-rating", "m", "a", 1, "ok")]))
    assert raw_rows(store.path, "SELECT query_id FROM audit") == [("q8",)]
    assert _kept(store) == dict.fromkeys(KEPT, {B.id})  # dropped by the triggers themselves


def test_a_bulk_write_needs_a_transaction(store):
    with pytest.raises(RuntimeError, match="needs a transaction"), store.grades.grade_import(now()):
        pass


def _entry(questions: dict[str, int]) -> dict:
    return {"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
            "self_ratings": [{"question_id": q, "self_rating": r} for q, r in questions.items()], "answers": []}


def _paragraph(*entries: dict) -> dict:
    return {"paragraph_id": "d1", "text": "t", "paragraph_data": {"judgments": [], "rankings": []},
            "exam_grades": list(entries)}


def test_an_entry_given_again_is_merged_question_by_question(tmp_path):
    path = tmp_path / "e.jsonl"
    lines = [["q1", [_paragraph(_entry({"q1/a": 1, "q1/b": 2}), _entry({"q1/b": 2, "q1/c": 3}))]],
             ["q2", [_paragraph(_entry({"q2/a": 0}))]],
             ["q1", [_paragraph(_entry({"q1/c": 3, "q1/d": 4}))]]]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    got = [[(g.question_id, g.grade) for g in query.grades] for query in read_exampp(path)]
    assert got == [[("q1/a", 1), ("q1/b", 2), ("q1/c", 3)], [("q2/a", 0)], [("q1/d", 4)]]
    lines.append(["q1", [_paragraph(_entry({"q1/d": 4, "q1/c": 5}))]])
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with pytest.raises(InputError, match=r"'d1' graded twice differently on question 'q1/c' by m \(P\): 3 \(first on "
                                         r"line 1\) and 5") as err:
        list(read_exampp(path))
    assert err.value.line == 4


def _rated(qid, rating) -> dict:
    return {"question_id": qid, "self_rating": rating}


ENTRIES = {  # an exam_grades entry as a workbench could write it -> what its grades must be (or the refusal)
    "plain": ({"self_ratings": [_rated("q1/a", 4)], "answers": [["q1/a", "x"]], "correctAnswered": ["q1/a"]},
              [("q1/a", 4, "imported", "x", True)]),
    "integral float": ({"self_ratings": [_rated("q1/a", 4.0)]}, [("q1/a", 4, "imported", None, None)]),
    "null rating": ({"self_ratings": [_rated("q1/a", None)]}, [("q1/a", None, "failed", None, None)]),
    "nugget id": ({"self_ratings": [{"question_id": None, "nugget_id": "q1/n", "self_rating": 2}]},
                  [("q1/n", 2, "imported", None, None)]),
    "same twice": ({"self_ratings": [_rated("q1/a", 3)] * 2}, [("q1/a", 3, "imported", None, None)]),
    "numeric id": ({"self_ratings": [_rated(17, 1)], "wrongAnswered": [17]}, [("17", 1, "imported", None, False)]),
    "answer twice": ({"self_ratings": [], "answers": [["q1/a", "x"], ["q1/a", "y"]]},
                     [("q1/a", None, "failed", "y", None)]),
    "true": ({"self_ratings": [_rated("q1/a", True)]}, "True is not a grade 0..5"),
    "true beside a 1": ({"self_ratings": [_rated("q1/a", 1), _rated("q1/b", True)]}, "True is not a grade 0..5"),
    "integral float beside its int": ({"self_ratings": [_rated("q1/a", 4), _rated("q1/b", 4.0)]},
                                      [("q1/a", 4, "imported", None, None), ("q1/b", 4, "imported", None, None)]),
    "six": ({"self_ratings": [_rated("q1/a", 6)]}, "6 is not a grade 0..5"),
    "rated twice": ({"self_ratings": [_rated("q1/a", 3), _rated("q1/a", 2)]}, "rated twice differently"),
    "answer number": ({"answers": [["q1/a", 5]]}, "an answer must be a string"),
    "bad id": ({"self_ratings": [_rated("q1 a", 1)]}, "contains whitespace"),
    "both": ({"self_ratings": [], "correctAnswered": ["q1/a"], "wrongAnswered": ["q1/a"]}, "both correctAnswered and"),
    "ratings not a list": ({"self_ratings": {"q1/a": 1}}, "self_ratings must be a list"),
}


@pytest.mark.parametrize("name", list(ENTRIES))
@pytest.mark.parametrize("warm", [False, True])
def test_the_fast_and_the_checked_reading_of_an_entry_agree(tmp_path, name, warm):
    from proctor.io import exampp_rows

    entry, want = ENTRIES[name]
    entry = {"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"}, **entry}
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(["q1", [_paragraph(entry)]]) + "\n")
    exampp_rows.CHECKED.clear()
    if warm:  # every id found valid before: the entry takes the fast path where it can
        exampp_rows.CHECKED.update(dict.fromkeys(["q1/a", "q1/b", "q1/n", "17"]))  # valid ids only, as ever
    if isinstance(want, str):
        with pytest.raises(InputError, match=want):
            list(read_exampp(path))
        return
    [query] = read_exampp(path)
    assert [(g.question_id, g.grade, g.parse_status, g.answer, g.correct) for g in query.grades] == want
    assert all(type(g.grade) is int for g in query.grades if g.grade is not None)


def test_entries_of_one_prompt_class_self_rated_or_not_make_two_grade_sets(tmp_path):
    """The method of an entry is its prompt class's and whether it is self-rated (looked up once per pair): the
    same class self-rated and not gives `self-rating` and `qa`, in either order, in one file."""
    def entry(self_rated: bool) -> dict:
        return {"llm": "m", "self_ratings": [_rated("q1/a", 2)], "correctAnswered": ["q1/a"],
                "prompt_info": {"prompt_class": "P", "is_self_rated": self_rated}}

    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps([query, [_paragraph(entry(first)), {**_paragraph(entry(not first)),
                                                                            "paragraph_id": "d2"}]]) + "\n"
                            for query, first in (("q1", True), ("q2", False))))
    got = [sorted({(g.method, g.passage_id, g.grade) for g in query.grades}) for query in read_exampp(path)]
    assert got == [[("qa", "d2", 1), ("self-rating", "d1", 2)], [("qa", "d1", 1), ("self-rating", "d2", 2)]]


def _proctor_entry(*grades: list) -> dict:
    """An `exam_grades` entry carrying Proctor's own extension (as `proctor export exampp` writes it)."""
    named = {"id": A.id, "method": A.method, "model": A.model, "prompt_version": A.prompt_version, "bank": A.bank,
             "bank_version": A.bank_version, "params": A.params, "label_step": A.label_step, "info": A.info}
    return {"proctor": {"grade_set": named, "grades": [list(g) for g in grades]}}


def test_a_grade_given_twice_in_one_extension_entry_is_one_grade_and_two_grades_are_refused(tmp_path):
    path = tmp_path / "e.jsonl"
    once, other = ["q1/a", 3, "ok", "3", None, None, None], ["q1/b", 1, "ok", "1", None, None, None]
    path.write_text(json.dumps(["q1", [_paragraph(_proctor_entry(once, other, once))]]) + "\n")
    (query,) = read_exampp(path)
    assert sorted((g.question_id, g.grade) for g in query.grades) == [("q1/a", 3), ("q1/b", 1)]  # counted once
    path.write_text(json.dumps(["q1", [_paragraph(_proctor_entry(once, other, ["q1/a", 4, "ok", "4", None, None,
                                                                               None]))]]) + "\n")
    with pytest.raises(InputError, match=r"proctor.grades: passage 'd1' graded twice differently on question 'q1/a' "
                                         r"in one entry: raw reply '3' and '4'") as err:
        list(read_exampp(path))
    assert err.value.line == 1
    path.write_text(json.dumps(["q1", [_paragraph(_proctor_entry(once, ["q1/a", 3, "ok", "3", "yes", None,
                                                                        None]))]]) + "\n")
    with pytest.raises(InputError, match=r"on question 'q1/a' in one entry: answer None and 'yes'"):
        list(read_exampp(path))


def test_entries_kept_as_blocks_and_as_rows_give_the_grades_in_file_order(tmp_path):
    """Entries whose every question is rated are kept as blocks (`io.exampp_rows.Blocks`: columns, no tuple per
    grade) until an entry of the same grade set needs rows (a failed grade, a repeat): then all are rows, in order."""
    from proctor.io import exampp_rows

    exampp_rows.CHECKED.update(dict.fromkeys(["q1/a", "q1/b", "q1/c", "d1", "d2", "d3"]))

    def para(pid, *entries):
        return {**_paragraph(*entries), "paragraph_id": pid}

    blocks_only = ["q1", [para("d1", _entry({"q1/a": 1, "q1/b": 2})), para("d2", _entry({"q1/b": 0}))]]
    mixed = ["q1", [para("d1", _entry({"q1/a": 1, "q1/b": 2})),
                    para("d2", {**_entry({"q1/a": 3}), "answers": [["q1/c", "x"]]}),  # q1/c answered, not rated
                    para("d3", _entry({"q1/c": 5})), para("d1", _entry({"q1/b": 2, "q1/c": 4}))]]
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(blocks_only) + "\n" + json.dumps(mixed).replace('"q1"', '"q2"', 1) + "\n")
    first, second = read_exampp(path)
    assert [type(rows) for rows in first.grade_rows.values()] == [exampp_rows.Blocks]
    assert [(g.passage_id, g.question_id, g.grade) for g in first.grades] == [
        ("d1", "q1/a", 1), ("d1", "q1/b", 2), ("d2", "q1/b", 0)]
    assert [type(rows) for rows in second.grade_rows.values()] == [list]
    assert [(g.passage_id, g.question_id, g.grade, g.parse_status) for g in second.grades] == [
        ("d1", "q1/a", 1, "imported"), ("d1", "q1/b", 2, "imported"), ("d2", "q1/a", 3, "imported"),
        ("d2", "q1/c", None, "failed"), ("d3", "q1/c", 5, "imported"), ("d1", "q1/c", 4, "imported")]
