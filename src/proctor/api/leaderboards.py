"""Leaderboards: EXAM-Qrels (a measure over labels from grades or human judgments), EXAM-Cover, and the scores
of generated answers; bootstrap intervals; and `proctor leaderboard`'s whole request (`leaderboard_report`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from proctor.api.labels import ANY_LABELS, LabelChoice, grade_set_of, qrels
from proctor.api.modes import LeaderboardFormat, Missing
from proctor.api.results import JSON
from proctor.api.significance import SignificanceSettings, significance
from proctor.errors import UsageError
from proctor.evaluate.boards import answer_leaderboard, bind_measures, flag_measures
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor, leaderboard_coverage
from proctor.evaluate.intervals import bootstrap, check_settings
from proctor.evaluate.leaderboard import MISSING_OVER_LABELS, Leaderboard, cover_leaderboard, measure_leaderboard
from proctor.evaluate.measures import (
    AnySpec,
    BoardSpec,
    ExternalSpec,
    MeasureSpec,
    ScoreMeasure,
    ScoreSpec,
    parse_any_measure,
)
from proctor.evaluate.measures import known_measures as known_measures  # the names `measure` takes, in one line
from proctor.evaluate.render import BOARD_FORMAT, render_boards
from proctor.evaluate.sources import (
    cover_table,
    exam_qrels,
    load_runs,
    note_flagged,
    official_or_file_qrels,
    refuse_cover,
    with_unjudgeable,
)
from proctor.evaluate.stored_coverage import note_partly_graded, partly_graded, query_counts
from proctor.gradesets.ensemble import check_min_grade
from proctor.gradesets.resolve import describe
from proctor.options.evaluation import LeaderboardOptions
from proctor.options.intervals import IntervalOptions
from proctor.options.numeric import check_numbers
from proctor.store import Store

if TYPE_CHECKING:  # numpy (the randomization test) loads only when a comparison is made
    from proctor.stats.pairs import Comparison


def leaderboard(store: Store, measures: str | BoardSpec | Sequence[str | BoardSpec], *,
                labels: LabelChoice = ANY_LABELS, min_grade: int | None = None, judgments: str | None = None,
                runs: Sequence[str] | None = None, missing: Missing | None = None,
                floor: Floor = DEFAULT_FLOOR) -> Leaderboard | list[Leaderboard]:
    """The leaderboard of one measure (a list of them for a list of measures: labels and runs read once), each
    with its coverage (what it rests on, judged against `floor`). A measure is any name of
    `proctor.evaluate.measures` (`api.measures()`): over EXAM-Qrels labels (`P@20`, `nDCG@10`, `P(rel=3)@20`;
    `judgments="official"` or a qrels file scores with human judgments instead), or read from grades:
    EXAM-Cover `Cover(rel=3)@20`, n-EXAM `NEXAM(rel=3,norm=pool)@20`, the generated answers' AutoNuggetizer
    scores `Nuggets(score=strict_vital)` or citation support `Citations(score=support_precision)`. `min_grade`
    is the rel of measures that name none; `missing` (zero|skip) overrides each measure's own default (skip
    over labels, zero for cover and nuggets)."""
    one = isinstance(measures, str | MeasureSpec | ExternalSpec | ScoreSpec)
    boards = _leaderboards(store, [measures] if one else list(measures), labels=labels, min_grade=min_grade,
                           judgments=judgments, runs=runs, missing=missing, floor=floor)
    return boards[0] if one else boards


def leaderboards(store: Store, *, measures: Sequence[str | BoardSpec], min_grade: int | None = None,
                 labels: LabelChoice = ANY_LABELS, judgments: str | None = None, runs: Sequence[str] | None = None,
                 missing: Missing | None = None, floor: Floor = DEFAULT_FLOOR,
                 ranked: dict | None = None) -> list[Leaderboard]:
    """`leaderboard` of a list of measures (kept for the modules that import it; `ranked`: the runs of `runs` or
    of the store, when the caller has read them)."""
    return _leaderboards(store, measures, labels=labels, min_grade=min_grade, judgments=judgments, runs=runs,
                         missing=missing, floor=floor, ranked=ranked)


def _leaderboards(store: Store, measures: Sequence[str | BoardSpec], *, labels: LabelChoice, min_grade: int | None,
                  judgments: str | None, runs: Sequence[str] | None, missing: Missing | None,
                  floor: Floor, ranked: dict | None = None) -> list[Leaderboard]:
    """Every measure's leaderboard, in the order given."""
    floor.check()
    if not measures:
        raise UsageError("{measures}: name at least one measure (e.g. P@20, Cover(rel=3)@20)", params=("measures",))
    specs = bind_measures(measures, min_grade=min_grade, judgments=judgments, missing=missing)
    graded = [s for s in specs if isinstance(s, ScoreSpec) and s.measure.kind == "cover"]
    checked = [s for s in specs if not isinstance(s, ScoreSpec) or s in graded]
    if not judgments and checked:
        grade_set = grade_set_of(store, labels)  # the threshold of min_grade or of a measure's own rel=T
        for spec in checked:
            from_min_grade = spec.rel is None or spec.rel == min_grade
            check_min_grade(grade_set, min_grade if from_min_grade else spec.rel,
                            "min_grade" if from_min_grade else f"{spec.name}: rel=")
        if graded:  # refused before the runs are read (and kept)
            refuse_cover(grade_set)
    over_labels = [s for s in specs if not isinstance(s, ScoreSpec)]
    if ranked is None:
        ranked = load_runs(store, runs) if over_labels or graded else {}
    by_spec: dict[int, Leaderboard] = {}
    for spec, board in zip(over_labels, _label_boards(store, ranked, over_labels, labels, min_grade, judgments,
                                                      missing, not runs, floor) if over_labels else [], strict=True):
        by_spec[id(spec)] = board
    for spec in specs:
        if isinstance(spec, ScoreSpec) and spec.measure.kind == "cover":
            by_spec[id(spec)] = _cover(store, ranked, labels, spec, not runs, floor)
        elif isinstance(spec, ScoreSpec):
            by_spec[id(spec)] = answer_leaderboard(store, spec, labels=labels, floor=floor)
    return [by_spec[id(spec)] for spec in specs]


