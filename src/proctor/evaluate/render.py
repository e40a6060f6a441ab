"""Leaderboards as text: TSV (header + one row per system, nothing else), JSON, or Markdown."""

from __future__ import annotations

import json
import math
from typing import Any

from proctor.evaluate.leaderboard import Leaderboard
from proctor.markdown import escape


def _num(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.6f}"


def to_tsv(board: Leaderboard) -> str:
    """`system<TAB>score<TAB>stderr<TAB>n_queries`, one row per system, best first."""
    rows = ["system\tscore\tstderr\tn_queries"]
    rows += [f"{e.system}\t{_num(e.score)}\t{_num(e.stderr)}\t{e.n_queries}" for e in board.entries]
    return "\n".join(rows) + "\n"


def to_json(board: Leaderboard, per_query: bool = False) -> str:
    """An object with the description, notes and systems (per-query values with `per_query`)."""
    def entry(e: Any) -> dict[str, Any]:
        row = {"system": e.system, "score": e.score, "stderr": None if math.isnan(e.stderr) else e.stderr,
               "n_queries": e.n_queries}
        if per_query:
            row["per_query"] = e.per_query
        return row

    data = {**board.description, "notes": board.notes, "systems": [entry(e) for e in board.entries]}
    if board.references:
        data["reference_rows"] = [{**entry(e), "reference": True} for e in board.references]
    return json.dumps(data, indent=2) + "\n"


def to_markdown(board: Leaderboard) -> str:
    """A heading that says how the scores were made, then a table."""
    how = ", ".join(f"{escape(k)}={escape(v)}" for k, v in board.description.items() if v is not None)
    lines = [f"**Leaderboard** — {how}", ""]
    lines += [f"> {escape(n)}" for n in board.notes] + ([""] if board.notes else [])
    lines += ["| rank | system | score | stderr | queries |", "|---:|---|---:|---:|---:|"]
    lines += [f"| {i} | {escape(e.system)} | {_num(e.score)} | {_num(e.stderr)} | {e.n_queries} |"
              for i, e in enumerate(board.entries, start=1)]
    lines += [f"| (reference) | {escape(e.system)} | {_num(e.score)} | {_num(e.stderr)} | {e.n_queries} |"
              for e in board.references]
    return "\n".join(lines) + "\n"


NUGGET_MEASURES = {"all": "all_score", "vital": "vital_score", "strict_all": "strict_all_score",
                   "strict_vital": "strict_vital_score", "weighted": "nugget_coverage_weighted"}
"""Measure names of nugget scores as nuggetizer's metrics file and Auto-ARGUE name them."""


def measure_name(board: Leaderboard) -> str:
    """The leaderboard's measure as one token: the retrieval measure, EXAM-Cover, or the answer score."""
    d = board.description
    if d.get("metric") == "nuggets":
        return NUGGET_MEASURES.get(str(d.get("score")), str(d.get("score")))
    if d.get("metric") == "citations":
        return str(d.get("score"))
    return str(d.get("measure") or d.get("metric") or "score").replace(" ", "_")


def per_topic_rows(board: Leaderboard) -> list[tuple[str, str, str, float]]:
    """(run, topic, measure, value) per system and topic, then the system's `all` row (its score)."""
    name = measure_name(board)
    rows = []
    for e in sorted(board.entries, key=lambda e: e.system):
        rows += [(e.system, topic, name, float(value)) for topic, value in e.per_query.items()]
        rows.append((e.system, "all", name, float(e.score)))
    return rows


def to_tot(board: Leaderboard) -> str:
    """`run measure topic value` lines (trec_eval -q; AutoJudge's `tot` leaderboard format)."""
    return "".join(f"{run}\t{measure}\t{topic}\t{value!r}\n" for run, topic, measure, value in per_topic_rows(board))


def to_ir_measures(board: Leaderboard) -> str:
    """`run topic measure value` lines (ir_measures; AutoJudge's `ir_measures` leaderboard format)."""
    return "".join(f"{run}\t{topic}\t{measure}\t{value!r}\n" for run, topic, measure, value in per_topic_rows(board))


def to_jsonl(board: Leaderboard) -> str:
    """One `{run_id, topic_id, measure, value}` object per line, as AutoJudge's `*.eval.jsonl`."""
    return "".join(json.dumps({"run_id": run, "topic_id": topic, "measure": measure, "value": value}) + "\n"
                   for run, topic, measure, value in per_topic_rows(board))
