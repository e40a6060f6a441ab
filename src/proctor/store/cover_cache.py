"""What EXAM-Cover needs at any threshold, kept per grade set, step and query (`Store.caches`).

`cover_cache` holds one row per (grade set, step, query): the query's graded question ids in order (JSON),
its graded passages in order (JSON) and, for each passage in that order, one character per question —
`chr(48 + g)` for a grade g in 0..74, `!` for a failed grade, `-` for a question not graded for the passage —
all concatenated (`len(questions)` characters per passage). Whether a passage answers a question at grade
>= τ is then one translation of that string, and its label at m questions one sort of its characters; a
leaderboard reads a few thousand rows instead of every grade.

Validity is kept exactly as `label_cache`'s (`store/caches.py`): triggers on `grades` drop a grade set's rows
whenever any of its grades is inserted, updated or deleted, in the same transaction; rows are written only
inside the write lock taken at once (`ResultCaches._fill`) from what the tables hold inside it, and read by one
statement. A read-only or busy store, or a step holding a grade that is not an integer in 0..74, is read from
the grades as before (`None` from `cover_grades`)."""

from __future__ import annotations

import json
import sqlite3
from functools import cache
from itertools import groupby
from operator import itemgetter

from proctor.store.caches import ResultCaches

MISSING = "-"
"""The character of a question not graded for the passage: it answers nothing."""

FAILED = "!"
"""The character of a failed grade (no grade): it answers nothing. Both sort below every grade."""

LARGEST = 74
"""The largest grade a character holds (`chr(48 + 74)` is `z`)."""

_COVER_ROWS = (
    "SELECT g.query_id, g.passage_id, group_concat(g.item),"
    f" group_concat(CASE WHEN g.grade IS NULL THEN '{FAILED}' WHEN typeof(g.grade) = 'integer'"
    f" AND g.grade BETWEEN 0 AND {LARGEST} THEN char(48 + g.grade) ELSE char(1) END, '')"
    " FROM grades g"
    " WHERE g.series = (SELECT series FROM grade_series WHERE grade_set_id = ? AND step = ?)"
    " GROUP BY g.query_id, g.passage_id ORDER BY g.query_id, g.passage_id")
"""Per graded (query, passage) of a step, in that order (the primary key's: no sort): its questions' numbers
(`grade_items`, comma-separated: named in Python, not joined row by row) and their grade characters, in the
same order (both aggregates read the same rows in turn); `char(1)` marks a grade no character holds."""

_UNHELD = chr(1)

CoverGrades = list[tuple[str, list[str], list[str], str]]
"""Per query: (query, graded question ids, graded passages, their grade characters concatenated)."""


class CacheRepository(ResultCaches):
    """Every kept result: the EXAM-Cover cache beside the label and ranked-list caches (whose filling it shares)
    and the response cache."""

    def cover_grades(self, grade_set_id: str, step: str) -> CoverGrades | None:
        """Per query in query order: its graded questions (sorted), graded passages (sorted) and their grade
        characters (see the module); None when not kept (read-only or busy store, grades it cannot hold, no
        grades): then read `graded_questions` and `answered` (or `label_histogram`)."""
        cached = self._cached_cover(grade_set_id, step)
        if not cached and self._fill(lambda: self._keep_cover(grade_set_id, step)):
            cached = self._cached_cover(grade_set_id, step)
        if not cached:
            return None
        return [(qid, json.loads(questions), json.loads(passages), grades)
                for qid, questions, passages, grades in cached]

    def _cached_cover(self, grade_set_id: str, step: str) -> list[tuple[str, str, str, str]]:
        """The kept rows, read by one statement (one snapshot); empty when none are kept."""
        try:
            return self.db.execute("SELECT query_id, questions, passages, grades FROM cover_cache"
                                   " WHERE grade_set_id = ? AND step = ? ORDER BY query_id",
                                   (grade_set_id, step)).fetchall()
        except sqlite3.OperationalError:  # a read-only store of an earlier release has no cache
            return []

    def _keep_cover(self, grade_set_id: str, step: str) -> None:
        """Write the rows of one step (inside the write lock); nothing when a grade cannot be held."""
        self.db.execute("DELETE FROM cover_cache WHERE grade_set_id = ? AND step = ?", (grade_set_id, step))
        rows = []
        names = dict(self.db.execute("SELECT item, question_id FROM grade_items"))
        for qid, graded in groupby(self.db.execute(_COVER_ROWS, (grade_set_id, step)), key=itemgetter(0)):
            row = _query_row(list(graded), names)
            if row is None:
                return
            rows.append((grade_set_id, step, qid, *row))
        self.db.executemany("INSERT INTO cover_cache VALUES (?, ?, ?, ?, ?, ?)", rows)


