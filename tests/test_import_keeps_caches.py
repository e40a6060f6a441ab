"""`import exampp` keeps what the first leaderboard reads while it writes: the label cache, graded questions and
grade counts of each series it fills are aggregated query by query right after the query's rows are written, and
the ranked lists of runs new to the store are ranked from the rows it writes. What it keeps is byte for byte what
the store's own filling makes from the tables (dropped and filled again here), whether the import kept it itself
(every series new) or left it to the filling (grades already there, a query on two lines, a second file)."""

from __future__ import annotations

import json
import random

import pytest

from conftest import raw_rows, raw_script
from proctor.errors import InputError
from proctor.importing import ImportOptions, import_files
from proctor.store import Store
from proctor.store.caches import ResultCaches
from proctor.store.tallies import TallyRepository

KEPT = {"label_cache": "grade_set_id, step, query_id", "ranked_cache": "run, query_id",
        "grade_set_counts": "grade_set_id"}


def _line(query: str, passages: range, rnd: random.Random, versions=("v1", "v2")) -> str:
    """One exam_pp line: each passage graded by every prompt version, one question answered but not rated (a
    failed grade), ranked by some of three runs (ties in score included)."""
    paragraphs = []
    for p in passages:
        pid = f"{query}p{p}"
        grades = []
        for version in versions:
            rated = [{"question_id": f"{query}/h{h}", "self_rating": rnd.randrange(6)} for h in range(3)]
            answers = [[f"{query}/h{h}", str(h)] for h in range(4)]  # h3: answered, not rated
            grades.append({"llm": "m", "self_ratings": rated, "answers": answers,
                           "prompt_info": {"prompt_class": version, "is_self_rated": True}})
        rankings = [{"method": f"run{r}", "paragraphId": pid, "queryId": query, "rank": p + 1,
                     "score": float(rnd.randrange(4))} for r in range(3) if rnd.random() < 0.8]
        paragraphs.append({"paragraph_id": pid, "text": f"text of {pid}",
                           "paragraph_data": {"judgments": [], "rankings": rankings}, "exam_grades": grades})
    return json.dumps([query, paragraphs]) + "\n"


def _kept(store: Store) -> dict[str, list[tuple]]:
    return {table: raw_rows(store.path, f"SELECT * FROM {table} ORDER BY {key}") for table, key in KEPT.items()}


def _filled_again(store: Store) -> dict[str, list[tuple]]:
    """What the store's own filling makes of the tables (the kept rows dropped first)."""
    raw_script(store.path, *(f"DELETE FROM {table}" for table in KEPT))
    with store.transaction():
        store.tallies.grade_counts()
        store.caches.keep_for_leaderboards()
    return _kept(store)


def _refuse(*_args):
    raise AssertionError("the import filled a kept result from the tables")


def test_a_fresh_import_keeps_the_caches_itself_as_the_store_would_fill_them(tmp_path, monkeypatch):
    rnd = random.Random(3)
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(_line(f"q{q}", range(5), rnd) for q in range(4)))
    store = Store.create_or_open(tmp_path / "s.db")
    with monkeypatch.context() as filling:  # every series and run is new: the import keeps them itself
        for repository, name in ((ResultCaches, "_keep_top"), (ResultCaches, "_rank"), (TallyRepository, "recount")):
            filling.setattr(repository, name, _refuse)
        import_files(store, "exampp", [source])
    kept = _kept(store)
    assert len(kept["label_cache"]) == 8 and len(kept["ranked_cache"]) == 12 and len(kept["grade_set_counts"]) == 2
    assert [json.loads(counts) for _, counts in kept["grade_set_counts"]] == [{"self-rating": {
        "failed": 20, "imported": 60}}] * 2  # 4 queries x 5 passages: 3 questions rated, 1 answered only
    assert _filled_again(store) == kept


def _graded(store: Store) -> int:
    """How many (grade set, query) hold grades (each keeps one row of labels: every step is a label step here)."""
    return raw_rows(store.path, "SELECT COUNT(*) FROM (SELECT DISTINCT series, query_id FROM grades)")[0][0]


def test_what_the_import_cannot_keep_itself_is_filled_from_the_tables_the_same(tmp_path):
    rnd = random.Random(5)
    first, second, third = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    first.write_text(_line("q0", range(3), rnd) + _line("q1", range(4), rnd) + _line("q0", range(3, 6), rnd)
                     + _line("q2", range(3), rnd, versions=("v1", "v3")) + _line("q3", range(2), rnd, versions=("v5",)))
    second.write_text(_line("q1", range(4, 7), rnd))
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [first])  # q0 on two lines: its lists ranked again from the table
    kept = _kept(store)
    assert _filled_again(store) == kept
    import_files(store, "exampp", [first, second])  # b adds to a's grade sets and runs, in one command
    kept = _kept(store)
    assert len(kept["label_cache"]) == _graded(store) == 7 and len(kept["grade_set_counts"]) == 4
    assert len(kept["ranked_cache"]) == len(raw_rows(store.path, "SELECT DISTINCT run, query_id FROM rankings"))
    assert _filled_again(store) == kept
    third.write_text(_line("q3", range(2, 4), rnd, versions=("v2", "v4")))  # v2's grades are in the store already
    import_files(store, "exampp", [third])
    kept = _kept(store)
    assert len(kept["label_cache"]) == _graded(store) == 9 and len(kept["grade_set_counts"]) == 5
    assert _filled_again(store) == kept


