"""Significance (`compare`): paired t-tests and randomization tests between the systems of a leaderboard (in
memory, or a file with per-query scores: `proctor compare`), corrected for multiple comparisons."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, get_args

from proctor.api.modes import TableFormat
from proctor.api.results import JSON
from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard
from proctor.evaluate.leaderboard_files import read_leaderboard
from proctor.options.significance import SignificanceOptions

if TYPE_CHECKING:  # numpy (the randomization test) loads only when a comparison is made
    from proctor.stats.pairs import Comparison

SignificanceSettings = SignificanceOptions
"""The former name of `SignificanceOptions` (`leaderboard_report(significance=...)` takes either)."""


@dataclass(frozen=True)
class ComparisonReport:
    """What `compare` returns and `proctor compare` prints: the comparison of a leaderboard's systems, titled by
    its file (empty for a leaderboard in memory)."""

    formats: ClassVar[tuple[str, ...]] = get_args(TableFormat)
    comparison: Comparison
    title: str = ""

    def to_json(self) -> JSON:
        """The comparison's settings, notes and pairs: what `render("json")` writes, parsed."""
        return self.comparison.to_json()

    def render(self, fmt: TableFormat | None = None) -> str:
        """The pairs as `tsv` (default), `json` or `md` (Markdown under the title)."""
        return self.comparison.render(fmt, title=self.title)


def compare(leaderboard: Leaderboard | str | Path, options: SignificanceOptions | None = None,
            **settings: Any) -> ComparisonReport:
    """Paired t-tests and randomization tests between the systems of a leaderboard (in memory, or a file with
    per-query scores read for `options.measure` when it holds several): every pair, or each system against
    `options.baseline`, each test's p-values corrected for multiple comparisons. `settings` are
    `SignificanceOptions` fields replacing those of `options` (`compare(board, test="t", samples=1000)`)."""
    chosen = replace(options or SignificanceOptions(), **settings)
    if isinstance(leaderboard, Leaderboard):
        if chosen.measure is not None:
            raise UsageError("{measure} reads a leaderboard file; a leaderboard in memory has its one measure",
                             params=("measure",))
        return ComparisonReport(significance(leaderboard, chosen))
    board = read_leaderboard(leaderboard, chosen.measure)
    if not board.per_query:
        raise UsageError(f"{leaderboard}: no per-query scores; write the leaderboard with {{fmt}} json {{per_query}} "
                         "(or {fmt} trec, ir-measures, jsonl)", params=("fmt", "per_query"))
    order = sorted(board.per_query, key=lambda s: (-board.scores.get(s, 0.0), s))
    return ComparisonReport(_source(_compare(board.per_query, order, chosen), board.description), str(leaderboard))


def significance(board: Leaderboard, options: SignificanceOptions | None = None, **settings: Any) -> Comparison:
    """`compare`'s comparison of a leaderboard in memory (what `leaderboard --significance` adds to each board).
    `settings`: `SignificanceOptions` fields, or `tests` (a list of the tests that run)."""
    tests = settings.pop("tests", None)
    chosen = replace(options or SignificanceOptions(), **settings)
    if tests is not None:
        chosen = replace(chosen, test="both" if set(tests) == {"t", "randomization"} else ",".join(tests))
    per_query = {e.system: e.per_query for e in board.entries}
    return _source(_compare(per_query, [e.system for e in board.entries], chosen), board.description)


def _source(comparison: Comparison, description: dict) -> Comparison:
    """Name the measure and the labels (grade set, official judgments, qrels file) the scores were made with."""
    from proctor.evaluate.render import labels_of_description, measure_of_description

    if description:
        return replace(comparison, settings={**comparison.settings, "measure": measure_of_description(description),
                                             "labels": labels_of_description(description)})
    return comparison


def _compare(per_query: dict[str, dict[str, float]], order: list[str], options: SignificanceOptions) -> Comparison:
    baseline = options.baseline
    if baseline is not None and baseline not in per_query:
        raise UsageError(f"{{baseline}} {baseline}: no such system (systems: {', '.join(order)})", params=("baseline",))
    from proctor.stats.pairs import compare_systems

    return compare_systems(per_query, order, options)
