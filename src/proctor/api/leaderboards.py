"""Leaderboards: EXAM-Qrels (a measure over labels from grades or human judgments), EXAM-Cover, and the scores
of generated answers; bootstrap intervals; and `proctor leaderboard`'s whole request (`leaderboard_report`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from proctor.api.labels import ANY_LABELS, LabelChoice, qrels
from proctor.api.modes import LeaderboardFormat, Metric, Missing, Normalize
from proctor.api.significance import SignificanceSettings, significance
from proctor.errors import UsageError
from proctor.evaluate.boards import answer_leaderboard, check_leaderboard
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor, leaderboard_coverage
from proctor.evaluate.intervals import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, bootstrap, check_settings
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard, measure_leaderboard
from proctor.evaluate.measures import known_measures as known_measures  # the names `measure` takes, in one line
from proctor.evaluate.render import to_ir_measures, to_json, to_jsonl, to_markdown, to_trec, to_tsv
from proctor.evaluate.sources import (
    cover_table,
    exam_qrels,
    load_runs,
    note_flagged,
    official_or_file_qrels,
    refuse_cover,
    with_unjudgeable,
)
from proctor.evaluate.stored_coverage import graded_pairs, query_counts
from proctor.gradesets.ensemble import check_min_grade
from proctor.gradesets.resolve import describe
from proctor.options.numeric import check_numbers
from proctor.store import Store

if TYPE_CHECKING:  # numpy (the randomization test) loads only when a comparison is made
    from proctor.stats.pairs import Comparison


def leaderboard(store: Store, *, measure: str | None = None, min_grade: int | None = None, metric: Metric = "qrels",
                labels: LabelChoice = ANY_LABELS, judgments: str | None = None, budget: int = 20,
                missing: Missing | None = None, normalize: Normalize | None = None, gold: str | None = None,
                runs: Sequence[str] | None = None, score: str | None = None,
                floor: Floor = DEFAULT_FLOOR) -> Leaderboard:
    """An EXAM-Qrels leaderboard (`measure`, `min_grade`; `judgments="official"` or a qrels file scores
    with human judgments instead), an EXAM-Cover one (`metric="cover"`, `min_grade`, `budget`), or the
    generated answers' AutoNuggetizer scores (`metric="nuggets"`, `score`) or citation support
    (`metric="citations"`, `score`)."""
    if metric in ("nuggets", "citations"):
        return answer_leaderboard(store, metric, score, labels=labels, missing=missing, floor=floor,
                                  conflicting={"measure": measure, "min_grade": min_grade, "judgments": judgments,
                                               "normalize": normalize, "gold": gold, "runs": runs})
    if score is not None:
        raise UsageError("{score} applies to {metric} nuggets and {metric} citations only", params=("score", "metric"))
    return leaderboards(store, measures=[measure] if measure else [], min_grade=min_grade, metric=metric,
                        labels=labels, judgments=judgments, budget=budget, missing=missing, normalize=normalize,
                        gold=gold, runs=runs, floor=floor)[0]


def leaderboards(store: Store, *, measures: Sequence[str] = (), min_grade: int | None = None, metric: Metric = "qrels",
                 labels: LabelChoice = ANY_LABELS, judgments: str | None = None, budget: int = 20,
                 missing: Missing | None = None, normalize: Normalize | None = None, gold: str | None = None,
                 runs: Sequence[str] | None = None, floor: Floor = DEFAULT_FLOOR,
                 ranked: dict | None = None) -> list[Leaderboard]:
    """One leaderboard per measure (labels and runs read once), or the one EXAM-Cover leaderboard, each with
    its coverage (what it rests on, judged against `floor`); the other options are those of `leaderboard`
    (`ranked`: the runs of `runs` or of the store, when the caller has read them)."""
    floor.check()
    specs = [check_leaderboard(measure=m, min_grade=min_grade, metric=metric, judgments=judgments, budget=budget,
                               normalize=normalize, gold=gold) for m in (measures or [None])]
    if not judgments:  # the threshold of min_grade or of a measure's own rel=T, on the grade set's scale
        for spec in specs:
            own = spec is not None and spec.rel is not None
            check_min_grade(labels.resolve(store), spec.rel if own else min_grade,  # type: ignore[union-attr]
                            f"{spec.name}: rel=" if own else "min_grade")  # type: ignore[union-attr]
    if metric == "cover":  # refused before the runs are read (and kept)
        refuse_cover(labels.resolve(store))
    ranked = load_runs(store, runs) if ranked is None else ranked
    if metric == "cover":
        return _cover(store, ranked, labels, min_grade, budget, missing, normalize, gold, not runs, floor)
    grade_set = None
    if judgments:
        qrels_ = official_or_file_qrels(store, judgments)
        description = {"labels": "human judgments" if judgments == "official" else f"qrels file {judgments}",
                       "labels_id": judgments}
    else:
        grade_set, qrels_ = qrels(store, labels)
        description = {**describe(store, grade_set), "label_rule": ("max grade over questions"
                       if labels.min_questions == 1 else f"{labels.min_questions}-th largest grade")}
    judged = qrels_ if judgments not in (None, "official") else None  # a qrels file: its own judged queries
    counts = query_counts(store, grade_set, qrels_ if grade_set else None, judged)
    measured = [s for s in specs if s is not None]
    boards = [measure_leaderboard(ranked, qrels_, spec, min_grade, missing=missing or "skip", description=description)
              for spec in measured]
    note_flagged(boards)
    labelled = graded_pairs(store, grade_set, qrels_) if grade_set and boards else qrels_  # once for every board
    for board, spec in zip(boards, measured, strict=True):
        board.coverage = leaderboard_coverage(board, ranked, labelled, counts, depth=getattr(spec, "cutoff", None),
                                              labelled_by="graded" if grade_set else "judged", floor=floor)
    return with_unjudgeable(store, ranked, not runs, boards)


def _cover(store: Store, ranked: dict, labels: LabelChoice, min_grade: int | None, budget: int,
           missing: Missing | None, normalize: Normalize | None, gold: str | None, stored_runs: bool,
           floor: Floor) -> list[Leaderboard]:
    """The one EXAM-Cover leaderboard, with its coverage and its notes."""
    grade_set = labels.resolve(store)
    if gold and gold not in ranked:
        raise UsageError(f"{{gold}} {gold}: no such run (runs: {', '.join(sorted(ranked))})", params=("gold",))
    table, notes = cover_table(store, grade_set, min_grade)  # type: ignore[arg-type]
    board = cover_leaderboard(ranked, table, budget=budget, missing=missing or "zero", normalize=normalize,
                              gold=gold, description=describe(store, grade_set), notes=notes)
    graded = exam_qrels(store, grade_set)
    board.coverage = leaderboard_coverage(board, ranked, graded_pairs(store, grade_set, graded),
                                          query_counts(store, grade_set, graded),
                                          depth=budget, labelled_by="graded", floor=floor)
    return note_flagged(with_unjudgeable(store, ranked, stored_runs, [board]))


def add_intervals(board: Leaderboard, *, confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = 0) -> Leaderboard:
    """Give a leaderboard bootstrap intervals over topics: each system's score interval and rank interval
    (`proctor.evaluate.intervals`); returns the same leaderboard."""
    check_numbers({"confidence": confidence, "resamples": resamples, "seed": seed})
    board.intervals = bootstrap({e.system: e.per_query for e in board.entries}, [e.system for e in board.entries],
                                confidence=confidence, resamples=resamples, seed=seed)
    return board


def render_leaderboards(board: Leaderboard | Sequence[Leaderboard], fmt: LeaderboardFormat = "tsv", *,
                        per_query: bool = False) -> str:
    """One or several leaderboards as `tsv`, `json`, `md`, `trec` (trec_eval's per-query lines; `tot`),
    `ir-measures` or `jsonl` text."""
    if fmt == "tsv":
        return to_tsv(board)
    if fmt == "json":
        return to_json(board, per_query=per_query)
    if fmt == "md":
        return to_markdown(board)
    writers = {"trec": to_trec, "tot": to_trec, "ir-measures": to_ir_measures, "jsonl": to_jsonl}
    if fmt in writers:
        return writers[fmt](board)
    raise UsageError(f"unknown format {fmt!r}: tsv, json, md, trec (= tot), ir-measures or jsonl")


@dataclass
class LeaderboardReport:
    """What `proctor leaderboard` prints: leaderboards (with intervals when asked) and, with `significance`
    settings, each one's paired tests (`comparisons`, in the same order, made when first read)."""

    boards: list[Leaderboard]
    significance: SignificanceSettings | None = None
    per_query: bool = False

    @cached_property
    def comparisons(self) -> list[Comparison]:
        """Each leaderboard's paired tests (none without significance settings)."""
        settings = self.significance
        return [significance_of(board, settings) for board in self.boards] if settings is not None else []

    def render(self, fmt: LeaderboardFormat | None = None) -> str:
        """The leaderboards as text; with significance, JSON objects gain `significance` and each Markdown
        table is followed by its tests."""
        fmt = fmt or "tsv"
        if not self.comparisons:
            return render_leaderboards(self.boards, fmt, per_query=self.per_query)
        from proctor.stats.report import as_dict, render_comparison

        pairs = list(zip(self.boards, self.comparisons, strict=True))
        if fmt == "md":
            return "\n".join(render_leaderboards(b, "md") + "\n" + render_comparison(c, "md",
                             b.description.get("measure_id", "")) for b, c in pairs)
        objects = [{**json.loads(render_leaderboards(b, "json", per_query=self.per_query)),
                    "significance": as_dict(c)} for b, c in pairs]
        return json.dumps(objects[0] if len(objects) == 1 else {"leaderboards": objects}, indent=2) + "\n"


def leaderboard_report(store: Store, *, measures: Sequence[str] = (), min_grade: int | None = None,
                       metric: Metric = "qrels", labels: LabelChoice = ANY_LABELS, judgments: str | None = None,
                       budget: int = 20, missing: Missing | None = None, normalize: Normalize | None = None,
                       gold: str | None = None, runs: Sequence[str] | None = None, score: str | None = None,
                       floor: Floor = DEFAULT_FLOOR, fmt: LeaderboardFormat = "tsv", per_query: bool = False,
                       significance: SignificanceSettings | None = None, intervals: bool = False,
                       confidence: float | None = None, resamples: int | None = None,
                       seed: int = 0) -> LeaderboardReport:
    """`proctor leaderboard`: the leaderboards of `leaderboards` (or the one of `leaderboard` for answers'
    `score`), checked against the output they are written in (`fmt`, `per_query`), with bootstrap `intervals`
    (`confidence`, `resamples`, `seed`) and paired `significance` tests when asked (made when the report's
    `comparisons` are first read: a `baseline` that names no system is refused then); render with `api.render`."""
    _check_output(fmt, per_query, significance is not None, intervals, confidence, resamples)
    if intervals:
        confidence = DEFAULT_CONFIDENCE if confidence is None else confidence
        resamples = resamples or DEFAULT_RESAMPLES
        check_settings(confidence, resamples)
    if metric in ("nuggets", "citations") or score is not None:
        boards = [leaderboard(store, measure=",".join(measures) or None, min_grade=min_grade, metric=metric,
                              labels=labels, judgments=judgments, budget=budget, missing=missing,
                              normalize=normalize, gold=gold, runs=runs, score=score, floor=floor)]
    else:
        boards = leaderboards(store, measures=measures, min_grade=min_grade, metric=metric, labels=labels,
                              judgments=judgments, budget=budget, missing=missing, normalize=normalize, gold=gold,
                              runs=runs, floor=floor)
    for board in boards if intervals else []:
        add_intervals(board, confidence=confidence, resamples=resamples, seed=seed)  # type: ignore[arg-type]
    return LeaderboardReport(boards, significance, per_query)


def significance_of(board: Leaderboard, settings: SignificanceSettings) -> Comparison:
    """`significance` of a leaderboard with the given settings."""
    return significance(board, tests=settings.tests(), correction=settings.correction, alpha=settings.alpha,
                        baseline=settings.baseline, samples=settings.samples, seed=settings.seed)


def _check_output(fmt: str, per_query: bool, with_significance: bool, intervals: bool, confidence: float | None,
                  resamples: int | None) -> None:
    """Refuse output options that do not fit the format, before any work."""
    if per_query and fmt != "json":
        raise UsageError("{per_query} needs {fmt} json", params=("per_query", "fmt"))
    if with_significance and fmt not in ("json", "md"):
        raise UsageError("{significance} needs {fmt} json or md (or write {fmt} json {per_query} and run "
                         "`proctor compare FILE`)", params=("significance", "fmt", "per_query"))
    if not intervals and (confidence is not None or resamples is not None):
        raise UsageError("{confidence} and {resamples} apply to {intervals} only",
                         params=("confidence", "resamples", "intervals"))
    if intervals and fmt not in ("tsv", "json", "md"):
        raise UsageError("{intervals} needs {fmt} tsv, json or md", params=("intervals", "fmt"))