def test_rankings_an_import_changes_drop_their_kept_lists_once_and_the_triggers_come_back(tmp_path):
    rnd = random.Random(9)
    first, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(_line("q0", range(4), rnd) + _line("q1", range(4), rnd))
    other.write_text(first.read_text().replace('"score": ', '"score": -'))  # every run ranks in reverse
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [first])
    triggers, kept = store.schema.triggers("rankings"), _kept(store)
    assert len(triggers) == 3 and kept["ranked_cache"]
    with pytest.raises(InputError, match="ranking"):  # refused: rolled back, triggers and kept lists as they were
        import_files(store, "exampp", [other])
    assert store.schema.triggers("rankings") == triggers and _kept(store) == kept
    import_files(store, "exampp", [other], ImportOptions(replace=True))  # the held triggers' work done once
    assert store.schema.triggers("rankings") == triggers
    replaced = _kept(store)
    assert replaced["ranked_cache"] != kept["ranked_cache"] and _filled_again(store) == replaced


def _rated_line(query: str, passages: list[str], rnd: random.Random, questions: int = 4) -> str:
    """An exam_pp line shaped as DL19's: every passage rated on every question (the last passage on one fewer
    when `questions` is odd: not the same questions in every passage)."""
    paragraphs = []
    for at, pid in enumerate(passages):
        count = questions - 1 if questions % 2 and at == len(passages) - 1 else questions
        rated = [{"question_id": f"{query}/h{h}", "self_rating": rnd.randrange(6)} for h in range(count)]
        paragraphs.append({"paragraph_id": pid, "text": f"text of {pid}", "exam_grades": [{
            "llm": "m", "self_ratings": rated, "answers": [[f"{query}/h{h}", str(h)] for h in range(count)],
            "prompt_info": {"prompt_class": "v1", "is_self_rated": True}}]})
    return json.dumps([query, paragraphs]) + "\n"


def test_labels_made_from_the_rows_in_hand_are_those_the_table_gives(tmp_path, monkeypatch):
    """The labels and questions of a query whose passages were all rated on the same questions are made in Python
    (`store.bulk._in_blocks`), byte for byte what SQLite's aggregate makes (ids with quotes, backslashes, other
    scripts, in an order that is not the file's); other queries' are read from the table."""
    import proctor.store.bulk as bulk

    made = []
    real = bulk._in_blocks
    monkeypatch.setattr(bulk, "_in_blocks", lambda written: made.append(real(written)) or made[-1])
    rnd = random.Random(7)
    odd = ['z"1', "a\\2", "é3", "Z4", "ä\u00ff5", "b~6", "日7", "A8"]
    source = tmp_path / "pool.jsonl"
    source.write_text(_rated_line("q0", odd, rnd) + _rated_line("q1", odd[:3], rnd, questions=1)
                      + _rated_line("q2", [f"{p}x" for p in odd], rnd, questions=3)
                      + _rated_line("q3", ["p9", "p10", "p1"], rnd, questions=12))
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [source])
    assert [m is not None for m in made] == [True, True, False, True]  # q2: one passage has a question less
    kept = _kept(store)
    assert len(kept["label_cache"]) == 4
    assert _filled_again(store) == kept


def test_a_rating_written_as_an_integral_float_beside_its_integer_keeps_integer_labels(tmp_path):
    """A self-rating `4.0` in an entry that also holds a `4` is the grade 4 (an integer) in the rows the import has
    in hand (its ids known valid from an earlier line: the fast reading), so the labels it keeps itself are what
    SQLite's aggregate makes (`["p1",4,3,0]`, never `4.0`)."""
    def line(query: str, second: float) -> str:
        ratings = [{"question_id": "h/a", "self_rating": 1}, {"question_id": "h/c", "self_rating": 4},
                   {"question_id": "h/b", "self_rating": second}]  # h/b's grade first in the question order
        entry = {"llm": "m", "self_ratings": ratings, "prompt_info": {"prompt_class": "v1", "is_self_rated": True}}
        return json.dumps([query, [{"paragraph_id": "p1", "text": "t", "exam_grades": [entry]}]]) + "\n"

    source = tmp_path / "pool.jsonl"
    source.write_text(line("q0", 4) + line("q1", 4.0))
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [source])
    kept = _kept(store)
    assert [row[3] for row in kept["label_cache"]] == ['[["p1",4,3,0]]'] * 2
    assert _filled_again(store) == kept


