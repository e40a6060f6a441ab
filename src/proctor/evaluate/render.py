"""Leaderboards as text: TSV (header + one row per system, nothing else), JSON, Markdown, or trec_eval's
per-query lines.

Every format says which measure and which labels it holds: TSV in two trailing columns `measure` (the measure
with the parameters it was scored with, e.g. `P(rel=3)@20`, `P(rel=3,missing=zero)@20`, `Cover(rel=3)@20`) and
`labels` (the grade set id, `official` for the store's judgments, or the qrels file); JSON as `measure_id`
and `labels_id`; trec lines in their measure column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from proctor.evaluate.coverage import Coverage
from proctor.evaluate.intervals import Intervals
from proctor.markdown import escape

TSV_HEADER = "system\tscore\tstderr\tn_queries\tmeasure\tlabels"
INTERVAL_COLUMNS = ("ci_low", "ci_high", "rank_low", "rank_high")

BOARD_FORMAT = "tsv"
"""The format a leaderboard is written in when none is named."""


@runtime_checkable
class Leaderboard(Protocol):
    """What is written: a `proctor.evaluate.leaderboard.Leaderboard`, which renders itself with these functions
    (so they name what they read, not its class)."""

    entries: list[Any]
    description: dict[str, Any]
    notes: list[str]
    references: list[Any]
    coverage: Coverage | None
    intervals: Intervals | None


def _num(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.6f}"


def _full(value: float) -> str:
    """A per-topic value at full precision (Python's shortest round-trip form)."""
    return "nan" if math.isnan(value) else repr(float(value))


def measure_of(board: Leaderboard) -> str:
    """The measure with its parameters (`P(rel=3)@20`)."""
    return measure_of_description(board.description)


def labels_of(board: Leaderboard) -> str:
    """The grade set id, `official`, or the qrels file the scores come from."""
    return labels_of_description(board.description)


def measure_of_description(desc: dict) -> str:
    """`measure_of` for a leaderboard's description (also one read back from its JSON)."""
    return str(desc.get("measure_id") or desc.get("measure") or desc.get("metric") or "?")


def labels_of_description(desc: dict) -> str:
    """`labels_of` for a leaderboard's description (also one read back from its JSON)."""
    return str(desc.get("labels_id") or desc.get("grade_set") or desc.get("labels") or "?")


def to_tsv(board: Leaderboard | Sequence[Leaderboard]) -> str:
    """`system<TAB>score<TAB>stderr<TAB>n_queries<TAB>measure<TAB>labels`, one row per system (and measure),
    best first."""
    boards = [board] if isinstance(board, Leaderboard) else list(board)
    with_intervals = any(b.intervals is not None for b in boards)
    rows = [TSV_HEADER + ("\t" + "\t".join(INTERVAL_COLUMNS) if with_intervals else "")]
    for b in boards:
        tail = f"{_tsv_field(measure_of(b))}\t{_tsv_field(labels_of(b))}"
        rows += [f"{e.system}\t{_num(e.score)}\t{_num(e.stderr)}\t{e.n_queries}\t{tail}"
                 + ("\t" + "\t".join(interval_cells(b, e.system)) if with_intervals else "") for e in b.entries]
    return "\n".join(rows) + "\n"


def interval_cells(board: Leaderboard, system: str) -> list[str]:
    """`ci_low ci_high rank_low rank_high` of one system as text (`nan`, `0` where it has none)."""
    iv = board.intervals.by_system.get(system) if board.intervals is not None else None
    if iv is None:
        return ["nan", "nan", "0", "0"]
    return [_num(iv.ci_low), _num(iv.ci_high), str(iv.rank_low), str(iv.rank_high)]


def _tsv_field(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ")


def to_trec(board: Leaderboard | Sequence[Leaderboard]) -> str:
    """trec_eval -q lines `run<TAB>measure<TAB>query<TAB>value`: every query (sorted), then `all` (the score);
    also AutoJudge's `tot` leaderboard format."""
    boards = [board] if isinstance(board, Leaderboard) else list(board)
    return "".join(f"{run}\t{measure}\t{topic}\t{_full(value)}\n"
                   for b in boards for run, topic, measure, value in per_topic_rows(b))


def to_json(board: Leaderboard | Sequence[Leaderboard], per_query: bool = False) -> str:
    """An object with the description, notes and systems (per-query values with `per_query`); several
    leaderboards as `{"leaderboards": [...]}`."""
    if isinstance(board, Leaderboard):
        return json.dumps(_json_object(board, per_query), indent=2) + "\n"
    boards = list(board)
    if len(boards) == 1:
        return to_json(boards[0], per_query)
    return json.dumps({"leaderboards": [_json_object(b, per_query) for b in boards]}, indent=2) + "\n"


def _json_object(board: Leaderboard, per_query: bool) -> dict[str, Any]:
    def entry(e: Any) -> dict[str, Any]:
        row = {"system": e.system, "score": e.score, "stderr": None if math.isnan(e.stderr) else e.stderr,
               "n_queries": e.n_queries}
        iv = board.intervals.by_system.get(e.system) if board.intervals is not None else None
        if iv is not None:
            row.update({"ci_low": _null(iv.ci_low), "ci_high": _null(iv.ci_high), "rank_low": iv.rank_low or None,
                        "rank_high": iv.rank_high or None})
        if per_query:
            row["per_query"] = e.per_query
        return row

    data = {**board.description, "measure_id": measure_of(board), "labels_id": labels_of(board),
            "notes": board.notes, "systems": [entry(e) for e in board.entries]}
    if board.coverage is not None:
        data["coverage"] = board.coverage.as_dict()
    if board.intervals is not None:
        data["intervals"] = {**board.intervals.settings(),
                             "not_separated": [list(pair) for pair in board.intervals.overlapping]}
    if board.references:
        data["reference_rows"] = [{**entry(e), "reference": True} for e in board.references]
    return data


def _null(value: float) -> float | None:
    return None if math.isnan(value) else value


def to_markdown(board: Leaderboard | Sequence[Leaderboard]) -> str:
    """A heading that says how the scores were made, then a table (one per leaderboard)."""
    if not isinstance(board, Leaderboard):
        return "\n".join(to_markdown(b) for b in board)
    how = ", ".join(f"{escape(k)}={escape(v)}" for k, v in board.description.items() if v is not None)
    lines = [f"**Leaderboard** — {how}", ""]
    if board.coverage is not None:
        lines += board.coverage.banner()
    lines += [f"> {escape(n)}" for n in board.notes] + ([""] if board.notes else [])
    if board.intervals is not None:
        lines += [f"> Intervals: {escape(_interval_text(board))}", ""]
    extra = " score interval | rank interval |" if board.intervals is not None else ""
    lines += [f"| rank | system | score | stderr | queries |{extra}",
              "|---:|---|---:|---:|---:|" + ("---:|---:|" if extra else "")]
    lines += [f"| {i} | {escape(e.system)} | {_num(e.score)} | {_num(e.stderr)} | {e.n_queries} |"
              + (_interval_md(board, e.system) if extra else "") for i, e in enumerate(board.entries, start=1)]
    lines += [f"| (reference) | {escape(e.system)} | {_num(e.score)} | {_num(e.stderr)} | {e.n_queries} |"
              + (" – | – |" if extra else "") for e in board.references]  # a reference is not resampled
    return "\n".join(lines) + "\n"


def _interval_text(board: Leaderboard) -> str:
    iv = board.intervals
    assert iv is not None
    return (f"{iv.confidence:g} percentile bootstrap over {iv.topics} topics, {iv.resamples} resamples, seed "
            f"{iv.seed}; {len(iv.overlapping)} pairs of systems have overlapping score intervals")


def _interval_md(board: Leaderboard, system: str) -> str:
    low, high, rank_low, rank_high = interval_cells(board, system)
    return f" [{low}, {high}] | {rank_low}–{rank_high} |"


NUGGET_MEASURES = {"all": "all_score", "vital": "vital_score", "strict_all": "strict_all_score",
                   "strict_vital": "strict_vital_score", "weighted": "nugget_coverage_weighted"}
"""Measure names of nugget scores as nuggetizer's metrics file and Auto-ARGUE name them."""


def measure_name(board: Leaderboard) -> str:
    """The leaderboard's measure as one token: trec_eval's name, EXAM-Cover with its parameters, or the
    answer score (as nuggetizer and Auto-ARGUE name it)."""
    d = board.description
    if d.get("metric") == "nuggets":
        return NUGGET_MEASURES.get(str(d.get("score")), str(d.get("score")))
    if d.get("metric") == "citations":
        return str(d.get("score"))
    return _tsv_field(str(d.get("trec_eval_output") or measure_of(board))).replace(" ", "_")


def per_topic_rows(board: Leaderboard) -> list[tuple[str, str, str, float]]:
    """(run, topic, measure, value) per system (leaderboard order) and topic (sorted), then the system's `all`
    row (its score)."""
    name = measure_name(board)
    rows = []
    for e in board.entries:
        rows += [(e.system, topic, name, float(value)) for topic, value in sorted(e.per_query.items())]
        rows.append((e.system, "all", name, float(e.score)))
    return rows


def to_ir_measures(board: Leaderboard | Sequence[Leaderboard]) -> str:
    """`run topic measure value` lines (ir_measures; AutoJudge's `ir_measures` leaderboard format)."""
    boards = [board] if isinstance(board, Leaderboard) else list(board)
    return "".join(f"{run}\t{topic}\t{measure}\t{_full(value)}\n"
                   for b in boards for run, topic, measure, value in per_topic_rows(b))


def to_jsonl(board: Leaderboard | Sequence[Leaderboard]) -> str:
    """One `{run_id, topic_id, measure, value}` object per line, as AutoJudge's `*.eval.jsonl`."""
    boards = [board] if isinstance(board, Leaderboard) else list(board)
    return "".join(json.dumps({"run_id": run, "topic_id": topic, "measure": measure, "value": value}) + "\n"
                   for b in boards for run, topic, measure, value in per_topic_rows(b))


def render_boards(board: Leaderboard | Sequence[Leaderboard], fmt: str = BOARD_FORMAT, *,
                  per_query: bool = False) -> str:
    """One or several leaderboards as `tsv`, `json` (with `per_query` scores), `md`, `trec` (trec_eval's
    per-query lines; `tot`), `ir-measures` or `jsonl` text."""
    writers = {"tsv": to_tsv, "md": to_markdown, "trec": to_trec, "tot": to_trec, "ir-measures": to_ir_measures,
               "jsonl": to_jsonl}
    if fmt == "json":
        return to_json(board, per_query=per_query)
    if fmt in writers:
        return writers[fmt](board)
    from proctor.errors import UsageError

    raise UsageError(f"unknown format {fmt!r}: tsv, json, md, trec (= tot), ir-measures or jsonl")
