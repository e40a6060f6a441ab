"""Results as text (`render`: every result of the API renders itself, in the formats its command offers) and as
rows or pandas frames for notebooks; `Leaderboards`, the result that is several leaderboards."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from proctor.api.results import JSON, Result
from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard


@dataclass(frozen=True)
class Leaderboards:
    """Several leaderboards as one result (one per measure): JSON `{"leaderboards": [...]}` (one leaderboard's
    object when there is one), TSV rows, Markdown tables, trec / ir-measures / jsonl lines of all of them."""

    formats: ClassVar[tuple[str, ...]] = Leaderboard.formats
    boards: tuple[Leaderboard, ...]
    per_query: bool = False
    """Whether JSON holds every system's per-query scores."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "boards", tuple(self.boards))

    def to_json(self) -> JSON:
        """What `render("json")` writes, parsed."""
        return json.loads(self.render("json"))

    def render(self, fmt: str | None = None, *, per_query: bool | None = None) -> str:
        """The leaderboards as `tsv` (default), `json`, `md`, `trec` (= `tot`), `ir-measures` or `jsonl`."""
        from proctor.evaluate.render import render_boards

        return render_boards(self.boards, fmt or "tsv", per_query=self.per_query if per_query is None else per_query)


def render(result: Result | Sequence[Leaderboard], fmt: str | None = None, **options: Any) -> str:
    """Any result of the API as text in `fmt` (None: the result's default): `result.render(fmt, **options)`
    (leaderboards take `per_query`, comparisons `title`); a list of leaderboards renders as `Leaderboards`."""
    if not hasattr(result, "render"):
        result = Leaderboards(tuple(result))
    return result.render(fmt, **options)  # type: ignore[union-attr]


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
