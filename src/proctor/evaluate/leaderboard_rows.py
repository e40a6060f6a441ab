"""Leaderboards written one value per line, as Proctor writes them and as the peers read them: `--format
trec`/`tot` (`run measure topic value`), `ir-measures` (`run topic measure value`), `jsonl` (`{run_id,
topic_id, measure, value}`), trec_eval's `-q` output (`measure topic value`, one or more runs, each named by
its `runid all NAME` line), and Proctor's Markdown tables. Per-query rows become per-query scores, `all`
rows the systems' scores; a file with several measures is read for the one `measure` names. Every problem
names the file and line."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import InputError, ProctorError, UsageError
from proctor.io.textfile import parse_json_line, read_lines

ALL = "all"
REFERENCE = "_overall_"


@dataclass(frozen=True)
class Row:
    """One value of one run, topic (`all`: the run's score) and measure, with the line it came from."""

    run: str
    topic: str
    measure: str
    value: float
    line: int


def same_measure(wanted: str, name: str) -> bool:
    """True when `name` (as a file writes it) is the measure `wanted` names: the same text, or the same
    measure in trec_eval or ir_measures form (`ndcg_cut_10` = `nDCG@10`; `RR` = `RR(rel=1)`, a relevance
    level or a `missing=` left out matching any: `P@20` reads `P(rel=3,missing=zero)@20`; a `missing=` written
    matches only a name that says it, as Proctor's own do when they leave out the default, skip)."""
    if wanted == name or wanted.lower() == name.lower():
        return True
    from proctor.evaluate.measures import MeasureSpec, parse_measure
    from proctor.evaluate.measures.base import MISSING_OVER_LABELS

    try:
        a, b = parse_measure(wanted, missing=True), parse_measure(name, missing=True)
    except ProctorError:
        return False
    if isinstance(a, MeasureSpec) and isinstance(b, MeasureSpec):
        said = b.missing or (MISSING_OVER_LABELS if b.name == name else None)  # `P_20` (trec_eval's) never says it
        return (a.measure, a.cutoff) == (b.measure, b.cutoff) and a.rel in (None, b.rel) and a.missing in (None, said)
    return a == b


def choose_measure(path: str | Path, measures: Iterable[str], wanted: str | None, option: str = "measure") -> str:
    """The one measure to read: the only one, or the one `wanted` (the parameter `option`) names."""
    names = list(dict.fromkeys(measures))
    if not names:
        raise InputError(str(path), None, "holds no leaderboard rows")
    if wanted is None:
        if len(names) > 1:
            raise UsageError(f"{path}: holds {len(names)} measures ({_listed(names)}); choose one with "
                             f"{{{option}}}", params=(option,))
        return names[0]
    found = [n for n in names if same_measure(wanted, n)]
    if len(found) != 1:
        what = "no measure" if not found else f"{len(found)} measures ({_listed(found)})"
        raise UsageError(f"{{{option}}} {wanted}: {path} holds {what} of that name (it holds {_listed(names)})",
                         params=(option,))
    return found[0]


def _listed(names: list[str]) -> str:
    return ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")


def _value(path: str | Path, line: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(str(path), line, f"value {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(str(path), line, f"value {text!r} is not a finite number")
    return value


def scores_of(path: str | Path, rows: list[Row], wanted: str | None, option: str = "measure"
              ) -> tuple[dict[str, float], dict[str, dict[str, float]], str]:
    """Scores (`all` rows) and per-query scores of the chosen measure; repeats and runs without an `all`
    row are errors naming the line."""
    measure = choose_measure(path, (r.measure for r in rows), wanted, option)
    scores: dict[str, float] = {}
    per_query: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.measure != measure or row.run == REFERENCE:
            continue
        key = (row.run, row.topic)
        if key in seen:
            raise InputError(str(path), row.line, f"run {row.run!r}, topic {row.topic!r}, measure {measure!r} "
                             f"listed twice (first on line {seen[key]})")
        seen[key] = row.line
        if row.topic == ALL:
            scores[row.run] = row.value
        else:
            per_query.setdefault(row.run, {})[row.topic] = row.value
    for run in per_query:
        if run not in scores:
            line = min(seen[(run, topic)] for topic in per_query[run])
            raise InputError(str(path), line, f"run {run!r} has per-query rows of {measure!r} but no `all` row "
                             "(its score)")
    return scores, per_query, measure


def read_four_columns(path: str | Path) -> list[Row]:
    """`run measure topic value` (trec/tot) or `run topic measure value` (ir-measures): the column that holds
    `all` is the topic's."""
    lines = []
    for line, text in read_lines(path):
        if text.strip():
            parts = text.split()
            if len(parts) != 4:
                raise InputError(str(path), line, f"expected 4 columns `run measure topic value` (trec) or `run "
                                 f"topic measure value` (ir-measures), got {len(parts)}")
            lines.append((line, parts))
    in_second = any(p[1] == ALL for _, p in lines)
    in_third = any(p[2] == ALL for _, p in lines)
    if in_second == in_third:
        raise InputError(str(path), lines[0][0], "cannot tell the topic column from the measure column: "
                         "exactly one of columns 2 and 3 must hold the `all` rows (the systems' scores)")
    topic, measure = (1, 2) if in_second else (2, 1)
    return [Row(p[0], p[topic], p[measure], _value(path, line, p[3]), line) for line, p in lines]


def read_jsonl_rows(path: str | Path) -> list[Row]:
    """AutoJudge's `*.eval.jsonl` (what `--format jsonl` writes): `{run_id, topic_id, measure, value}`."""
    rows = []
    for line, text in read_lines(path):
        if not text.strip():
            continue
        obj = parse_json_line(path, line, text)
        if not isinstance(obj, dict) or any(k not in obj for k in ("run_id", "topic_id", "measure", "value")):
            raise InputError(str(path), line, "expected {\"run_id\", \"topic_id\", \"measure\", \"value\"}")
        value = obj["value"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(str(path), line, f"value {value!r} is not a finite number")
        rows.append(Row(str(obj["run_id"]), str(obj["topic_id"]), str(obj["measure"]), float(value), line))
    return rows


def read_trec_eval(path: str | Path) -> list[Row]:
    """trec_eval's output (`-q` or not), of one run or several concatenated: each run's rows are named by its
    `runid all NAME` line (per-query rows come before it, `all` rows after it)."""
    rows: list[Row] = []
    block: list[tuple[int, list[str]]] = []
    name: str | None = None
    for line, text in read_lines(path):
        parts = text.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise InputError(str(path), line, f"expected trec_eval's `measure topic value`, got {len(parts)} columns")
        if name is not None and (parts[1] != ALL or parts[0] == "runid"):  # the next run begins
            rows += _named(path, block, name)
            block, name = [], None
        if parts[0] == "runid":
            if parts[1] != ALL:
                raise InputError(str(path), line, "a `runid` line must be `runid all NAME`")
            name = parts[2]
            continue
        block.append((line, parts))
    if block and name is None:
        raise InputError(str(path), block[0][0], "trec_eval rows without a `runid all NAME` line: the run is "
                         "unnamed")
    return rows + _named(path, block, name or "")


def _named(path: str | Path, block: list[tuple[int, list[str]]], name: str) -> list[Row]:
    return [Row(name, p[1], p[0], _value(path, line, p[2]), line) for line, p in block]


_UNESCAPE = re.compile(r"\\(.)")
_ROW = re.compile(r"^\|\s*(\d+|\(reference\))\s*\|(.*)\|\s*$")


def _unescape(text: str) -> str:
    text = _UNESCAPE.sub(r"\1", text.strip()).replace("javascript&#58;", "javascript:")
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _heading_measure(text: str) -> str:
    """The measure a Markdown heading `**Leaderboard** — key=value, ...` names (as the TSV's measure column)."""
    from proctor.evaluate.render import measure_of_description

    how = text.split("—", 1)[1].strip() if "—" in text else ""
    pairs = [p.split("=", 1) for p in re.split(r", (?=[A-Za-z0-9\\_]+=)", how) if "=" in p]
    return measure_of_description({_unescape(k): _unescape(v) for k, v in pairs})


def read_markdown(path: str | Path) -> list[Row]:
    """Proctor's Markdown leaderboards: a `**Leaderboard** — ..., measure_id=M, ...` heading, then a table
    `| rank | system | score | stderr | queries |` (reference rows left out)."""
    rows: list[Row] = []
    measure: str | None = None
    for line, text in read_lines(path):
        if text.startswith("**Leaderboard**"):
            measure = _heading_measure(text)
            continue
        match = _ROW.match(text.strip())
        if not match or match.group(1) == "(reference)":
            continue
        if measure is None:
            raise InputError(str(path), line, "a table row before any `**Leaderboard**` heading")
        cells = [c for c in re.split(r"(?<!\\)\|", match.group(2))]
        if len(cells) != 4:
            raise InputError(str(path), line, f"expected `| rank | system | score | stderr | queries |`, got "
                             f"{len(cells) + 1} cells")
        rows.append(Row(_unescape(cells[0]), ALL, measure, _value(path, line, cells[1].strip()), line))
    return rows


READERS = {"jsonl": read_jsonl_rows, "md": read_markdown, "trec_eval": read_trec_eval, "rows": read_four_columns}


def row_format(path: str | Path) -> str | None:
    """Which of this module's formats the file is in (None: a JSON document or a `system<TAB>score` TSV)."""
    first: list[str] | None = None
    for _, text in read_lines(path):
        stripped = text.strip()
        if not stripped:
            continue
        parts = stripped.split()
        if first is None:
            if stripped.startswith(("**Leaderboard**", "|")):
                return "md"
            if stripped.startswith("{"):
                return "jsonl" if _json_row(stripped) else None
            if stripped.startswith("[") or parts[0] == "system":
                return None
            first = parts
        if len(parts) == 3 and parts[0] == "runid" and parts[1] == ALL:
            return "trec_eval"
        if len(parts) == 4 and ALL in (parts[1], parts[2]):
            return "rows"
    if first is not None and len(first) == 4 and _is_number(first[3]) and not _is_number(first[1]):
        return "rows"  # per-topic rows without `all` rows: read as such, to be refused for what they lack
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_row(text: str) -> bool:
    import json

    try:
        obj = json.loads(text)
    except ValueError:
        return False
    return isinstance(obj, dict) and {"run_id", "topic_id", "measure", "value"} <= set(obj)
