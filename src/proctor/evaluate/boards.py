"""Leaderboards' measures checked and bound before any work (`bind_measures`), `proctor leaderboard`'s older
modes translated into measure strings (`flag_measures`), and the leaderboards of generated answers (nugget
scores, citation support) with what they rest on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NoReturn

from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Coverage, Floor
from proctor.evaluate.leaderboard import Leaderboard
from proctor.evaluate.measures import BoardSpec, ScoreSpec, parse_any_measure
from proctor.evaluate.measures.scores import CITATION_SCORES, NUGGET_SCORES
from proctor.evaluate.stored_coverage import query_counts
from proctor.gradesets.resolve import describe, resolve_grade_set
from proctor.store import Store

ANSWER_METHOD = {"nuggets": "nugget-assign", "citations": "citation-support"}
"""The method whose grade sets the nugget and citation measures read."""


def answer_leaderboard(store: Store, spec: ScoreSpec, *, labels: Any = None,
                       floor: Floor = DEFAULT_FLOOR) -> Leaderboard:
    """A leaderboard of generated answers: AutoNuggetizer scores of a nugget-assign grade set
    (`Nuggets(score=...)`), or the citation support of a citation-support grade set (`Citations(score=...)`)
    (`labels`: a `LabelChoice`), with its coverage (the topics it rests on, judged against `floor`)."""
    from proctor.evaluate.citations import citation_leaderboard, citation_table
    from proctor.evaluate.nuggets import nugget_leaderboard, nugget_table

    kind = spec.measure.kind
    grade_set = resolve_grade_set(store, getattr(labels, "grade_set", None),
                                  getattr(labels, "method", None) or ANSWER_METHOD[kind],
                                  getattr(labels, "model", None), getattr(labels, "bank", None))
    description = {**describe(store, grade_set), "labels": "nugget assignments" if kind == "nuggets"
                   else "citation support judgments"}
    if kind == "nuggets":
        board = nugget_leaderboard(nugget_table(store, grade_set), spec.get("score"), missing=spec.get("missing"),
                                   description=description)
    else:
        board = citation_leaderboard(citation_table(store, grade_set), spec.get("score"), description=description)
    scored = {q for e in board.entries for q in e.per_query}
    return replace(board, description={**board.description, "measure_id": spec.name},
                   coverage=Coverage({"scored": len(scored), **query_counts(store, grade_set, None)},
                                     floor=floor).judge())


def bind_measures(measures: Sequence[str | BoardSpec], *, min_grade: int | None, judgments: str | None,
                  missing: str | None) -> list[BoardSpec]:
    """Each measure parsed and bound to the leaderboard's `min_grade` (the rel of measures that name none and take
    one) and `missing`; contradictions refused before any work."""
    if missing not in (None, "zero", "skip"):
        _refuse(f"{{missing}} {missing!r}: choose one of zero, skip", ("missing",))
    specs = []
    for measure in measures:
        spec = parse_any_measure(measure) if isinstance(measure, str) else measure
        if isinstance(spec, ScoreSpec):
            if judgments:
                _refuse(f"{spec.name} reads the grades directly: it takes no {{judgments}}")
            spec = spec.bound(rel=min_grade, missing=missing)
            lacking = spec.needs()
            if lacking == "rel":
                _refuse(f"{spec.name} needs rel=T or {{min_grade}} T (the smallest grade that answers a question)")
            if lacking:
                _refuse(f"measure {spec.name} needs {lacking}=..., one of "
                        f"{', '.join(spec.measure.param(lacking).choices)}")  # type: ignore[union-attr]
        else:
            if spec.rel is not None and min_grade is not None and spec.rel != min_grade:
                _refuse(f"{spec.name} names rel={spec.rel} but {{min_grade}} is {min_grade}")
            if spec.missing is not None and missing is not None and spec.missing != missing:
                _refuse(f"{spec.name} names missing={spec.missing} but {{missing}} is {missing}")
            if not judgments and spec.rel is None and min_grade is None and spec.measure.uses_relevance_level:
                _refuse(f"{spec.name} on EXAM-Qrels needs {{min_grade}} T (the smallest relevant grade)")
        specs.append(spec)
    return specs


def flag_measures(options: Any) -> list[str]:
    """`proctor leaderboard`'s `--metric` modes as measure strings (a `LeaderboardOptions`: `--metric cover
    --min-grade 3 --budget 20` is `Cover(rel=3)@20`, `--metric nuggets --score all` is `Nuggets(score=all)`),
    refusing flags the mode does not take."""
    o = options
    budget = o.budget != type(o).budget  # a cutoff asked of a mode that has none is refused, never dropped
    if o.metric in ("nuggets", "citations"):
        given = [n for n in ("measure", "min_grade", "judgments", "normalize", "gold", "runs")
                 if getattr(o, n) not in (None, ())] + (["budget"] if budget else [])
        if given:
            _refuse(f"{{metric}} {o.metric} takes no {', '.join('{' + g + '}' for g in given)} (it reads the "
                    "answers' grades directly)", ("metric", *given))
        known = NUGGET_SCORES if o.metric == "nuggets" else CITATION_SCORES
        if o.score is None:
            _refuse(f"{{metric}} {o.metric} needs {{score}}, one of {', '.join(known)}", ("metric", "score"))
        if o.score not in known:
            _refuse(f"{{score}} {o.score!r}: choose one of {', '.join(known)}", ("score",))
        missing = f",missing={o.missing}" if o.metric == "nuggets" and o.missing else ""
        return [f"{o.metric.capitalize()}(score={o.score}{missing})"]
    if o.score is not None:
        _refuse("{score} applies to {metric} nuggets and {metric} citations only", ("score", "metric"))
    if o.metric == "cover":
        return [_cover_measure(o)]
    if o.gold:
        _refuse("{gold} applies to {metric} cover only")
    if not o.measure:
        _refuse("{metric} qrels needs {measure} M (e.g. P@20 or ndcg_cut.10)")
    if o.normalize:
        _refuse("{normalize} applies to {metric} cover only")
    if budget:
        _refuse("{budget} applies to {metric} cover only; a measure names its own cutoff (e.g. Cover(rel=3)@10)")
    return list(o.measure)


def _cover_measure(o: Any) -> str:
    """`--metric cover` as `Cover(rel=T)@K` or `NEXAM(rel=T,norm=...)@K`."""
    if o.measure or o.judgments:
        _refuse("{metric} cover takes no {measure} or {judgments} (it reads the grades directly)")
    if o.min_grade is None:
        _refuse("{metric} cover needs {min_grade} T (the smallest grade that answers a question)")
    if o.budget < 1:
        _refuse("{budget} must be at least 1")
    if o.gold and o.normalize:
        _refuse("{gold} RUN and {normalize} pool are two different normalisers: choose one")
    if o.gold and ("," in o.gold or "(" in o.gold or ")" in o.gold or "=" in o.gold):
        _refuse(f"{{gold}} {o.gold}: a run name without commas, parentheses or '='")
    params = [f"rel={o.min_grade}"]
    params += [f"norm={o.normalize}"] if o.normalize else [f"gold={o.gold}"] if o.gold else []
    params += [f"missing={o.missing}"] if o.missing else []
    return f"{'NEXAM' if o.normalize or o.gold else 'Cover'}({','.join(params)})@{o.budget}"


def _refuse(message: str, params: tuple[str, ...] | None = None) -> NoReturn:
    """A usage error naming the leaderboard parameters (`{metric}`, `{min_grade}`, ...) its message marks."""
    named = ("metric", "measure", "judgments", "min_grade", "budget", "gold", "normalize", "score", "missing")
    raise UsageError(message, params=params or tuple(p for p in named if "{" + p + "}" in message))
