"""Results as text (`render`: every result type of the API, in the formats its command offers) and as rows or
pandas frames for notebooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from proctor.api.leaderboards import render_leaderboards
from proctor.api.results import JSON, Rendered
from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard

if TYPE_CHECKING:
    from proctor.stats.pairs import Comparison


def render(result: Leaderboard | Sequence[Leaderboard] | Rendered | Comparison, fmt: str | None = None, *,
           per_query: bool = False, title: str = "") -> str:
    """Every result of the API as text in `fmt` (None: the result's default): leaderboards as `tsv` (default),
    `json` (with `per_query` scores), `md`, `trec` (= `tot`), `ir-measures` or `jsonl`; a significance
    `Comparison` as `tsv`, `json` or `md` (under `title`); reports (correlation, agreement, calibration, probes,
    ensembles, store info, grade sets, qrels, ...) in the formats their command offers."""
    if isinstance(result, Leaderboard) or (isinstance(result, Sequence) and not isinstance(result, str)):
        return render_leaderboards(result, fmt or "tsv", per_query=per_query)  # type: ignore[arg-type]
    if hasattr(result, "render"):
        return result.render(fmt)  # type: ignore[union-attr]
    if hasattr(result, "text"):  # verify reports, bank diffs and impacts, experiment estimates
        return result.text(fmt) if fmt else result.text()  # type: ignore[union-attr]
    from proctor.api.significance import ComparisonReport

    return ComparisonReport(result, title).render(fmt)  # type: ignore[arg-type]


def as_rows(board: Leaderboard) -> list[dict[str, JSON]]:
    """A leaderboard as plain rows `{system, score, stderr, n_queries}`, best first."""
    return [{"system": e.system, "score": e.score, "stderr": e.stderr, "n_queries": e.n_queries}
            for e in board.entries]


def to_frame(value: Leaderboard | dict | list) -> Any:
    """A pandas DataFrame of a leaderboard (`system, score, stderr, n_queries`), qrels `{qid: {pid: label}}`
    (`query_id, passage_id, label`) or a list of plain rows; needs pandas (an optional dependency)."""
    try:
        import pandas
    except ImportError:
        raise UsageError("to_frame needs pandas (pip install pandas); the plain objects need nothing") from None
    if isinstance(value, Leaderboard):
        return pandas.DataFrame(as_rows(value), columns=["system", "score", "stderr", "n_queries"])
    if isinstance(value, dict):
        rows = [{"query_id": q, "passage_id": p, "label": label} for q, per in value.items()
                for p, label in per.items()]
        return pandas.DataFrame(rows, columns=["query_id", "passage_id", "label"])
    return pandas.DataFrame(list(value))
