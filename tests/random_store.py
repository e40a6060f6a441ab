"""Synthetic stores of random rankings and grades: the one builder of the tests that check a cache or a faster
path against the plain computation (test_cover_cache, test_label_caches, test_recorded_results). Each test gives
its shape and its seeded `random.Random`; the draws come in a fixed order, so one seed gives one store."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from proctor.records import Grade, GradeSet
from proctor.store import Store

Count = int | tuple[int, int]
"""A fixed number, or (low, high): a number drawn from low..high (both included) each time."""


def _count(rnd: random.Random, count: Count) -> int:
    return count if isinstance(count, int) else rnd.randint(*count)


def rankings(rnd: random.Random, runs: int, queries: Sequence[str] | Sequence[Sequence[str]], pool: int,
             depth: int, top_score: int, keep: float | None = None) -> Iterator[tuple]:
    """Ranking rows: run `run{r}` ranks `depth` passages drawn from the `pool` passages `{query}p{j}` of each
    of its queries (`queries`, or `queries[r]` when given per run), scores drawn from 0..top_score; with `keep`
    a run ranks a query only that share of the time."""
    for r in range(runs):
        for qid in (queries[r] if queries and not isinstance(queries[0], str) else queries):
            if keep is not None and not rnd.random() < keep:
                continue
            for rank, j in enumerate(rnd.sample(range(pool), depth)):
                yield f"run{r}", qid, f"{qid}p{j}", rank, float(rnd.randint(0, top_score))


def grades(rnd: random.Random, grade_set: GradeSet, queries: Sequence[str], passages: Count, questions: Count, *,
           question: str = "{q}/h{k}", failed: float = 0.1, keep: float | None = None,
           steps: Sequence[str] | None = None, statuses: Sequence[str] | None = None,
           reply: str | None = None) -> Iterator[Grade]:
    """Grades 0-5 of passages `{query}p{j}` (j below `passages`) on questions `question` (formatted with q, k and
    facet = k % 3; k below `questions`) of each step (the grade set's own by default); `failed` of them fail (no
    grade), `keep` of the pairs are graded at all; a grade's status is `ok`, or drawn from `statuses`."""
    for qid in queries:
        for j in range(_count(rnd, passages)):
            for k in range(_count(rnd, questions)):
                for step in steps or [grade_set.step]:
                    if keep is not None and not rnd.random() < keep:
                        continue
                    grade = None if rnd.random() < failed else rnd.randint(0, 5)
                    status = "failed" if grade is None else (rnd.choice(statuses) if statuses else "ok")
                    yield Grade(qid, f"{qid}p{j}", question.format(q=qid, k=k, facet=k % 3), step, grade_set.model,
                                grade_set.prompt_version, grade, status, reply)


def random_store(path: Path, ranked: Iterable[tuple], graded: Sequence[tuple[GradeSet, Iterable[Grade]]], *,
                 queries: Iterable[tuple[str, str]] = (), passages: Iterable[tuple[str, str]] = (),
                 judgments: Iterable[tuple[str, str, int]] = ()) -> Store:
    """A store at `path` with these rows, written in one transaction in this order (the order the random rows
    are drawn in): queries, passages, rankings, judgments, then each grade set and its grades."""
    store = Store.create_or_open(path)
    with store.transaction():
        store.corpus.upsert_queries(queries)
        store.corpus.upsert_passages(passages)
        store.corpus.upsert_rankings(ranked)
        store.corpus.upsert_judgments(judgments)
        for grade_set, rows in graded:
            store.grades.ensure_grade_set(grade_set)
            store.grades.upsert_grades(grade_set.id, list(rows))
    return store
