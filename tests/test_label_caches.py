"""The label and ranked-list caches never give an older answer than the tables — every write path
drops what it changes (triggers), a read-only store computes, and the numbers equal the uncached ones."""

from __future__ import annotations

import random
from pathlib import Path

import random_store
from conftest import held_write_lock, raw_write, top_grades_of
from proctor.evaluate.sources import exam_qrels, load_runs
from proctor.records import Grade, GradeSet
from proctor.store import Store

SET = GradeSet("self-rating", "m", "v1", None, None, {"source": "test"}, "self-rating")


def _store(path: Path) -> Store:
    rnd = random.Random(7)
    queries = [f"q{q}" for q in range(4)]
    ranked = random_store.rankings(rnd, 3, queries, pool=12, depth=10, top_score=4)
    return random_store.random_store(path, ranked, [(SET, random_store.grades(rnd, SET, queries, 12, 3))])


def _uncached(store: Store) -> tuple[list, dict]:
    top = top_grades_of(store, SET.id, SET.step)
    ranked = {run: {qid: [pid for pid, _ in sorted(scores.items(), key=lambda ps: (ps[1], ps[0]), reverse=True)]
                    for qid, scores in per.items()} for run, per in store.corpus.rankings().items()}
    return top, ranked


def _kept(store: Store) -> tuple[int, int]:
    return store.caches.kept_rows("label_cache"), store.caches.kept_rows("ranked_cache")


def test_caches_fill_once_and_equal_the_tables(tmp_path):
    store = _store(tmp_path / "s.db")
    assert _kept(store) == (0, 0)
    top, ranked = _uncached(store)
    assert list(store.caches.top_grades(SET.id, SET.step)) == top and store.corpus.ranked_lists() == ranked
    assert _kept(store) == (4, 12)  # one row per query of the grade set, one per (run, query)
    assert list(store.caches.top_grades(SET.id, SET.step)) == top
    assert store.corpus.ranked_lists() == ranked  # read from the cache
    assert list(store.caches.top_grades(SET.id, "other-step")) == [] and _kept(store) == (4, 12)


def test_every_write_drops_what_it_changes(tmp_path):
    store = _store(tmp_path / "s.db")
    before = exam_qrels(store, store.grades.grade_sets()[0])
    store.corpus.ranked_lists()
    changed = Grade("q0", "q0p0", "q0/h0", "self-rating", "m", "v1", 5, "ok", "5")
    store.grades.upsert_grades(SET.id, [changed])  # an insert or update through the store
    assert _kept(store)[0] == 0
    after = exam_qrels(store, store.grades.grade_sets()[0])
    assert after["q0"]["q0p0"] == 5 and list(store.caches.top_grades(SET.id, SET.step)) == _uncached(store)[0]
    assert {q: p for q, p in after.items() if q != "q0"} == {q: p for q, p in before.items() if q != "q0"}
    raw_write(store.path, "DELETE FROM grades WHERE query_id = 'q1'")  # any other writer, even raw SQL
    assert _kept(store)[0] == 0 and "q1" not in exam_qrels(store, store.grades.grade_sets()[0])
    store.corpus.upsert_rankings([("run0", "q0", "q0p11", 0, 99.0)])  # a new top passage for run0
    assert _kept(store)[1] == 8  # run0's lists dropped, the other runs' kept
    assert store.corpus.ranked_lists()["run0"]["q0"][0] == "q0p11"
    assert store.corpus.ranked_lists() == _uncached(store)[1]
    raw_write(store.path, "UPDATE rankings SET score = -1 WHERE run = 'run1' AND query_id = 'q2'")
    assert store.corpus.ranked_lists() == _uncached(store)[1]


def test_a_read_only_or_busy_store_computes(tmp_path):
    path = tmp_path / "s.db"
    store = _store(path)
    top, ranked = _uncached(store)
    store.close()
    reader = Store.open(path, read_only=True)
    assert list(reader.caches.top_grades(SET.id, SET.step)) == top and reader.corpus.ranked_lists() == ranked
    reader.close()
    with held_write_lock(path):  # another process holds the write lock: nothing is kept, nothing waits
        store = Store.open(path)
        assert list(store.caches.top_grades(SET.id, SET.step)) == top and store.corpus.ranked_lists() == ranked
    assert _kept(store) == (0, 0)
    assert load_runs(store, None)  # and the runs read through the cache once it can be kept
    assert _kept(store)[1] == 12


def test_graded_questions_are_each_querys_distinct_questions_in_order(tmp_path):
    store = _store(tmp_path / "s.db")
    store.grades.upsert_grades(SET.id, [Grade("q2", "q2p0", "q2/extra", "self-rating", "m", "v1", 1, "ok", "1")])
    expected = sorted({(qid, question) for qid, _, question, _ in store.grades.grade_rows(SET.id, SET.step)})
    assert list(store.tallies.graded_questions(SET.id, SET.step)) == expected
    assert ("q2", "q2/extra") in expected and ("q1", "q2/extra") not in expected  # one passage's question counts
    assert list(store.tallies.graded_questions(SET.id, "other-step")) == []


