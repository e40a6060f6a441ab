"""Leaderboards: per-query scores of every system → mean, standard error, number of queries, sorted.

`measure_leaderboard` scores ranked runs against qrels (EXAM-Qrels or human judgments) with a measure of
`proctor.evaluate.measures`; `cover_leaderboard` computes EXAM-Cover. Both return a `Leaderboard` that says
how it was made.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from proctor.errors import UsageError
from proctor.evaluate.cover import CoverTable, cover_per_query, covered_counts, n_exam, reference_cover
from proctor.evaluate.coverage import Coverage
from proctor.evaluate.intervals import Intervals
from proctor.evaluate.measures import AnySpec, ExternalSpec, MeasureSpec
from proctor.evaluate.measures.base import MISSING_OVER_LABELS, QueryLabels, with_missing
from proctor.io.runs import Ranked
from proctor.options.evaluation import EvaluationOptions


@dataclass(frozen=True)
class Entry:
    """One system's row."""

    system: str
    score: float
    stderr: float
    n_queries: int
    per_query: dict[str, float]


@dataclass(frozen=True)
class Leaderboard:
    """Systems sorted by score (best first) and a description of how the scores were made. Frozen: a stage that
    adds to it (coverage, intervals, notes) makes a new one with `dataclasses.replace`."""

    entries: list[Entry]
    description: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    kind: str = "qrels"
    """`qrels` (a measure over relevance labels) or `cover` (EXAM-Cover / n-EXAM)."""
    references: list[Entry] = field(default_factory=list)
    """Reference rows (`_overall_`: what the whole pool covers), shown but never ranked or correlated."""
    coverage: Coverage | None = None
    """What the scores rest on (queries and pairs with labels), given by `proctor.api`."""
    intervals: Intervals | None = None
    """Bootstrap score and rank intervals per system (`proctor.api.commands.add_intervals`)."""

    formats: ClassVar[tuple[str, ...]] = ("tsv", "json", "md", "trec", "tot", "ir-measures", "jsonl")
    """The formats `render` writes (`proctor leaderboard --format`; `trec` and `tot` are the same), the default
    first."""

    def scores(self) -> dict[str, float]:
        """`{system: score}`."""
        return {e.system: e.score for e in self.entries}

    def to_json(self, *, per_query: bool = False) -> dict[str, Any]:
        """The description, notes, coverage and systems (with their per-query scores with `per_query`): what
        `render("json")` writes, parsed."""
        from proctor.evaluate.render import to_json

        return json.loads(to_json(self, per_query=per_query))

    def render(self, fmt: str | None = None, *, per_query: bool = False) -> str:
        """The leaderboard as `tsv` (default), `json` (with `per_query` scores), `md`, `trec` (= `tot`),
        `ir-measures` or `jsonl` text (`proctor.evaluate.render`)."""
        from proctor.evaluate.render import render_boards

        return render_boards(self, fmt or "tsv", per_query=per_query)


def summarize(system: str, per_query: dict[str, float]) -> Entry:
    """Mean over queries and its standard error (sample standard deviation / sqrt(n); NaN below 2 queries)."""
    n = len(per_query)
    if n == 0:
        return Entry(system, 0.0, math.nan, 0, {})
    values = list(per_query.values())
    mean = math.fsum(values) / n
    stderr = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else math.nan
    return Entry(system, mean, stderr, n, dict(sorted(per_query.items())))


def ranked_entries(per_system: dict[str, dict[str, float]], notes: list[str] | None = None) -> list[Entry]:
    """Entries sorted by score (best first), ties by system name. A system with no evaluable query has no
    score: it is left out, and `notes` says so."""
    empty = sorted(system for system, per_query in per_system.items() if not per_query)
    if empty and notes is not None:
        notes.append(f"left out, no evaluable query (none in both the run and the labels): {', '.join(empty)}")
    entries = [summarize(system, per_query) for system, per_query in per_system.items() if per_query]
    return sorted(entries, key=lambda e: (-e.score, e.system))


def measure_per_query(
    ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]], spec: AnySpec, rel_level: int,
    missing: str = MISSING_OVER_LABELS,
) -> dict[str, float]:
    """One system's per-query values: queries in both run and qrels (trec_eval), plus 0 for queries in
    the qrels that the run lacks when `missing="zero"` (trec_eval -c)."""
    out = spec.per_system(ranked, qrels, rel_level)
    if missing == "zero":
        for qid in qrels:
            out.setdefault(qid, 0.0)
    return out


def _per_system(runs: Ranked, labels: dict[str, QueryLabels], spec: AnySpec, level: int, missing: str
                ) -> dict[str, dict[str, float]]:
    """`measure_per_query` of every run; in-process measures query by query (one query's labels stay in the
    processor's cache while every run reads them: twice as fast at TREC scale as run by run)."""
    if not isinstance(spec, MeasureSpec):
        return {run: measure_per_query(r, labels, spec, level, missing) for run, r in runs.items()}
    out: dict[str, dict[str, float]] = {run: {} for run in runs}
    for qid, query_labels in labels.items():
        for run, ranked in runs.items():
            passages = ranked.get(qid)
            if passages is not None:
                out[run][qid] = spec.per_query(passages, query_labels, level)
            elif missing == "zero":
                out[run][qid] = 0.0
    return out