def _label_boards(store: Store, ranked: dict, specs: list[AnySpec], labels: LabelChoice, min_grade: int | None,
                  judgments: str | None, missing: Missing | None, stored_runs: bool, floor: Floor
                  ) -> list[Leaderboard]:
    """The leaderboards of measures over labels (EXAM-Qrels, or judgments), labels read once."""
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
    boards = [measure_leaderboard(ranked, qrels_, spec, min_grade, description=description,
                                  missing=missing or spec.missing or MISSING_OVER_LABELS) for spec in specs]
    boards = note_flagged(boards)
    partly = partly_graded(store, grade_set, qrels_) if grade_set and boards else {}  # once for every board
    covered = []
    for board, spec in zip(boards, specs, strict=True):
        depth = getattr(spec, "cutoff", None)
        covered.append(replace(board, coverage=note_partly_graded(
            leaderboard_coverage(board, ranked, qrels_, counts, depth=depth, labelled_by="graded" if grade_set
                                 else "judged", floor=floor), partly, ranked, depth)))
    return with_unjudgeable(store, ranked, stored_runs, covered)


def _cover(store: Store, ranked: dict, labels: LabelChoice, spec: ScoreSpec, stored_runs: bool,
           floor: Floor) -> Leaderboard:
    """One EXAM-Cover or n-EXAM leaderboard, with its coverage and its notes."""
    grade_set = grade_set_of(store, labels)
    gold = spec.get("gold")
    if gold and gold not in ranked:
        raise UsageError(f"{{gold}} {gold}: no such run (runs: {', '.join(sorted(ranked))})", params=("gold",))
    norm = spec.get("norm") if spec.measure.param("norm") else None
    table, notes = cover_table(store, grade_set, spec.rel)  # type: ignore[arg-type]
    board = cover_leaderboard(ranked, table, budget=spec.cutoff, missing=spec.get("missing"),  # type: ignore[arg-type]
                              normalize=None if norm == "gold" else norm, gold=gold,
                              description=describe(store, grade_set), notes=notes)
    graded = exam_qrels(store, grade_set)  # the pairs with a label: what the cover rests on
    board = replace(board, coverage=note_partly_graded(
        leaderboard_coverage(board, ranked, graded, query_counts(store, grade_set, graded), depth=spec.cutoff,
                             labelled_by="graded", floor=floor), partly_graded(store, grade_set, graded), ranked,
        spec.cutoff))
    return note_flagged(with_unjudgeable(store, ranked, stored_runs, [board]))[0]


