"""TREC run and qrels files, read and written as trec_eval reads and writes them.

Run: `qid Q0 docid rank score tag` (whitespace separated; the rank column is kept but trec_eval ignores
it: order comes from the score, see `proctor.io.runs`). Qrels: `qid iter docid rel`.

Ids and the run tag are checked as every reader checks ids (`proctor.io.fields.as_id`: no control
characters). Numbers are written in ASCII as trec_eval reads them: a rank is a whole number from 0 (TREC
submissions count from 0 or 1) to 2^63 - 1, a score a finite decimal number, a relevance a whole number in
-1000..1000; `1_000`, `１` or `0x10`, which Python would read differently from trec_eval, are refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from proctor.errors import InputError
from proctor.io.fields import record_id
from proctor.io.textfile import read_lines

MAX_RELEVANCE = 1000
"""Relevance levels beyond this are refused (gains of 2^relevance - 1 would overflow floating point)."""
MAX_RANK = 2**63 - 1
"""The largest rank the store can hold (a 64-bit integer)."""

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def _whole(value: object) -> int | None:
    """An integer from ASCII digits or a JSON integer (None for anything else); beyond 64 bits it is
    clamped to a value out of every range here, so no huge number is ever converted."""
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        digits = value.lstrip("+-").lstrip("0")
        if len(digits) > 19:
            return -(2**64) if value.startswith("-") else 2**64
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def parse_rank(value: object) -> int:
    """A rank from a run file or JSON: a whole number 0..2^63-1 (an integral JSON float such as `3.0` too);
    a ValueError saying what is wrong otherwise."""
    number = _whole(value)
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    if number is None:
        raise ValueError(f"rank {value!r} is not an integer")
    if not 0 <= number <= MAX_RANK:
        raise ValueError(f"rank {value} is out of range (0..2^63-1)")
    return number


def parse_score(value: object) -> float:
    """A retrieval score: a finite number (a decimal in a run file, a number in JSON)."""
    text_ok = isinstance(value, str) and _DECIMAL.fullmatch(value)
    if not text_ok and (not isinstance(value, int | float) or isinstance(value, bool)):
        raise ValueError(f"score {value!r} is not a number")
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:  # a JSON integer of hundreds of digits
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"score {value!r} is not a finite number")
    return number


def parse_relevance(value: object) -> int:
    """A relevance label: a whole number in -MAX_RELEVANCE..MAX_RELEVANCE."""
    number = _whole(value)
    if number is None:
        raise ValueError(f"relevance {value!r} is not an integer")
    if not -MAX_RELEVANCE <= number <= MAX_RELEVANCE:
        raise ValueError(f"relevance {value} is out of range (-{MAX_RELEVANCE}..{MAX_RELEVANCE})")
    return number


@dataclass(frozen=True)
class RunLine:
    """One line of a run file."""

    line: int
    query_id: str
    passage_id: str
    rank: int
    score: float
    run: str


def read_run(path: str | Path) -> list[RunLine]:
    """Read a TREC run (plain or gzipped). The run name is the tag column; one file may hold several."""
    out: list[RunLine] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, text in read_lines(path):
        if not text.strip():
            continue
        qid, _, docid, rank, score, tag = _columns(path, line, text, "qid Q0 docid rank score tag")
        try:
            rank_value, score_value = parse_rank(rank), parse_score(score)
        except ValueError as exc:
            raise InputError(str(path), line, str(exc)) from None
        qid, docid = record_id(path, line, qid, "query"), record_id(path, line, docid, "passage")
        tag = record_id(path, line, tag, "run")
        key = (tag, qid, docid)
        if key in seen:
            raise InputError(
                str(path), line, f"passage {docid!r} ranked twice for query {qid!r} (first on line {seen[key]})"
            )
        seen[key] = line
        out.append(RunLine(line, qid, docid, rank_value, score_value, tag))
    return out


def read_qrels(path: str | Path) -> list[tuple[int, str, str, int]]:
    """Read TREC qrels as `(line, query_id, passage_id, relevance)`; conflicting duplicates are errors."""
    out = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for line, text in read_lines(path):
        if not text.strip():
            continue
        qid, _, docid, rel = _columns(path, line, text, "qid iter docid relevance")
        try:
            rel_value = parse_relevance(rel)
        except ValueError as exc:
            raise InputError(str(path), line, str(exc)) from None
        qid, docid = record_id(path, line, qid, "query"), record_id(path, line, docid, "passage")
        previous = seen.get((qid, docid))
        if previous is not None:
            if previous[1] != rel_value:
                raise InputError(
                    str(path), line,
                    f"query {qid!r} passage {docid!r} judged {rel_value} here and {previous[1]} on line {previous[0]}",
                )
            continue
        seen[(qid, docid)] = (line, rel_value)
        out.append((line, qid, docid, rel_value))
    return out


def _columns(path: str | Path, line: int, text: str, layout: str) -> list[str]:
    parts, expected = text.split(), len(layout.split())
    if len(parts) != expected:
        raise InputError(str(path), line, f"expected {expected} columns `{layout}`, got {len(parts)}")
    return parts


def qrels_dict(rows: Iterable[tuple[int, str, str, int]]) -> dict[str, dict[str, int]]:
    """`{query_id: {passage_id: relevance}}` from `read_qrels` rows."""
    out: dict[str, dict[str, int]] = {}
    for _, qid, docid, rel in rows:
        out.setdefault(qid, {})[docid] = rel
    return out


def runs_dict(lines: Iterable[RunLine]) -> dict[str, dict[str, dict[str, float]]]:
    """`{run: {query_id: {passage_id: score}}}` from `read_run` lines."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for r in lines:
        out.setdefault(r.run, {}).setdefault(r.query_id, {})[r.passage_id] = r.score
    return out


def read_runs(paths: Iterable[str | Path]) -> dict[str, dict[str, dict[str, float]]]:
    """Read run files or folders of run files; a run name found in two files is an error."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    origin: dict[str, str] = {}
    for path in _expand(paths):
        for run, per_query in runs_dict(read_run(path)).items():
            if run in out:
                raise InputError(str(path), None, f"run {run!r} also comes from {origin[run]}")
            out[run] = per_query
            origin[run] = str(path)
    return out


def _expand(paths: Iterable[str | Path]) -> Iterator[Path]:
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise InputError(str(p), None, "folder holds no run files")
            yield from files
        else:
            yield p


def write_qrels(qrels: dict[str, dict[str, int]], out: TextIO) -> None:
    """Write `qid 0 docid rel` lines, queries and passages in a stable order."""
    for qid in sorted(qrels):
        for docid in sorted(qrels[qid]):
            out.write(f"{qid} 0 {docid} {qrels[qid][docid]}\n")

