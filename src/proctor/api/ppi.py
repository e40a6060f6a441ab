"""Prediction-powered leaderboards (`proctor leaderboard --human-qrels ...`) and their validation
(`proctor calibrate --ppi`): what the humans would have scored on all topics, from the judge's labels corrected on
a few human-judged topics, with intervals (docs/trust.md, "Prediction-powered leaderboards")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from proctor.api.labels import ANY_LABELS, LabelChoice, grade_set_of
from proctor.api.leaderboards import leaderboards
from proctor.api.modes import Missing
from proctor.api.results import Report
from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor
from proctor.evaluate.leaderboard import Leaderboard, measure_leaderboard
from proctor.evaluate.measures import AnySpec, ExternalSpec, MeasureSpec, parse_measure
from proctor.evaluate.sources import load_runs
from proctor.options.calibration import CalibrationOptions, PPIOptions
from proctor.store import Store


class PPILeaderboard(Report):
    """What `proctor leaderboard --human-qrels` prints: one prediction-powered leaderboard (or several, under
    `leaderboards`); `judge_boards` are the judge-only leaderboards it corrects (their coverage and notes)."""

    formats: ClassVar[tuple[str, ...]] = ("tsv", "json", "md")
    attributes: ClassVar[tuple[str, ...]] = ("judge_boards",)
    judge_boards: tuple[Leaderboard, ...] = ()

    def boards(self) -> list[dict[str, Any]]:
        """Every leaderboard's object."""
        return list(self["leaderboards"]) if "leaderboards" in self else [dict(self)]  # type: ignore[arg-type]

    def as_text(self, fmt: str) -> str:
        """TSV (one row per system and measure) or Markdown (one table per measure)."""
        from proctor.trust.ppi_board import markdown, tsv

        return tsv(self.boards()) if fmt == "tsv" else markdown(self.boards())


def check_ppi_options(options: PPIOptions, conflicting: Mapping[str, object] | None = None) -> None:
    """Refuse options that do not go with `human_qrels`, before any work (the model's numbers were checked when it
    was built)."""
    given = [name for name, value in (conflicting or {}).items() if value]
    if given:
        raise UsageError(f"{{human_qrels}} (a prediction-powered leaderboard with its own intervals) takes no "
                         f"{', '.join('{' + g + '}' for g in given)}", params=("human_qrels", *given))


def per_topic_spec(measure: str) -> AnySpec:
    """The measure, refused unless a system's score is the mean of its per-topic values and the humans' relevance
    level can be set apart from the judge's (`judged_relevant`)."""
    spec = parse_measure(measure)
    if spec.rel is not None:
        raise UsageError(f"{{measure}} {measure}: with {{human_qrels}} give the judge's threshold as {{min_grade}} and "
                         "the humans' as {judged_relevant}, not rel= in the name",
                         params=("measure", "human_qrels", "min_grade", "judged_relevant"))
    if isinstance(spec, ExternalSpec) and type(spec.ir.aggregator()).__name__ != "MeanAgg":  # not a mean
        raise UsageError(f"{{measure}} {measure}: its score over topics is not the mean of per-topic values "
                         "(ir_measures aggregates it otherwise), so it has no prediction-powered estimate",
                         params=("measure",))
    return spec


def ppi(store: Store, measures: Sequence[str], labels: LabelChoice = ANY_LABELS, options: PPIOptions | None = None,
        *, min_grade: int | None = None, runs: Sequence[str] | None = None, missing: Missing | None = None,
        floor: Floor = DEFAULT_FLOOR, conflicting: Mapping[str, object] | None = None,
        **settings: Any) -> PPILeaderboard:
    """Per measure, every system's prediction-powered estimate of the humans' score over all topics: the judge's
    labels (the grade set of `labels`, threshold `min_grade`) on every topic, corrected by human minus judge on the
    judged topics (`options.human_qrels`: official, reviewers, official+reviewers or a qrels file; humans'
    relevance level `judged_relevant`); `human_topics`: a number to draw (seeded by `seed`), topic ids, or None
    for every topic the humans judged. `settings` are `PPIOptions` fields replacing those of `options` (a
    `confidence` or `human_qrels` of None: the default). `conflicting` (name -> value) names options of the
    plain leaderboard that do not apply. The runs (`runs`, else the store's) are read once."""
    from proctor.trust.calibration import human_judgments
    from proctor.trust.ppi_board import board, choose_topics, parse_topics

    chosen = _defaults(replace(options or PPIOptions(), **settings))
    check_ppi_options(chosen, conflicting)
    wanted = parse_topics(chosen.human_topics)
    if not measures:
        raise UsageError("{human_qrels} needs {measure} M (e.g. P@20 or nDCG@10)", params=("human_qrels", "measure"))
    specs = [per_topic_spec(m) for m in measures]
    ranked = load_runs(store, runs)
    judge = leaderboards(store, measures=measures, min_grade=min_grade, labels=labels, runs=runs, missing=missing,
                         floor=floor, ranked=ranked)
    qrels, source = human_judgments(store, chosen.human_qrels)
    topics = {t for b in judge for e in b.entries for t in e.per_query}
    judged = choose_topics([t for t in qrels if t in topics], wanted, chosen.seed)
    out = []
    for spec, judge_board in zip(specs, judge, strict=True):
        human = measure_leaderboard(ranked, {t: qrels[t] for t in judged}, _unbound(spec), chosen.judged_relevant,
                                    missing=missing or "skip")
        description = {**judge_board.description, "judge_method": judge_board.description.get("method"),
                       "human_qrels": chosen.human_qrels, "human_judgments": source,
                       "judged_relevant": chosen.judged_relevant, "seed": chosen.seed,
                       "human_topics_drawn": isinstance(wanted, int)}
        made = board({e.system: e.per_query for e in judge_board.entries},
                     {e.system: e.per_query for e in human.entries}, judged, chosen.confidence, description)
        made["measure_id"], made["labels_id"] = judge_board.description.get("measure_id"), _labels_id(judge_board)
        if judge_board.coverage is not None:
            made["coverage"] = judge_board.coverage.as_dict()
        made["notes"] = [*judge_board.notes, *made["notes"]]
        out.append(made)
    return PPILeaderboard(out[0] if len(out) == 1 else {"leaderboards": out}, judge_boards=tuple(judge))