def add_intervals(board: Leaderboard, *, confidence: float = IntervalOptions.confidence,
                  resamples: int = IntervalOptions.resamples, seed: int = IntervalOptions.seed) -> Leaderboard:
    """Give a leaderboard bootstrap intervals over topics: each system's score interval and rank interval
    (`proctor.evaluate.intervals`); returns a new leaderboard (the given one is frozen)."""
    check_numbers({"confidence": confidence, "resamples": resamples, "seed": seed})
    return replace(board, intervals=bootstrap({e.system: e.per_query for e in board.entries},
                                              [e.system for e in board.entries], confidence=confidence,
                                              resamples=resamples, seed=seed))


def render_leaderboards(board: Leaderboard | Sequence[Leaderboard], fmt: LeaderboardFormat = BOARD_FORMAT, *,
                        per_query: bool = False) -> str:
    """One or several leaderboards as `tsv`, `json`, `md`, `trec` (trec_eval's per-query lines; `tot`),
    `ir-measures` or `jsonl` text."""
    return render_boards(board, fmt, per_query=per_query)


@dataclass(frozen=True)
class LeaderboardReport:
    """What `proctor leaderboard` prints: leaderboards (with intervals when asked) and, with `significance`
    settings, each one's paired tests (`comparisons`, in the same order, made when first read)."""

    formats: ClassVar[tuple[str, ...]] = Leaderboard.formats
    boards: list[Leaderboard]
    significance: SignificanceSettings | None = None
    per_query: bool = False

    @cached_property
    def comparisons(self) -> list[Comparison]:
        """Each leaderboard's paired tests (none without significance settings)."""
        settings = self.significance
        return [significance_of(board, settings) for board in self.boards] if settings is not None else []

    def to_json(self) -> JSON:
        """What `render("json")` writes, parsed."""
        return json.loads(self.render("json"))

    def render(self, fmt: LeaderboardFormat | None = None) -> str:
        """The leaderboards as text; with significance, JSON objects gain `significance` and each Markdown
        table is followed by its tests."""
        fmt = fmt or "tsv"
        if not self.comparisons or fmt not in self.formats:  # an unknown format: refused there
            return render_leaderboards(self.boards, fmt, per_query=self.per_query)
        from proctor.stats.report import as_dict, render_comparison

        pairs = list(zip(self.boards, self.comparisons, strict=True))
        if fmt == "md":
            return "\n".join(render_leaderboards(b, "md") + "\n" + render_comparison(c, "md",
                             b.description.get("measure_id", "")) for b, c in pairs)
        objects = [{**json.loads(render_leaderboards(b, "json", per_query=self.per_query)),
                    "significance": as_dict(c)} for b, c in pairs]
        return json.dumps(objects[0] if len(objects) == 1 else {"leaderboards": objects}, indent=2) + "\n"


@dataclass(frozen=True)
class MeasureListing:
    """The measures a leaderboard scores (`api.measures()`): one row per registered measure."""

    rows: tuple[dict, ...]
    formats = ("text", "json")

    def parse(self, text: str) -> BoardSpec:
        """The measure `text` names, with the parameters it writes (`spec.name`: its canonical string; `spec.rel`,
        `spec.cutoff`; `spec.measure.uses_relevance_level`); an unknown name, parameter or value is a UsageError
        naming the close matches."""
        return parse_any_measure(text)

    def to_json(self) -> list[dict]:
        """`[{name, kind, parameters, cutoff, description, citation}]`."""
        return [dict(row) for row in self.rows]

    def render(self, fmt: str | None = None) -> str:
        """One line per measure (`text`), or JSON."""
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2) + "\n"
        if fmt not in (None, "text"):
            raise UsageError(f"unknown format {fmt!r}: text or json")
        lines = [f"{r['example']}\t{r['kind']}\t{r['description']}" for r in self.rows]
        return "\n".join([*lines, f"and: {known_measures().split('; read from grades')[0]}"]) + "\n"


def measures() -> MeasureListing:
    """Every measure of the registry (`proctor.evaluate.measures`): its name, parameters (with defaults and the
    values they take), whether it takes a cutoff (`@k`), what it computes and where it comes from."""
    from proctor.evaluate.measures import MEASURES, SCORE_MEASURES
    from proctor.evaluate.measures.base import MISSING

    missing = {"name": "missing", "default": MISSING_OVER_LABELS, "choices": list(MISSING)}
    rows = [{"name": m.name, "kind": "qrels", "trec_eval_name": m.trec_name,
             "parameters": [*([{"name": "rel", "default": "min_grade"}] if m.uses_relevance_level else []), missing],
             "cutoff": m.accepts_cutoff, "example": f"{m.name}@20" if m.needs_cutoff else m.name,
             "description": m.description, "citation": m.citation} for m in MEASURES]
    rows += [{"name": m.name, "kind": m.kind, "aliases": list(m.aliases),
              "parameters": [{"name": p.name, "default": "min_grade" if p.grade else p.default,
                              **({"choices": list(p.choices)} if p.choices else {})} for p in m.params],
              "cutoff": m.accepts_cutoff, "example": _example(m), "description": m.description,
              "citation": m.citation} for m in SCORE_MEASURES]
    return MeasureListing(tuple(rows))


