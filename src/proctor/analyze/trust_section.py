"""The trust parts of `proctor analyze`: what each grade set's numbers rest on (a banner when below the floor)
and the plotted leaderboard's scores with their bootstrap intervals (a plot and a table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.analyze import plots
from proctor.analyze.html_report import Figure, Section
from proctor.analyze.tables import Table
from proctor.evaluate.coverage import Coverage, Floor
from proctor.evaluate.intervals import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, bootstrap
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.stored_coverage import labels_coverage
from proctor.markdown import escape
from proctor.records import GradeSet
from proctor.store import Store

INTERVAL_SEED = 0


def grade_set_coverage(store: Store, grade_set: GradeSet, labels: dict, floor: Floor) -> Coverage:
    """What a grade set's labels rest on (queries graded; the runs' ranked passages that have a grade)."""
    return labels_coverage(store, grade_set, labels, floor=floor)


def coverage_cells(coverage: Coverage | None) -> list[str]:
    """`queries graded` and `pool pairs graded` cells of the grade-set table (`-` without labels)."""
    if coverage is None:
        return ["-", "-"]
    pairs = coverage.pairs
    share = f" ({pairs['graded'] / pairs['pool']:.0%})" if pairs.get("pool") else ""
    return [f"{coverage.queries.get('with_grades')} of {coverage.of()}", f"{pairs.get('graded')} of "
            f"{pairs.get('pool')}{share}"]


def warnings_section(coverages: dict[str, Coverage], names: dict[str, str]) -> Section | None:
    """A banner section listing every grade set below the floor (None when none is)."""
    lines = [f"{names[gid]}: {w}" for gid, c in coverages.items() for w in c.warnings]
    if not lines:
        return None
    markdown = "".join(f"> **Warning:** {escape(line)}\n\n" for line in lines)
    return Section("Below the floor: numbers that rest on little", markdown, notes=lines)


def intervals_part(out: Path, slug: str, name: str, grade_set: GradeSet, runs: Any, labels: dict,
                   measure: str, tau: int) -> tuple[Figure, Section]:
    """The plotted EXAM-Qrels leaderboard with its bootstrap score and rank intervals: a plot and a table."""
    spec = parse_measure(measure)
    board = measure_leaderboard(runs, labels, spec, tau)
    order = [e.system for e in board.entries]
    result = bootstrap({e.system: e.per_query for e in board.entries}, order, confidence=DEFAULT_CONFIDENCE,
                       resamples=DEFAULT_RESAMPLES, seed=INTERVAL_SEED)
    how = (f"{spec.name} at τ = {tau} (--plot-measure, --plot-tau); {DEFAULT_CONFIDENCE:.0%} percentile bootstrap "
           f"over {result.topics} topics, {DEFAULT_RESAMPLES} resamples, seed {INTERVAL_SEED}; "
           f"{len(result.overlapping)} of {len(order) * (len(order) - 1) // 2} pairs of systems have overlapping "
           "intervals (the bootstrap cannot separate them).")
    path = out / "plots" / f"intervals_{slug}.png"
    rows = [(e.system, e.score, result.by_system[e.system].ci_low, result.by_system[e.system].ci_high)
            for e in board.entries]
    plots.intervals(path, rows, f"{spec.name} (τ = {tau}) with {DEFAULT_CONFIDENCE:.0%} bootstrap intervals — {name}")
    intervals = [(e, result.by_system[e.system]) for e in board.entries]
    table = Table(["rank", "system", "score", "ci_low", "ci_high", "rank_low", "rank_high"],
                  [[str(i), e.system, f"{e.score:.4f}", f"{iv.ci_low:.4f}", f"{iv.ci_high:.4f}", str(iv.rank_low),
                    str(iv.rank_high)] for i, (e, iv) in enumerate(intervals, start=1)], caption=f"{name}: {how}")
    return (Figure(f"Scores with bootstrap intervals — {name}", path, how),
            Section(f"Intervals — {name}", table.markdown(), [(None, table)]))