ppi_leaderboard = ppi
"""The former name of `ppi`."""


def _defaults(options: PPIOptions) -> PPIOptions:
    """The options with None (a command's "not given") replaced by the model's defaults."""
    given = {name: getattr(PPIOptions, name) for name in ("human_qrels", "confidence")
             if getattr(options, name) is None}
    return replace(options, **given)


def _unbound(spec: AnySpec) -> AnySpec:
    """The measure the humans are scored with (the same; its level is `judged_relevant`)."""
    return MeasureSpec(spec.measure, spec.cutoff, None) if isinstance(spec, MeasureSpec) else spec


def _labels_id(board: Leaderboard) -> str:
    from proctor.evaluate.render import labels_of

    return labels_of(board)


class PPICalibration(Report):
    """`proctor calibrate --ppi`: per budget, coverage and width of the prediction-powered intervals over repeated
    draws of judged topics, beside the human-only interval and the judge-only error (`curve_ppi`)."""

    formats: ClassVar[tuple[str, ...]] = ("json", "tsv", "md")
    attributes: ClassVar[tuple[str, ...]] = ("plotted",)
    plotted: Path | None = None

    def as_text(self, fmt: str) -> str:
        """One row per budget (TSV) or the table with its caption (Markdown)."""
        from proctor.trust.ppi_curve import markdown, tsv

        return tsv(self) if fmt == "tsv" else markdown(self)


def check_ppi_calibration(options: CalibrationOptions) -> None:
    """`calibrate --ppi`'s measure checked before the store is opened (the model checked its numbers when built,
    the request checks the others)."""
    per_topic_spec(options.measure)


def ppi_calibration(store: Store, grade_set: str | None, options: CalibrationOptions) -> PPICalibration:
    """The validation of prediction-powered leaderboards (`calibrate(..., ppi=True)`, options checked, `budgets`
    a sorted list): per budget, `repeats` draws of that many human-judged topics; empirical coverage of the
    humans' all-topic scores and median widths, beside human-only and judge-only (`curve_ppi`)."""
    from proctor.gradesets.resolve import describe
    from proctor.trust.calibration import human_judgments
    from proctor.trust.ppi_board import method
    from proctor.trust.ppi_curve import curve

    wanted, repeats, seed, confidence = list(options.budgets), options.repeats, options.seed, options.confidence
    spec = per_topic_spec(options.measure)
    labels = LabelChoice(grade_set=grade_set)
    ranked = load_runs(store, None)
    judge_board = leaderboards(store, measures=[options.measure], min_grade=options.min_grade, labels=labels,
                               ranked=ranked)[0]
    judgments, source = human_judgments(store, options.qrels)
    judge = {e.system: {t: v for t, v in e.per_query.items() if t in judgments} for e in judge_board.entries}
    topics = sorted({t for per in judge.values() for t in per})
    too_many = [b for b in wanted if b > len(topics)]
    if too_many:
        raise UsageError(f"{{budgets}} {too_many[0]}: only {len(topics)} topics have judge scores and human "
                         "judgments", params=("budgets",))
    human_board = measure_leaderboard(ranked, {t: judgments[t] for t in topics}, _unbound(spec),
                                      options.judged_relevant)
    human = {e.system: e.per_query for e in human_board.entries}
    points = curve(judge, human, wanted, repeats, seed, confidence)
    return PPICalibration({
        "grade_set": describe(store, grade_set_of(store, labels)), "judgments": source, "qrels": options.qrels,
        "measure_id": judge_board.description.get("measure_id"), "judged_relevant": options.judged_relevant,
        "confidence": confidence, "repeats": repeats, "seed": seed, "n_topics": len(topics),
        "systems": len([s for s in judge if len(human.get(s, {})) >= 2]), "curve_ppi": points,
        "method": (f"per budget N, {repeats} draws (numpy default_rng({seed}).choice, without replacement) of N "
                   f"of the {len(topics)} topics with judge scores and human judgments; each draw makes every "
                   "system's interval as `leaderboard --human-qrels` does (" + method(None, len(topics), confidence)
                   + f"; from {_tune_from()} judged topics on the weight is fitted) and checks it against the "
                   "system's mean human score over all the topics; human-only: t interval on the same judged topics; "
                   "judge-only error: |judge score - human all-topic score|; taus: Kendall tau-b (scipy) of each "
                   "leaderboard with the humans' all-topic leaderboard; coverage_ppi_worst_system: the smallest "
                   "coverage of one system over the draws")})


def _tune_from() -> int:
    from proctor.trust.ppi import TUNE_FROM

    return TUNE_FROM
