"""Leaderboards' options checked before any work, and the leaderboards of generated answers (nugget scores,
citation support) with what they rest on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Coverage, Floor
from proctor.evaluate.leaderboard import Leaderboard
from proctor.evaluate.measures import AnySpec, parse_measure
from proctor.evaluate.stored_coverage import query_counts
from proctor.gradesets.resolve import describe, resolve_grade_set
from proctor.store import Store

ANSWER_METHOD = {"nuggets": "nugget-assign", "citations": "citation-support"}
"""The method whose grade sets `--metric nuggets|citations` read."""


def answer_leaderboard(store: Store, metric: str, score: str | None, *, labels: Any = None,
                       missing: str | None = None, conflicting: Mapping[str, object] | None = None,
                       floor: Floor = DEFAULT_FLOOR) -> Leaderboard:
    """A leaderboard of generated answers: AutoNuggetizer scores of a nugget-assign grade set, or the
    citation support of a citation-support grade set (`labels`: an `api.LabelChoice`), with its coverage
    (the topics it rests on, judged against `floor`); a parameter of `conflicting` (name → value) that is
    given is refused."""
    from proctor.evaluate.citations import CITATION_SCORES, citation_leaderboard, citation_table
    from proctor.evaluate.nuggets import SCORES, nugget_leaderboard, nugget_table

    given = [name for name, value in (conflicting or {}).items() if value]
    if given:
        raise UsageError(f"{{metric}} {metric} takes no {', '.join('{' + g + '}' for g in given)} (it reads the "
                         "answers' grades directly)", params=("metric", *given))
    known = SCORES if metric == "nuggets" else CITATION_SCORES
    if score is None:
        raise UsageError(f"{{metric}} {metric} needs {{score}}, one of {', '.join(known)}", params=("metric", "score"))
    floor.check()
    grade_set = resolve_grade_set(store, getattr(labels, "grade_set", None),
                                  getattr(labels, "method", None) or ANSWER_METHOD[metric],
                                  getattr(labels, "model", None), getattr(labels, "bank", None))
    description = {**describe(store, grade_set), "labels": "nugget assignments" if metric == "nuggets"
                   else "citation support judgments"}
    if metric == "nuggets":
        board = nugget_leaderboard(nugget_table(store, grade_set), score, missing=missing or "zero",
                                   description=description)
    else:
        board = citation_leaderboard(citation_table(store, grade_set), score, description=description)
    scored = {q for e in board.entries for q in e.per_query}
    board.coverage = Coverage({"scored": len(scored), **query_counts(store, grade_set, None)}, floor=floor).judge()
    return board


def check_leaderboard(*, measure: str | None, min_grade: int | None, metric: str, judgments: str | None,
                      budget: int, normalize: str | None, gold: str | None) -> AnySpec | None:
    """Refuse contradictory parameters before any work (naming them: `UsageError.params`); returns the measure
    (None for cover)."""
    if metric == "cover":
        if measure or judgments:
            _refuse("{metric} cover takes no {measure} or {judgments} (it reads the grades directly)")
        if min_grade is None:
            _refuse("{metric} cover needs {min_grade} T (the smallest grade that answers a question)")
        if budget < 1:
            _refuse("{budget} must be at least 1")
        if gold and normalize:
            _refuse("{gold} RUN and {normalize} pool are two different normalisers: choose one")
        return None
    if gold:
        _refuse("{gold} applies to {metric} cover only")
    if not measure:
        _refuse("{metric} qrels needs {measure} M (e.g. P@20 or ndcg_cut.10)")
    if normalize:
        _refuse("{normalize} applies to {metric} cover only")
    spec = parse_measure(measure)  # type: ignore[arg-type]
    if spec.rel is not None and min_grade is not None and spec.rel != min_grade:
        _refuse(f"{measure} names rel={spec.rel} but {{min_grade}} is {min_grade}")
    if not judgments and spec.rel is None and min_grade is None and spec.measure.uses_relevance_level:
        _refuse(f"{spec.name} on EXAM-Qrels needs {{min_grade}} T (the smallest relevant grade)")
    return spec


def _refuse(message: str) -> NoReturn:
    """A usage error naming the leaderboard parameters (`{metric}`, `{min_grade}`, ...) its message marks."""
    named = ("metric", "measure", "judgments", "min_grade", "budget", "gold", "normalize")
    raise UsageError(message, params=tuple(p for p in named if "{" + p + "}" in message))