def _query_row(graded: list[tuple[str, str, str, str]], names: dict[int, str]) -> tuple[str, str, str] | None:
    """(questions, passages, grades) of one query's (query, passage, question numbers, characters) rows, the
    numbers named by `names`; None when a grade is not an integer in 0..74."""
    orders = {ids: [names[int(n)] for n in ids.split(",")] for ids in {ids for _, _, ids, _ in graded}}
    questions = sorted(set().union(*orders.values()))
    position = {question: n for n, question in enumerate(questions)}
    places = {ids: None if order == questions else [position[q] for q in order] for ids, order in orders.items()}
    strings = []
    for _, _, ids, chars in graded:
        place = places[ids]
        if len(chars) != len(orders[ids]):
            return None
        if place is not None:  # not every question, or another order: each grade to its question's place
            row = [MISSING] * len(questions)
            for n, char in zip(place, chars, strict=True):
                row[n] = char
            chars = "".join(row)
        strings.append(chars)
    if _UNHELD in "".join(strings):
        return None
    order = sorted(range(len(graded)), key=lambda n: graded[n][1])  # passages sorted as SQLite sorts them
    return (json.dumps(questions, ensure_ascii=False),
            json.dumps([graded[n][1] for n in order], ensure_ascii=False), "".join(strings[n] for n in order))


def answered_masks(passages: list[str], grades: str, questions: int, tau: int) -> dict[str, int]:
    """`{passage: bitmask}` of one query's kept row at grade >= `tau`: bit i is set when the passage answers
    question `questions - 1 - i` of the row's question list (the last question is bit 0)."""
    bits = grades.translate(_threshold(tau))
    return dict(zip(passages, [int(bits[start:start + questions], 2) for start in range(0, len(bits), questions)],
                    strict=True))


@cache
def _threshold(tau: int) -> dict[int, str]:
    """The translation of grade characters to `1` (grade >= τ) or `0` (below τ, failed or missing)."""
    held = {chr(48 + grade): "1" if grade >= tau else "0" for grade in range(LARGEST + 1)}
    return str.maketrans({MISSING: "0", FAILED: "0", **held})


def labels_at(passages: list[str], grades: str, questions: int, min_questions: int
              ) -> tuple[dict[str, int], int, int, int]:
    """One query's kept row as EXAM-Qrels labels from "at least m questions": `{passage: m-th largest usable
    grade, 0 with fewer}` for the passages with a usable grade, and the (usable, failed) grades and the passages
    without a usable grade it holds."""
    labels: dict[str, int] = {}
    without = 0
    m = min_questions - 1
    for n, pid in enumerate(passages):
        ranked = sorted(grades[n * questions:(n + 1) * questions], reverse=True)  # grades first, largest first
        if ranked[0] < "0":
            without += 1
        else:
            labels[pid] = ord(ranked[m]) - 48 if m < questions and ranked[m] >= "0" else 0
    failed = grades.count(FAILED)
    return labels, len(grades) - failed - grades.count(MISSING), failed, without