def measure_leaderboard(
    runs: Ranked, qrels: dict[str, dict[str, int]], spec: AnySpec, rel_level: int | None = None,
    *, missing: str = MISSING_OVER_LABELS, description: dict[str, Any] | None = None,
) -> Leaderboard:
    """A leaderboard of `spec` over all runs; binary measures count labels >= the relevance level
    (the one in the measure's name, else `rel_level`, else 1); a query a run lacks is skipped or counts 0
    (`missing`; a `missing=` the measure's name writes must agree)."""
    if spec.missing not in (None, missing):
        raise UsageError(f"{spec.name} names missing={spec.missing} but {{missing}} is {missing}", params=("missing",))
    level = spec.rel if spec.rel is not None else (rel_level if rel_level is not None else 1)
    labels = {qid: per if isinstance(per, QueryLabels) else QueryLabels(per)  # R counted once per query
              for qid, per in qrels.items()}
    per_system = _per_system(runs, labels, spec, level, missing)
    notes = []
    if not spec.measure.uses_relevance_level and rel_level is not None:
        how = ("takes no relevance level" if isinstance(spec, ExternalSpec)
               else "uses the graded labels as gains and ignores the relevance level (as trec_eval does)")
        notes.append(f"{spec.name} {how}; --min-grade {rel_level} has no effect on it")
    printed = spec.trec_name if isinstance(spec, ExternalSpec) else spec.trec_name.replace(".", "_")
    desc = {"measure": spec.name, "trec_eval_name": spec.trec_name, "trec_eval_output": printed,
            "measure_id": measure_id(spec, level, missing),
            **({"computed_by": f"ir_measures/{spec.measure.provider}"} if isinstance(spec, ExternalSpec) else {}),
            "relevance_level": level if spec.measure.uses_relevance_level else None,
            "missing": missing, **(description or {})}
    return Leaderboard(ranked_entries(per_system, notes), desc, notes, "qrels")


def measure_id(spec: AnySpec, level: int, missing: str = MISSING_OVER_LABELS) -> str:
    """The measure as one ir_measures-style name with the relevance level it was scored at and, when a query a
    run lacks counted 0 rather than being skipped, `missing=zero`: `P(rel=3)@20`, `P(rel=3,missing=zero)@20` (the
    registry parses it back: the same string, the same numbers)."""
    if isinstance(spec, ExternalSpec):
        return with_missing(spec.bound_name(level), missing)
    return MeasureSpec(spec.measure, spec.cutoff, level if spec.measure.uses_relevance_level else None,
                       missing).name


def cover_id(tau: int, budget: int, missing: str, normalize: str | None, gold: str | None) -> str:
    """EXAM-Cover's measure as the registry prints it: `Cover(rel=3)@20`, `NEXAM(rel=3,norm=pool)@20`."""
    from proctor.evaluate.measures.scores import COVER, NEXAM, ScoreSpec

    values: list[tuple[str, object]] = [("rel", tau)]
    values += [("norm", "gold"), ("gold", gold)] if gold else [("norm", normalize)] if normalize else []
    return ScoreSpec(NEXAM if (normalize or gold) else COVER, (*values, ("missing", missing)), budget).name


def cover_leaderboard(
    runs: Ranked, table: CoverTable, *, budget: int = EvaluationOptions.budget,
    missing: str = EvaluationOptions.missing, normalize: str | None = None,
    gold: str | None = None, description: dict[str, Any] | None = None, notes: list[str] | None = None,
) -> Leaderboard:
    """An EXAM-Cover (or n-EXAM, normalised by the pool or by the `gold` run) leaderboard over all runs."""
    per_system: dict[str, dict[str, float]] = {}
    left_out: set[str] = set()
    if gold is not None:
        normalize = "gold"
    exact: dict[str, float | None] = {}
    counts = covered_counts(runs, table, budget)  # every system at once: far faster than system by system
    for run, ranked in runs.items():
        per_system[run], skipped = cover_per_query(ranked, table, budget=budget, missing=missing,
                                                   normalize=normalize, gold=runs.get(gold) if gold else None,
                                                   counts=counts[run])
        left_out.update(skipped)
        if normalize in ("pool", "gold"):
            exact[run] = n_exam(ranked, table, budget=budget, missing=missing, normalize=normalize,
                                gold=runs.get(gold) if gold else None, counts=counts[run])
    treated = "counted as 0" if missing == "zero" else "skipped"
    notes = [*(notes or []), f"EXAM-Cover: queries a system did not answer are {treated} (--missing {missing})"]
    if normalize in ("pool", "gold"):
        notes.append("n-EXAM = sum over queries of the system's cover / sum of the "
                     + (f"gold run {gold}'s" if gold else "whole pool's") + " cover (001 §3.1.3): EXAM's order")
    if left_out:
        by = f"gold run {gold}" if gold else "pooled passage"
        treated = "counted as 0 (as exam_pp's n-exam)" if normalize == "pool-per-query" else "left out"
        notes.append(f"n-EXAM: {len(left_out)} queries {treated} because no {by} answers any of their questions "
                     f"at grade >= {table.tau}")
    desc = {"metric": "n-EXAM-Cover" if normalize else "EXAM-Cover",
            "measure_id": cover_id(table.tau, budget, missing, normalize, gold), "min_grade": table.tau,
            "budget": budget, "missing": missing, "normalize": normalize, "gold_run": gold, **(description or {})}
    references = [] if normalize else [summarize("_overall_", reference_cover(table, budget=budget))]
    entries = ranked_entries(per_system, notes)
    if exact:  # the ratio of sums computed exactly, not as the mean of rounded per-query values
        entries = sorted((replace(e, score=exact[e.system]) if exact.get(e.system) is not None else e
                          for e in entries), key=lambda e: (-e.score, e.system))
    return Leaderboard(entries, desc, notes, "cover", references)
