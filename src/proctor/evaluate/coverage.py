"""What a number rests on: one structure (`Coverage`) for every output that reports numbers made from labels.

It counts queries (scored; with grades; in the grade set's bank; with human judgments; in the store), pairs
(pool pairs = the distinct (query, passage) pairs the systems put within the depth a measure reads; graded
pairs = those of them that have a label), the systems whose own counts differ, and any further count a
stage adds (`counts`, e.g. unjudgeable or flagged passages: `Coverage.with_count`). Below a floor (fewer than
`min_queries` queries, or less than `min_graded` of the pool labelled) it carries warnings, which the command
line prints on standard error and reports show as a banner. Everything is counted from what the leaderboard
already holds in memory (labels, ranked lists) and from counts SQLite keeps on its keys: no grade is read
again.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import default
from proctor.outputs import format_of, json_text

DEFAULT_MIN_QUERIES: int = default(EvaluationOptions, "floor_queries")
DEFAULT_MIN_GRADED: float = default(EvaluationOptions, "floor_graded")


@dataclass(frozen=True)
class Floor:
    """Below these a number is flagged: fewer than `min_queries` queries, or under `min_graded` of the pool
    labelled."""

    min_queries: int = DEFAULT_MIN_QUERIES
    min_graded: float = DEFAULT_MIN_GRADED

    def check(self) -> Floor:
        """Refuse a negative query floor or a fraction outside [0, 1] (`proctor.options.numeric`)."""
        from proctor.options.numeric import check_numbers

        check_numbers({"floor_queries": self.min_queries, "floor_graded": self.min_graded})
        return self


DEFAULT_FLOOR = Floor()


@dataclass(frozen=True)
class Coverage:
    """What a number rests on; `as_dict` is the `coverage` object of every JSON output. Frozen: a stage that adds
    a count or a warning makes a new one (`with_count`, `judge`, `dataclasses.replace`)."""

    queries: dict[str, int | None]
    """`scored`, `with_grades`, `in_bank`, `with_judgments`, `in_store` (None: not applicable)."""
    pairs: dict[str, Any] = field(default_factory=dict)
    """`graded`, `pool`, `depth` (passages per ranking read; None: the whole ranking), `labelled_by`."""
    per_system: dict[str, dict[str, int]] = field(default_factory=dict)
    """Systems whose own counts differ from the whole: `{system: {queries, graded_pairs, pool_pairs}}`."""
    counts: dict[str, int] = field(default_factory=dict)
    """Further counts other stages add (`unjudgeable`, `flagged`, ...)."""
    floor: Floor = field(default_factory=Floor)
    warnings: list[str] = field(default_factory=list)

    def with_count(self, name: str, value: int, warning: str | None = None) -> Coverage:
        """A new coverage with a further count (and, when it matters, a warning)."""
        return replace(self, counts={**self.counts, name: value},
                       warnings=[*self.warnings, warning] if warning else self.warnings)

    def of(self) -> int | None:
        """The queries the number should rest on: the bank's topics, else the store's queries."""
        return self.queries.get("in_bank") if self.queries.get("in_bank") is not None else self.queries.get("in_store")

    def summary(self) -> str:
        """One line: `2 of 43 queries (with grades: 2, with judgments: 43); 40 of 860 pool pairs graded (4.7%)`."""
        q = self.queries
        parts = [f"{k.replace('_', ' ')}: {v}" for k, v in q.items() if k != "scored" and v is not None]
        text = (f"{q.get('scored')} of {self.of()} queries ({', '.join(parts)})" if self.of() is not None else
                f"{q.get('scored') if q.get('scored') is not None else 'an unknown number of'} queries")
        if self.pairs.get("pool"):
            within = f" ({self.pairs['pool_is']})" if self.pairs.get("pool_is") else ""
            text += (f"; {self.pairs['graded']} of {self.pairs['pool']} pool pairs{within} {self.pairs['labelled_by']} "
                     f"({self.pairs['graded'] / self.pairs['pool']:.1%})")
        return text + "".join(f"; {k}: {v}" for k, v in self.counts.items())

    def as_dict(self) -> dict[str, Any]:
        """The JSON `coverage` object."""
        pool, graded = self.pairs.get("pool"), self.pairs.get("graded")
        return {"queries": {**self.queries, "of": self.of()},
                "pairs": {**self.pairs, "fraction": graded / pool if pool else None},
                "per_system": self.per_system, "counts": self.counts,
                "floor": {"min_queries": self.floor.min_queries, "min_graded": self.floor.min_graded},
                "below_floor": bool(self.warnings), "warnings": self.warnings}

    formats: ClassVar[tuple[str, ...]] = ("text", "json", "md")

    def to_json(self) -> dict[str, Any]:
        """`as_dict()` as plain JSON data (what `render("json")` writes, parsed)."""
        return json.loads(json.dumps(self.as_dict()))

    def render(self, fmt: str | None = None) -> str:
        """`text` (`summary()`), `json` (`as_dict()`) or `md` (`banner()`)."""
        fmt = format_of(self, fmt)
        if fmt == "json":
            return json_text(self.as_dict())
        return "\n".join(self.banner()) if fmt == "md" else self.summary() + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Coverage:
        """A coverage read back from its JSON object (`as_dict`)."""
        floor = Floor(**data.get("floor", {}))
        pairs = {k: v for k, v in data.get("pairs", {}).items() if k != "fraction"}
        queries = {k: v for k, v in data.get("queries", {}).items() if k != "of"}
        return cls(queries, pairs, dict(data.get("per_system", {})), dict(data.get("counts", {})), floor,
                   list(data.get("warnings", [])))

    def banner(self) -> list[str]:
        """Markdown lines: a warning per floor missed, then what the number rests on."""
        from proctor.markdown import escape

        lines = []
        for warning in self.warnings:
            lines += [f"> **Warning:** {escape(warning)}", ""]
        lines.append(f"> Rests on: {escape(self.summary())}")
        if self.per_system:
            lines.append(f"> Systems that rest on less: {escape(self.systems_text())}")
        return lines + [""]

    def systems_text(self) -> str:
        """The systems whose own counts differ: `runB: 1 queries, 12 of 40 pairs graded`."""
        return "; ".join(f"{system}: {own['queries']} queries, {own['graded_pairs']} of {own['pool_pairs']} pairs "
                         f"{self.pairs.get('labelled_by', 'labelled')}" for system, own in self.per_system.items())

    def judge(self) -> Coverage:
        """A new coverage with the warnings of the floor (queries, graded fraction) added."""
        warnings = list(self.warnings)
        rests_on = min((v for v in (self.queries.get("scored"), self.queries.get("with_grades")) if v is not None),
                       default=None)
        if rests_on is not None and rests_on < self.floor.min_queries:
            of = f" of {self.of()}" if self.of() is not None else ""
            warnings.append(f"rests on {rests_on}{of} queries (fewer than {self.floor.min_queries})")
        pool, graded = self.pairs.get("pool"), self.pairs.get("graded")
        if pool and graded / pool < self.floor.min_graded:
            warnings.append(f"only {graded} of {pool} pool pairs {self.pairs['labelled_by']} "
                            f"({graded / pool:.1%}, under {self.floor.min_graded:.0%})")
        return replace(self, warnings=warnings)


def pool_counts(runs: Mapping[str, Mapping[str, list[str]]], labelled: Mapping[str, Collection[str]],
                depth: int | None) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """(`{graded, pool}` over all systems, `{system: {graded_pairs, pool_pairs}}`): the distinct (query,
    passage) pairs within `depth` of the rankings, and those with a label in `labelled` (`{query: passages}`).
    When every pool pair has a label, so has every system's: their own pairs are then only counted, not looked
    up (at 16× DL19 the look-ups would cost more than the leaderboard)."""
    queries = set().union(*(ranked.keys() for ranked in runs.values()))
    pool = {qid: set().union(*(ranked[qid][:depth] for ranked in runs.values() if qid in ranked)) for qid in queries}
    total = sum(len(p) for p in pool.values())
    empty: frozenset[str] = frozenset()
    hit = sum(sum(map(labelled.get(qid, empty).__contains__, p)) for qid, p in pool.items())
    per_system = {}
    for system, ranked in runs.items():
        mine = sum(min(len(passages), depth or len(passages)) for passages in ranked.values())
        graded = mine if hit == total else sum(sum(map(labelled.get(qid, empty).__contains__, passages[:depth]))
                                               for qid, passages in ranked.items())
        per_system[system] = {"graded_pairs": graded, "pool_pairs": mine}
    return {"graded": hit, "pool": total}, per_system


def leaderboard_coverage(board: Any, runs: Mapping[str, Mapping[str, list[str]]],
                         labelled: Mapping[str, Collection[str]],
                         queries: dict[str, int | None], *, depth: int | None, labelled_by: str,
                         floor: Floor = DEFAULT_FLOOR) -> Coverage:
    """The coverage of a leaderboard (`proctor.evaluate.leaderboard.Leaderboard`): its scored queries, the
    labels it used (`{query: {passage: label}}` or `{query: passages}`) against the pool of its runs."""
    scored = {q for e in board.entries for q in e.per_query}
    pairs, systems = pool_counts(runs, labelled, depth)
    overall = pairs["graded"] / pairs["pool"] if pairs["pool"] else 1.0
    differ = {}
    for e in board.entries:
        own = systems.get(e.system, {"graded_pairs": 0, "pool_pairs": 0})
        fraction = own["graded_pairs"] / own["pool_pairs"] if own["pool_pairs"] else 1.0
        if e.n_queries != len(scored) or (fraction < floor.min_graded <= overall):
            differ[e.system] = {"queries": e.n_queries, **own}
    pool_is = ("every passage the runs rank" if not depth else "the first passage of every run" if depth == 1
               else f"the first {depth} passages of every run")
    coverage = Coverage({"scored": len(scored), **queries},
                        {**pairs, "depth": depth, "pool_is": pool_is, "labelled_by": labelled_by}, differ, floor=floor)
    return coverage.judge()


def file_coverage(description: dict[str, Any], per_query: Mapping[str, Mapping[str, float]] | None,
                  systems: int, floor: Floor = DEFAULT_FLOOR) -> Coverage:
    """What a number computed from a leaderboard file (`proctor correlate`) rests on: its queries (counted from
    its per-query scores, else taken from the `coverage` its JSON carries; unknown for a plain TSV) and the
    systems compared."""
    own = description.get("coverage") if isinstance(description.get("coverage"), dict) else {}
    queries: dict[str, int | None] = {k: v for k, v in (own.get("queries") or {}).items() if k != "of"}
    if per_query:
        queries["scored"] = len({q for per in per_query.values() for q in per})
    queries.setdefault("scored", None)
    coverage = Coverage(queries, dict(own.get("pairs") or {}), counts={"systems": systems}, floor=floor)
    coverage = coverage.judge()  # the file's counts judged against this command's floor
    if queries["scored"] is None:
        coverage = replace(coverage, warnings=[*coverage.warnings, "the leaderboard file does not say how many "
                                               "queries its scores rest on (write it with `proctor leaderboard "
                                               "--format json`)"])
    return coverage