def test_a_run_the_cache_cannot_hold_is_read_from_the_rankings(tmp_path):
    store = _store(tmp_path / "s.db")
    store.corpus.ranked_lists()  # every run kept
    raw_write(store.path, "UPDATE rankings SET passage_id = 'q0\tp' WHERE run = 'run2' AND query_id = 'q0'"
                          " AND passage_id = 'q0p0'")  # a separator in a passage id: run2 cannot be kept
    ranked = _uncached(store)[1]
    assert "q0\tp" in ranked["run2"]["q0"]
    assert store.corpus.ranked_lists() == ranked and _kept(store)[1] == 8  # run0 and run1 still kept
    assert store.corpus.ranked_lists() == ranked


def test_graded_questions_are_kept_with_the_labels_and_equal_the_grades(tmp_path):
    store = _store(tmp_path / "s.db")
    store.grades.upsert_grades(SET.id, [Grade("q2", "q2p0", "q2/extra", "self-rating", "m", "v1", 1, "ok", "1")])
    with held_write_lock(store.path):  # nothing can be kept: gathered from the grades
        computed = list(store.tallies.graded_questions(SET.id, SET.step))
        assert _kept(store)[0] == 0 and store.caches.kept_questions(SET.id, SET.step) is None
    assert list(store.tallies.graded_questions(SET.id, SET.step)) == computed  # kept now, read back
    assert _kept(store)[0] == 4 and len(store.caches.kept_questions(SET.id, SET.step)) == 4
    assert list(store.tallies.graded_questions(SET.id, SET.step)) == computed  # read from the cache
    store.grades.upsert_grades(SET.id, [Grade("q3", "q3p0", "q3/new", "self-rating", "m", "v1", 2, "ok", "2")])
    assert _kept(store)[0] == 0  # dropped with the write
    assert ("q3", "q3/new") in list(store.tallies.graded_questions(SET.id, SET.step))
    raw_write(store.path, "UPDATE label_cache SET questions = NULL")  # rows kept before schema 7: kept again
    assert list(store.tallies.graded_questions(SET.id, SET.step)) == computed + [("q3", "q3/new")]
    assert all(q is not None for _, q in store.caches.kept_questions(SET.id, SET.step))


def _exampp_line(query: str, runs: int, passages: range, questions: int, rnd: random.Random) -> str:
    import json

    paragraphs = []
    for p in passages:
        pid = f"{query}p{p}"
        ratings = [{"question_id": f"{query}/h{h}", "self_rating": rnd.randrange(6)} for h in range(questions)]
        rankings = [{"method": f"run{r}", "paragraphId": pid, "queryId": query, "rank": p + 1,
                     "score": float(rnd.randrange(100))} for r in range(runs) if rnd.random() < 0.8]
        paragraphs.append({"paragraph_id": pid, "text": f"text of {pid}",
                           "paragraph_data": {"judgments": [], "rankings": rankings},
                           "exam_grades": [{"llm": "m", "self_ratings": ratings, "answers": [],
                                            "prompt_info": {"prompt_class": "v1", "is_self_rated": True}}]})
    return json.dumps([query, paragraphs])


def test_an_exampp_import_keeps_what_the_first_leaderboard_reads(tmp_path):
    from proctor.importing import import_files

    rnd = random.Random(11)
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(_exampp_line(f"q{q}", 3, range(6), 4, rnd) + "\n" for q in range(5)))
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [source])
    (grade_set,) = store.grades.grade_sets()
    assert _kept(store) == (5, 15)  # kept by the import, graded questions with the labels
    assert len(store.caches.kept_questions(grade_set.id, grade_set.step)) == 5
    top, ranked = top_grades_of(store, grade_set.id, grade_set.step), _uncached(store)[1]
    assert len(top) == 30 and list(store.caches.top_grades(grade_set.id, grade_set.step)) == top
    assert store.corpus.ranked_lists() == ranked
    questions = sorted({(q, i) for q, _, i, _ in store.grades.grade_rows(grade_set.id, grade_set.step)})
    assert list(store.tallies.graded_questions(grade_set.id, grade_set.step)) == questions
    more = tmp_path / "more.jsonl"  # more passages of two queries, same grade set and runs: kept again, whole
    more.write_text("".join(_exampp_line(f"q{q}", 3, range(6, 9), 4, rnd) + "\n" for q in (1, 3)))
    import_files(store, "exampp", [more])
    assert _kept(store) == (5, 15)
    top, ranked = top_grades_of(store, grade_set.id, grade_set.step), _uncached(store)[1]
    assert len(top) == 36 and list(store.caches.top_grades(grade_set.id, grade_set.step)) == top
    assert store.corpus.ranked_lists() == ranked
    questions = sorted({(q, i) for q, _, i, _ in store.grades.grade_rows(grade_set.id, grade_set.step)})
    assert list(store.tallies.graded_questions(grade_set.id, grade_set.step)) == questions
    store.close()
    reader = Store.open(tmp_path / "s.db", read_only=True)  # reads the kept rows as they are
    assert list(reader.caches.top_grades(grade_set.id, grade_set.step)) == top
    assert list(reader.tallies.graded_questions(grade_set.id, grade_set.step)) == questions
