"""Significance: paired t-tests and randomization tests between the systems of a leaderboard (in memory, or a
file with per-query scores: `proctor compare`), corrected for multiple comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, get_args

from proctor.api.modes import Correction, TableFormat, Tests
from proctor.api.results import JSON
from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard
from proctor.evaluate.leaderboard_files import read_leaderboard
from proctor.options.numeric import check_numbers

if TYPE_CHECKING:  # numpy (the randomization test) loads only when a comparison is made
    from proctor.stats.pairs import Comparison


@dataclass(frozen=True)
class SignificanceSettings:
    """How systems are compared: which `test` (`both`, `t`, `randomization`), the `correction`, `alpha`, a
    `baseline` to compare every system with (default: all pairs), and the randomization test's `samples` and
    `seed`."""

    test: Tests = "both"
    correction: Correction = "holm"
    alpha: float = 0.05
    baseline: str | None = None
    samples: int = 10_000
    seed: int = 0

    def tests(self) -> tuple[str, ...]:
        """The tests that run."""
        return ("t", "randomization") if self.test == "both" else (self.test,)


def significance(board: Leaderboard, *, tests: Sequence[str] = ("t", "randomization"), correction: Correction = "holm",
                 alpha: float = 0.05, baseline: str | None = None, samples: int = 10_000, seed: int = 0) -> Comparison:
    """Paired t-tests and randomization tests between the systems of a leaderboard (every pair, or each system
    against `baseline`), corrected for multiple comparisons."""
    check_numbers({"alpha": alpha, "samples": samples})
    per_query = {e.system: e.per_query for e in board.entries}
    comparison = _compare(per_query, [e.system for e in board.entries], tests, correction, alpha, baseline, samples,
                          seed)
    return _source(comparison, board.description)


def compare_file(path: str | Path, *, tests: Sequence[str] = ("t", "randomization"), correction: Correction = "holm",
                 alpha: float = 0.05, baseline: str | None = None, samples: int = 10_000, seed: int = 0,
                 measure: str | None = None) -> Comparison:
    """`significance` for a leaderboard file with per-query scores (read for `measure` when it holds several)."""
    check_numbers({"alpha": alpha, "samples": samples})
    board = read_leaderboard(path, measure)
    if not board.per_query:
        raise UsageError(f"{path}: no per-query scores; write the leaderboard with `proctor leaderboard --format json "
                         "--per-query` (or --format trec, ir-measures, jsonl)")
    order = sorted(board.per_query, key=lambda s: (-board.scores.get(s, 0.0), s))
    return _source(_compare(board.per_query, order, tests, correction, alpha, baseline, samples, seed),
                   board.description)


@dataclass(frozen=True)
class ComparisonReport:
    """What `proctor compare` prints: the comparison of a leaderboard file's systems, titled by the file."""

    formats: ClassVar[tuple[str, ...]] = get_args(TableFormat)
    comparison: Comparison
    title: str = ""

    def to_json(self) -> JSON:
        """The comparison's settings, notes and pairs: what `render("json")` writes, parsed."""
        return self.comparison.to_json()

    def render(self, fmt: TableFormat | None = None) -> str:
        """The pairs as `tsv` (default), `json` or `md` (Markdown under the title)."""
        return self.comparison.render(fmt, title=self.title)


def compare(path: str | Path, settings: SignificanceSettings = SignificanceSettings(), *,
            measure: str | None = None) -> ComparisonReport:
    """`proctor compare`: `compare_file` with the given settings, titled by the file."""
    comparison = compare_file(path, tests=settings.tests(), correction=settings.correction, alpha=settings.alpha,
                              baseline=settings.baseline, samples=settings.samples, seed=settings.seed,
                              measure=measure)
    return ComparisonReport(comparison, str(path))


def _source(comparison: Comparison, description: dict) -> Comparison:
    """Name the measure and the labels (grade set, official judgments, qrels file) the scores were made with."""
    from proctor.evaluate.render import labels_of_description, measure_of_description

    if description:
        return replace(comparison, settings={**comparison.settings, "measure": measure_of_description(description),
                                             "labels": labels_of_description(description)})
    return comparison


def _compare(per_query: dict[str, dict[str, float]], order: list[str], tests: Sequence[str], correction: str,
             alpha: float, baseline: str | None, samples: int, seed: int) -> Comparison:
    if baseline is not None and baseline not in per_query:
        raise UsageError(f"{{baseline}} {baseline}: no such system (systems: {', '.join(order)})", params=("baseline",))
    from proctor.stats.pairs import compare_systems

    return compare_systems(per_query, order=order, baseline=baseline, tests=tuple(tests), correction=correction,
                           alpha=alpha, samples=samples, seed=seed)
