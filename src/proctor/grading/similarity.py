"""The embedding method's bulk path: a similarity step graded query by query — the query's texts encoded in one
call (`llm.embed.EmbeddingBackend.encode`), every pair's cosine read at once, the grades mapped by the
thresholds and their `extra` made in vectorised steps (`methods.embedding.grades_of`, `similarity_extras`) and
written as columns (`GradeRepository.add_query_grades`: plain multi-row inserts for a query new to the step), one
transaction per query, while the next query is encoded; no Python object per pair but the columns' own.
The model is loaded before the clock starts (`Summary.load_seconds`); memory is handed back once per query.
Grades, their `extra`, failures, resume and Ctrl-C are the engine's (`grading.engine`), which still grades
similarity steps with a pre-filter, with step variables or on Ray."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator
from itertools import groupby, repeat
from operator import itemgetter
from typing import Any

from proctor.grading.engine import Engine, GradeOptions, Summary, reason_of
from proctor.grading.plan import Plan
from proctor.grading.progress import Progress
from proctor.methods import Method
from proctor.methods.base import FAILED, SIMILARITY
from proctor.methods.embedding import grades_of, similarity_extras
from proctor.store.repository import dumps

Pending = list[tuple[str, str, str, tuple, dict]]
"""One query's pending pairs, as `Plan.pending` yields them."""


def bulk_capable(method: Method, backend: Any, plan: Plan, options: GradeOptions) -> bool:
    """Whether a step can take the bulk path: similarity grades from a backend that encodes texts, in-process,
    without a pre-filter or step variables."""
    return (method.kind == "similarity" and hasattr(backend, "encode") and options.engine == "local"
            and options.prefilter is None and plan.variables is None)


class SimilarityEngine(Engine):
    """Grades the planned pairs of one similarity step (the engine's interface and state: `arun`, `results`)."""

    @property
    def cuts_context(self) -> bool:
        """A template that shows the passage reports the passages longer than the model's window as cut."""
        return "{context}" in self.method.template.template

    async def arun(self) -> Summary:
        """Grade every planned pair that lacks a grade, committing each query's grades as it is done."""
        load = await self._load()  # before the clock; nothing to do: none
        summary, progress = self._started()
        summary.load_seconds = round(load or 0.0, 3)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, stop.set)
        scoring: asyncio.Future | None = None
        try:
            for rows in _by_query(self.plan.pending(self.store)):
                if stop.is_set():
                    break
                following = asyncio.ensure_future(asyncio.to_thread(self._score, rows))
                if scoring is not None:
                    self._commit(*await scoring, summary, progress)
                scoring = following
            if scoring is not None:
                self._commit(*await scoring, summary, progress)
                scoring = None
        finally:
            if scoring is not None:  # an error while writing: the query being encoded is dropped, not written
                scoring.cancel()
            progress.close()
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)
        summary.interrupted = stop.is_set()
        summary.elapsed = progress.elapsed
        summary.calls, summary.tokens, summary.cached = progress.calls, progress.tokens, progress.cached
        return summary

    def _score(self, rows: Pending) -> tuple[Pending, tuple[list, ...], int, str | None]:
        """(the pairs, their grades as columns (passages, questions, grades, extras), how many of them had their
        passage cut, the error when encoding failed); runs on a worker thread, in C loops where it can (no
        Python object per pair but the columns' own)."""
        from proctor.llm.embed import release_memory

        try:
            items = list(map(itemgetter(3), rows))
            asked, texts = list(map(itemgetter(1), items)), list(map(itemgetter(2), rows))
            questions, passages = list(dict.fromkeys(asked)), list(dict.fromkeys(texts))
            vectors = self.backend.encode(questions + passages)
            at = {text: n for n, text in enumerate(questions)}
            at.update({text: len(questions) + n for n, text in enumerate(passages)})
            vectors = vectors.astype("float64")  # summed in float64: the same on every BLAS build
            scores = (vectors[list(map(at.__getitem__, asked))] * vectors[list(map(at.__getitem__, texts))]).sum(axis=1)
            cut = set(p for p, long in zip(passages, self.backend.too_long(passages), strict=True) if long) \
                if self.cuts_context else set()
        except Exception as exc:  # a failing query becomes recorded failures, not a crash
            return rows, (), 0, f"{type(exc).__name__}: {exc}"
        finally:
            release_memory()
        extras = similarity_extras(scores)
        for n in [n for n, text in enumerate(texts) if text in cut] if cut else ():
            extras[n] = dumps({"similarity": round(float(scores[n]), 6), "truncated": True})
        columns = (list(map(itemgetter(1), rows)), list(map(itemgetter(0), items)), grades_of(scores).tolist(), extras)
        return rows, columns, sum(1 for text in texts if text in cut) if cut else 0, None

    def _commit(self, rows: Pending, columns: tuple[list, ...], truncated: int, error: str | None, summary: Summary,
                progress: Progress) -> None:
        """Write one query's grades (or its failures) in one transaction and count them."""
        with self.store.transaction():
            if error is not None:
                self.store.grades.upsert_attempt_rows(self.grade_set, [
                    (self.step, qid, pid, item[0], None, None, FAILED, None, None, dumps({"error": error}))
                    for qid, pid, _, item, _ in rows])
            else:
                self.store.grades.add_query_grades(self.grade_set, self.step, rows[0][0], SIMILARITY, columns)
        if error is not None:
            summary.errors[reason_of(error)] += len(rows)
            summary.failures += len(rows)
        status = FAILED if error is not None else SIMILARITY
        summary.by_status[status] += len(rows)
        summary.graded += len(rows)
        summary.truncated += truncated
        if error is None:  # {(query, passage, question): (grade, answer, status)}, made in C, one value per grade
            passages, questions, grades, _ = columns
            values = {grade: (grade, None, SIMILARITY) for grade in set(grades)}
            self.results.update(zip(zip(repeat(rows[0][0]), passages, questions), map(values.__getitem__, grades),
                                    strict=True))
        progress.update(len(rows), failures=len(rows) if error is not None else 0, calls=1)


def _by_query(pending: Iterator[tuple]) -> Iterator[Pending]:
    """The pending pairs grouped by query (the plan yields them query by query)."""
    for _, rows in groupby(pending, key=itemgetter(0)):
        yield list(rows)
