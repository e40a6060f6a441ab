"""A comparison as text: TSV (one row per pair), JSON (settings, notes, pairs) or Markdown."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from proctor.markdown import escape

COLUMNS = ("a", "b", "n_queries", "mean_a", "mean_b", "difference", "t", "p_t", "p_t_adjusted", "significant_t",
           "p_randomization", "p_randomization_adjusted", "significant_randomization")


class Comparison(Protocol):
    """What is written: a `proctor.stats.pairs.Comparison` (which renders itself with these functions)."""

    formats: ClassVar[tuple[str, ...]]
    pairs: Sequence[Mapping[str, Any]]
    settings: Mapping[str, Any]
    notes: Sequence[str]


def as_dict(comparison: Comparison) -> dict[str, Any]:
    """Settings, notes and pairs (NaN as null)."""
    pairs = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
             for row in comparison.pairs]
    return {**comparison.settings, "notes": comparison.notes, "comparisons": pairs}


def render_comparison(comparison: Comparison, fmt: str, title: str) -> str:
    """`tsv`, `json` or `md` text (Markdown under `title`, the file or measure compared; empty: none)."""
    if fmt == "json":
        return json.dumps(as_dict(comparison), indent=2) + "\n"
    columns = [c for c in COLUMNS if any(c in row for row in comparison.pairs)] or list(COLUMNS[:6])
    if fmt == "tsv":  # like leaderboard TSVs: trailing columns name the measure and the labels, when known
        source = [comparison.settings[k] for k in ("measure", "labels") if k in comparison.settings]
        lines = ["\t".join(columns + ["measure", "labels"][:len(source)])]
        lines += ["\t".join([_cell(row.get(c)) for c in columns] + source) for row in comparison.pairs]
        return "\n".join(lines) + "\n"
    s = comparison.settings
    how = (f"{', '.join(s['tests'])}; correction {s['correction']}, α = {s['alpha']}, {s['pairs']} pairs"
           + (f", randomization {s['randomization_samples']} samples, seed {s['seed']}"
              if "randomization" in s["tests"] else ""))
    if "measure" in s:
        how = f"{s['measure']}, labels {s['labels']}; " + how
    lines = [f"**Significance**{' — ' + escape(title) if title else ''} ({escape(how)})", ""]
    lines += [f"> {escape(n)}" for n in comparison.notes] + ([""] if comparison.notes else [])
    lines += ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(escape(_cell(row.get(c))) for c in columns) + " |" for row in comparison.pairs]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e-4 and value != 0 else f"{value:.6f}"
    return str(value)
