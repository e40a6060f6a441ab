"""Read leaderboards: Proctor's TSV (`system<TAB>score<TAB>stderr<TAB>n_queries<TAB>measure<TAB>labels`; a
file with several measures is read for the one chosen) or JSON output (with per-query scores when written with
--per-query; several leaderboards: the one chosen), the one-value-per-line formats and Markdown
(`proctor.evaluate.leaderboard_rows`), any `system<TAB>score` TSV, and official leaderboards given as JSON
`{run: rank}` (ties and fractional ranks allowed) or a TSV of scores."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.errors import InputError
from proctor.evaluate.leaderboard_rows import READERS, choose_measure, row_format, scores_of
from proctor.io.textfile import looks_like_json, parse_json_document, read_lines

REFERENCE = "_overall_"
"""The reference row of cover leaderboards (what the whole pool covers)."""


@dataclass
class LeaderboardFile:
    """Scores (higher is better), optional per-query scores, and what the file says about itself."""

    scores: dict[str, float]
    per_query: dict[str, dict[str, float]] | None = None
    description: dict[str, Any] = field(default_factory=dict)
    kind: str = "scores"
    """`scores`, or `ranks` when the file gave ranks (then scores are the negated ranks)."""


def read_leaderboard(path: str | Path, measure: str | None = None, option: str = "measure") -> LeaderboardFile:
    """A leaderboard in any format `proctor leaderboard` writes (TSV, JSON, Markdown, trec/tot, ir-measures,
    jsonl), trec_eval's output (`-q` or not, one run or several) or any `system<TAB>score` TSV; `measure`
    chooses one when the file holds several (`option` names it in messages)."""
    fmt = row_format(path)
    if fmt is not None:
        scores, per_query, name = scores_of(path, READERS[fmt](path), measure, option)
        return LeaderboardFile(scores, per_query or None, {"measure_id": name, "format": fmt})
    if looks_like_json(path):
        data = parse_json_document(path)
        if isinstance(data, dict) and isinstance(data.get("leaderboards"), list):
            data = _one_board(path, data["leaderboards"], measure, option)
        if isinstance(data, dict) and isinstance(data.get("systems"), list):
            if measure is not None and "measure_id" in data:  # one leaderboard: read only for its own measure
                _one_board(path, [data], measure, option)
            return _from_proctor_json(path, data)
        if isinstance(data, dict):
            return LeaderboardFile(_numbers(path, data, "score"))
        raise InputError(str(path), 1, "expected a Proctor leaderboard JSON (with `systems`) or {system: score}")
    scores, chosen = _read_tsv(path, measure, option)
    return LeaderboardFile(scores, description={"measure_id": chosen} if chosen else {})


def _one_board(path: str | Path, boards: list, measure: str | None, option: str) -> dict:
    """The leaderboard of a `{"leaderboards": [...]}` JSON that `measure` names (or its only one)."""
    from proctor.evaluate.render import measure_of_description

    names = [measure_of_description(b) if isinstance(b, dict) else "?" for b in boards]
    return boards[names.index(choose_measure(path, names, measure, option))]


def read_official(path: str | Path, measure: str | None = None) -> LeaderboardFile:
    """An official leaderboard: JSON `{run: rank}` (rank 1 is best), a TSV of scores, or any leaderboard
    `read_leaderboard` reads (trec_eval's output of the official runs, ...; `measure` chooses among several)."""
    if row_format(path) is not None:
        return read_leaderboard(path, measure, "official_measure")
    if looks_like_json(path):
        data = parse_json_document(path)
        if isinstance(data, dict) and isinstance(data.get("systems"), list):
            if measure is not None and "measure_id" in data:  # one leaderboard: read only for its own measure
                _one_board(path, [data], measure, "official_measure")
            return _from_proctor_json(path, data)
        if not isinstance(data, dict):
            raise InputError(str(path), 1, "expected a JSON object {run: rank}")
        ranks = _numbers(path, data, "rank")
        return LeaderboardFile({run: -rank for run, rank in ranks.items()}, kind="ranks")
    return LeaderboardFile(_read_tsv(path, measure, "official_measure")[0])


def _from_proctor_json(path: str | Path, data: dict) -> LeaderboardFile:
    scores, per_query = {}, {}
    for row in data["systems"]:
        if (not isinstance(row, dict) or "system" not in row or isinstance(row.get("score"), bool)
                or not isinstance(row.get("score"), int | float) or not math.isfinite(row["score"])):
            raise InputError(str(path), None, "every entry of `systems` needs `system` and a finite numeric `score`"
                             + (f" ({row.get('system')!r} has {row.get('score')!r})" if isinstance(row, dict) else ""))
        scores[str(row["system"])] = float(row["score"])
        if isinstance(row.get("per_query"), dict):
            per_query[str(row["system"])] = {str(q): float(v) for q, v in row["per_query"].items()}
    description = {k: v for k, v in data.items() if k not in ("systems", "notes")}
    return LeaderboardFile(scores, per_query or None, description)


def _numbers(path: str | Path, data: dict, what: str) -> dict[str, float]:
    out = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(str(path), None, f"{key!r}: the {what} must be a finite number, got {value!r}")
        out[str(key)] = float(value)
    return out


def _read_tsv(path: str | Path, measure: str | None = None, option: str = "measure"
              ) -> tuple[dict[str, float], str | None]:
    """Scores of a `system<TAB>score` TSV (of the chosen measure when a `measure` column says), and that
    measure."""
    scores: dict[str, float] = {}
    measure_column: int | None = None
    chosen: str | None = None
    for line, text in read_lines(path):
        if not text.strip():
            continue
        parts = text.split("\t") if "\t" in text else text.split()
        if len(parts) < 2:
            raise InputError(str(path), line, "expected `system<TAB>score`")
        if line == 1 and parts[0] == "system":
            measure_column = parts.index("measure") if "measure" in parts else None
            if measure_column is not None:
                chosen = choose_measure(path, _column(path, measure_column), measure, option)
            continue
        if measure_column is not None and len(parts) > measure_column and parts[measure_column] != chosen:
            continue
        try:
            score = float(parts[1])
        except ValueError:
            raise InputError(str(path), line, f"score {parts[1]!r} is not a number") from None
        if not math.isfinite(score):
            raise InputError(str(path), line, f"score {parts[1]!r} of {parts[0]!r} is not a finite number")
        if parts[0] == REFERENCE:
            continue  # what the whole pool covers: shown for reference, never correlated
        if parts[0] in scores:
            raise InputError(str(path), line, f"system {parts[0]!r} listed twice")
        scores[parts[0]] = score
    return scores, chosen


def _column(path: str | Path, column: int) -> list[str]:
    """The values of one column of a TSV with a header (its measures)."""
    return [parts[column] for line, text in read_lines(path) if line > 1 and text.strip()
            for parts in [text.split("\t") if "\t" in text else text.split()] if len(parts) > column]