def _entry(ratings: dict[str, int], cls: str = "v1", self_rated: bool = True) -> dict:
    return {"llm": "m", "self_ratings": [{"question_id": q, "self_rating": g} for q, g in ratings.items()],
            "answers": [[q, f"said {q}"] for q in ratings], "prompt_info": {"prompt_class": cls,
                                                                              "is_self_rated": self_rated}}


def _stored_grades(store: Store, query: str) -> list[tuple]:
    return raw_rows(store.path, "SELECT passage_id, question_id, raw_reply, grade, parse_status, answer, correct,"
                                " extra FROM grades JOIN grade_items USING (item) WHERE query_id = ?"
                                " ORDER BY passage_id, question_id", (query,))


def test_passages_rated_on_other_questions_or_given_again_keep_the_labels_the_table_gives(tmp_path):
    """Labels made in Python (`store.bulk._in_blocks`) only where every passage has the same questions; a line
    whose passages are rated on as many but other questions, or whose entry is given again (its grade set's rows
    then go as rows, in the file's order: `z` before `a`), keeps the labels SQLite's aggregate makes."""
    source = tmp_path / "pool.jsonl"
    other = [{"paragraph_id": "p1", "text": "t1", "exam_grades": [_entry({"h/a": 1, "h/b": 2})]},
             {"paragraph_id": "p2", "text": "t2", "exam_grades": [_entry({"h/a": 3, "h/c": 4})]}]
    again = [{"paragraph_id": pid, "text": f"t {pid}", "exam_grades": [_entry({"h/a": at, "h/b": 5 - at})] * times}
             for at, (pid, times) in enumerate((("z", 2), ("a", 1), ("m", 1)))]
    source.write_text(json.dumps(["q0", other]) + "\n" + json.dumps(["q1", again]) + "\n")
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [source])
    kept = _kept(store)
    assert [row[2:4] for row in kept["label_cache"]] == [
        ("q0", '[["p1",2,2,0],["p2",4,2,0]]'), ("q1", '[["a",4,2,0],["m",3,2,0],["z",5,2,0]]')]
    assert _filled_again(store) == kept


def test_extension_grades_a_block_cannot_hold_are_stored_as_given_with_the_tables_labels(tmp_path):
    """`proctor` extension grades whose answer differs from the raw reply, whose grade is null though parsed, or
    which carry an extra are stored as the file gives them (never as a block's: answer = raw reply, no extra), and
    their labels are SQLite's (a null grade is a failed one, never a usable one)."""
    from proctor.records import GradeSet

    named = GradeSet("self-rating", "m", "a", None, None, {"source": "test"}, "self-rating")
    grade_set = {"id": named.id, "method": named.method, "model": named.model,
                 "prompt_version": named.prompt_version, "bank": None, "bank_version": None, "params": named.params,
                 "label_step": named.label_step, "info": named.info}
    grades = {"p1": [["h/a", 3, "imported", "raw a", "answer a", True, None], ["h/b", 2, "imported", "b", "b", None,
                                                                               None]],
              "p2": [["h/a", None, "imported", "a", "a", None, None], ["h/b", 1, "imported", "b", "b", False, None]],
              "p3": [["h/a", 4, "imported", "a", "a", None, "{\"k\":1}"], ["h/b", 0, "imported", "b", "b", None, None]]}
    paragraphs = [{"paragraph_id": pid, "text": f"t {pid}",
                   "exam_grades": [{"proctor": {"grade_set": grade_set, "grades": listed}}]}
                  for pid, listed in grades.items()]
    blocks = [{"paragraph_id": pid, "exam_grades": [{"proctor": {"grade_set": grade_set, "grades": listed}}]}
              for pid, listed in (("p2", grades["p2"]), ("p4", [["h/a", 5, "imported", "a", "a", None, None],
                                                                  ["h/b", 0, "imported", "b", "b", None, None]]))]
    source = tmp_path / "pool.jsonl"  # q1: blocks but for a null grade
    source.write_text(json.dumps(["q0", paragraphs]) + "\n" + json.dumps(["q1", blocks]) + "\n")
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [source])
    assert _stored_grades(store, "q0") == [
        ("p1", "h/a", "raw a", 3, "imported", "answer a", 1, None), ("p1", "h/b", "b", 2, "imported", "b", None, None),
        ("p2", "h/a", "a", None, "imported", "a", None, None), ("p2", "h/b", "b", 1, "imported", "b", 0, None),
        ("p3", "h/a", "a", 4, "imported", "a", None, '{"k":1}'), ("p3", "h/b", "b", 0, "imported", "b", None, None)]
    assert _stored_grades(store, "q1") == [
        ("p2", "h/a", "a", None, "imported", "a", None, None), ("p2", "h/b", "b", 1, "imported", "b", 0, None),
        ("p4", "h/a", "a", 5, "imported", "a", None, None), ("p4", "h/b", "b", 0, "imported", "b", None, None)]
    kept = _kept(store)
    assert [row[3] for row in kept["label_cache"]] == ['[["p1",3,2,0],["p2",1,1,1],["p3",4,2,0]]',
                                                      '[["p2",1,1,1],["p4",5,2,0]]']
    assert _filled_again(store) == kept