def _example(measure: ScoreMeasure) -> str:
    """The measure with its required parameters, as a user writes it."""
    shown = [f"{p.name}={3 if p.grade else p.default or p.choices[0]}" for p in measure.params
             if p.always and (p.grade or p.choices)]
    return f"{measure.name}({','.join(shown)})" + ("@20" if measure.accepts_cutoff else "")


def leaderboard_measures(options: LeaderboardOptions) -> list[str]:
    """The measure strings of `proctor leaderboard`'s flags: `--measure M` as given, `--metric cover --min-grade 3
    --budget 20` as `Cover(rel=3)@20` (`--normalize`/`--gold`: `NEXAM(...)`), `--metric nuggets --score S` as
    `Nuggets(score=S)`, `--metric citations --score S` as `Citations(score=S)`; flags a mode does not take are
    refused."""
    return flag_measures(options)


NO_INTERVALS = IntervalOptions()
"""Leaderboards without bootstrap intervals."""


def leaderboard_report(store: Store, options: LeaderboardOptions, *,
                       labels: LabelChoice = ANY_LABELS, intervals: IntervalOptions = NO_INTERVALS,
                       significance: SignificanceSettings | None = None, fmt: LeaderboardFormat = BOARD_FORMAT,
                       floor: Floor = DEFAULT_FLOOR) -> LeaderboardReport:
    """`proctor leaderboard`: the leaderboards of `options`' measures (`leaderboard_measures`), checked against
    the output they are written in (`fmt`, `options.per_query_scores`), with bootstrap `intervals` and paired
    `significance` tests when asked (made when the report's `comparisons` are first read: a `baseline` that names
    no system is refused then); render with `api.render`. `intervals.confidence`/`resamples` None: not given."""
    _check_output(fmt, options.per_query_scores, significance is not None, intervals)
    measures = leaderboard_measures(options)
    if intervals.intervals:
        confidence = IntervalOptions.confidence if intervals.confidence is None else intervals.confidence
        resamples = IntervalOptions.resamples if intervals.resamples is None else intervals.resamples
        check_settings(confidence, resamples)
    answers = options.metric in ("nuggets", "citations")
    boards = leaderboard(store, measures, labels=labels, min_grade=None if answers else options.min_grade,
                         judgments=options.judgments, runs=options.runs, missing=None if answers else options.missing,
                         floor=floor)
    if intervals.intervals:
        boards = [add_intervals(board, confidence=confidence, resamples=resamples, seed=intervals.seed)
                  for board in boards]
    return LeaderboardReport(boards, significance, options.per_query_scores)


def significance_of(board: Leaderboard, settings: SignificanceSettings) -> Comparison:
    """`significance` of a leaderboard with the given settings."""
    return significance(board, tests=settings.tests(), correction=settings.correction, alpha=settings.alpha,
                        baseline=settings.baseline, samples=settings.samples, seed=settings.seed)


def _check_output(fmt: str, per_query: bool, with_significance: bool, intervals: IntervalOptions) -> None:
    """Refuse output options that do not fit the format, before any work."""
    if per_query and fmt != "json":
        raise UsageError("{per_query} needs {fmt} json", params=("per_query", "fmt"))
    if with_significance and fmt not in ("json", "md"):
        raise UsageError("{significance} needs {fmt} json or md (or write {fmt} json {per_query} and run "
                         "`proctor compare FILE`)", params=("significance", "fmt", "per_query"))
    given = (intervals.confidence not in (None, IntervalOptions.confidence)
             or intervals.resamples not in (None, IntervalOptions.resamples))
    if not intervals.intervals and given:
        raise UsageError("{confidence} and {resamples} apply to {intervals} only",
                         params=("confidence", "resamples", "intervals"))
    if intervals.intervals and fmt not in ("tsv", "json", "md"):
        raise UsageError("{intervals} needs {fmt} tsv, json or md", params=("intervals", "fmt"))
