"""What every measure declares: names, parameters, whether it uses the relevance level, and its code."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MISSING_OVER_LABELS = "skip"
"""A query a system did not answer, for a measure over labels: skipped, as trec_eval without -c (`missing=zero`
counts it 0, as trec_eval -c; the measure's string then says so: `P(rel=3,missing=zero)@20`)."""
MISSING = ("zero", "skip")
"""The values of a measure's `missing` parameter."""

_NAME = re.compile(r"^(?P<base>[^(@]+)(?:\((?P<params>.*)\))?(?P<cut>@.+)?$")


def with_missing(name: str, missing: str | None) -> str:
    """A measure over labels' name with `missing=zero` among its parameters when that is how it was scored
    (`P(rel=3)@20` → `P(rel=3,missing=zero)@20`, `Bpref` → `Bpref(missing=zero)`); the default, skip, is not
    written."""
    if missing in (None, MISSING_OVER_LABELS):
        return name
    match = _NAME.match(name)
    if match is None:  # not an ir_measures-style name: nothing to add the parameter to
        return name
    params = [p for p in (match.group("params") or "").split(",") if p]
    return f"{match.group('base')}({','.join([*params, f'missing={missing}'])}){match.group('cut') or ''}"


@dataclass(frozen=True)
class Measure:
    """A trec_eval-compatible measure over one query.

    `compute(ranked, qrels, rel_level, cutoff)` gets the query's passage ids in trec_eval order, the
    query's `{passage_id: label}` and the parameters, and returns the query's value.
    """

    name: str
    """The ir_measures name (`P`, `nDCG`, `RR`, `AP`, `Rprec`)."""
    trec_name: str
    """The trec_eval name without cutoff (`P`, `ndcg_cut`, `recip_rank`, `map`, `Rprec`)."""
    description: str
    citation: str
    needs_cutoff: bool
    accepts_cutoff: bool
    uses_relevance_level: bool
    """False when trec_eval ignores the relevance level (graded gain measures such as nDCG)."""
    compute: Callable[[list[str], dict[str, int], int, int | None], float]
    trec_name_no_cutoff: str | None = None
    """trec_eval's name when no cutoff is given, where it differs (`ndcg`)."""


@dataclass(frozen=True)
class MeasureSpec:
    """A measure with its parameters bound: `P@20`, `nDCG@10`, `P(rel=3)@20`."""

    measure: Measure
    cutoff: int | None = None
    rel: int | None = None
    """A relevance level written into the name (`P(rel=3)@20`); otherwise the caller's τ is used."""
    missing: str | None = None
    """How a query the system did not answer counts, when written into the name (`P(missing=zero)@20`); otherwise
    the leaderboard's `missing` (default skip)."""

    kind = "qrels"
    """A measure over labels (see `ScoreSpec.kind` for the others)."""

    @property
    def name(self) -> str:
        """The ir_measures form, as shown in reports."""
        rel = f"(rel={self.rel})" if self.rel is not None else ""
        cut = f"@{self.cutoff}" if self.cutoff is not None else ""
        return with_missing(f"{self.measure.name}{rel}{cut}", self.missing)

    @property
    def trec_name(self) -> str:
        """The trec_eval form (`P.20`, `ndcg_cut.10`)."""
        if self.cutoff is None:
            return self.measure.trec_name_no_cutoff or self.measure.trec_name
        return f"{self.measure.trec_name}.{self.cutoff}"

    def per_query(self, ranked: list[str], qrels: dict[str, int], rel_level: int) -> float:
        """The measure's value for one query."""
        level = self.rel if self.rel is not None else rel_level
        return self.measure.compute(ranked, qrels, level, self.cutoff)

    def per_system(self, ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]], rel_level: int
                   ) -> dict[str, float]:
        """Per-query values for the queries in both the run and the qrels."""
        return {qid: self.per_query(ranked[qid], qrels[qid], rel_level) for qid in ranked if qid in qrels}


class QueryLabels(dict):
    """One query's `{passage_id: label}` that remembers what measures derive from the labels alone (R per
    relevance level, the ideal DCG per cutoff): a leaderboard scores many runs against the same labels, so
    these are computed once, not once per run. With `keep_gains` (sweeps: many leaderboards over the same
    runs) it also keeps each ranked list's labels (`gains`). Never changed once made."""

    __slots__ = ("memo", "keep_gains")

    def __init__(self, labels: dict[str, int], *, keep_gains: bool = False) -> None:
        super().__init__(labels)
        self.memo: dict[tuple, Any] = {}
        self.keep_gains = keep_gains


def remembered(qrels: dict[str, int], key: tuple, compute: Callable[[], Any]) -> Any:
    """`compute()`, kept in `qrels` under `key` when it is a `QueryLabels`."""
    memo = getattr(qrels, "memo", None)
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def gains(ranked: list[str], qrels: dict[str, int], depth: int | None = None) -> list[int]:
    """The labels of the first `depth` passages of `ranked` (all without a depth), 0 where unlabelled; may be
    longer than asked (slice it). A `QueryLabels` made with `keep_gains` keeps them per ranked list, extended
    as deeper ones are asked for: a sweep scores one run's list with many measures and thresholds, looking
    each label up once. The kept entry holds the list itself, so its id is never another list's."""
    n = len(ranked) if depth is None else min(depth, len(ranked))
    if not getattr(qrels, "keep_gains", False):
        return [qrels.get(pid, 0) for pid in ranked[:n]]
    memo = qrels.memo  # type: ignore[attr-defined]
    key = ("gains", id(ranked))
    kept = memo.get(key)
    if kept is None or kept[0] is not ranked:
        kept = memo[key] = (ranked, [])
    have: list[int] = kept[1]
    if len(have) < n:
        have.extend(qrels.get(pid, 0) for pid in ranked[len(have):n])
    return have


def relevant_count(qrels: dict[str, int], rel_level: int) -> int:
    """R: how many judged passages reach the relevance level."""
    return remembered(qrels, ("R", rel_level), lambda: sum(1 for label in qrels.values() if label >= rel_level))
