"""Significance between the systems of a leaderboard: for every pair (or every system against a baseline),
a paired t-test and a paired randomization test over the queries both systems were scored on, each family
of p-values corrected for multiple comparisons (Holm by default)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from proctor.options.significance import SignificanceOptions
from proctor.outputs import format_of
from proctor.records import frozen
from proctor.stats.correction import adjust
from proctor.stats.randomization import randomization_test, sign_matrix
from proctor.stats.ttest import paired_t_test


@dataclass(frozen=True)
class Comparison:
    """Every compared pair, and how the comparison was made (frozen: `dataclasses.replace` makes another);
    `render(fmt)` writes it as `tsv`, `json` or `md`, `to_json()` is its JSON object."""

    formats: ClassVar[tuple[str, ...]] = ("tsv", "json", "md")
    pairs: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("pairs", "settings", "notes"):
            object.__setattr__(self, name, frozen(getattr(self, name)))

    def to_json(self) -> dict[str, Any]:
        """Settings, notes and pairs (NaN as null): what `render("json")` writes, parsed."""
        from proctor.stats.report import as_dict

        return json.loads(json.dumps(as_dict(self)))

    def render(self, fmt: str | None = None, *, title: str = "") -> str:
        """The pairs as `tsv` (default), `json` or `md` (under `title`)."""
        from proctor.stats.report import render_comparison

        return render_comparison(self, format_of(self, fmt), title=title)


def compare_systems(per_query: dict[str, dict[str, float]], order: list[str] | None = None,
                    options: SignificanceOptions | None = None) -> Comparison:
    """Pairs `(a, b)` in leaderboard order (a ranked above b), or (baseline, other) with `options.baseline`, by
    the options' tests, correction, level and randomization draws."""
    systems = order or sorted(per_query)
    options = options or SignificanceOptions()
    baseline, tests, correction = options.baseline, options.tests(), options.correction
    alpha, samples, seed = options.alpha, options.samples, options.seed
    if baseline is not None:
        pairs = [(baseline, s) for s in systems if s != baseline]
    else:
        pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    draws: dict[int, tuple[np.ndarray, bool]] = {}
    rows, notes = [], []
    for a, b in pairs:
        queries = sorted(set(per_query[a]) & set(per_query[b]))
        if len(queries) < len(set(per_query[a]) | set(per_query[b])):
            notes.append(f"{a} vs {b}: paired over the {len(queries)} queries both were scored on")
        xs, ys = [per_query[a][q] for q in queries], [per_query[b][q] for q in queries]
        row: dict[str, Any] = {"a": a, "b": b, "n_queries": len(queries), "mean_a": _mean(xs), "mean_b": _mean(ys)}
        row["difference"] = row["mean_a"] - row["mean_b"]
        if "t" in tests:
            result = paired_t_test(xs, ys)
            row["t"], row["p_t"] = result.statistic, result.p_value
        if "randomization" in tests:
            if len(queries) not in draws:
                draws[len(queries)] = sign_matrix(len(queries), samples, seed)
            signs, exact = draws[len(queries)]
            row["p_randomization"] = randomization_test(xs, ys, signs=signs, exact=exact).p_value
        rows.append(row)
    for test in tests:
        key = f"p_{test}"
        for row, adjusted in zip(rows, adjust([r[key] for r in rows], correction), strict=True):
            row[f"{key}_adjusted"] = adjusted
            row[f"significant_{test}"] = bool(not math.isnan(adjusted) and adjusted < alpha)
    settings = {"tests": list(tests), "correction": correction, "alpha": alpha, "pairs": len(rows),
                "baseline": baseline, "randomization_samples": samples, "seed": seed,
                "randomization_exact": sorted(n for n, (_, exact) in draws.items() if exact) or None}
    return Comparison(rows, settings, notes)


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan
