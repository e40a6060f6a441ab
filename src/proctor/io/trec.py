"""TREC run and qrels files, read and written as trec_eval reads and writes them.

Run: `qid Q0 docid rank score tag` (whitespace separated; the rank column is kept but trec_eval ignores
it: order comes from the score, see `proctor.evaluate.runs`). Qrels: `qid iter docid rel`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from proctor.errors import InputError
from proctor.io.textfile import read_lines

MAX_RELEVANCE = 1000
"""Relevance levels beyond this are refused (they do not fit what trec_eval and SQLite store)."""


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
            rank_value = int(rank)
        except ValueError:
            raise InputError(str(path), line, f"rank {rank!r} is not an integer") from None
        try:
            score_value = float(score)
        except ValueError:
            raise InputError(str(path), line, f"score {score!r} is not a number") from None
        if not math.isfinite(score_value):
            raise InputError(str(path), line, f"score {score!r} is not a finite number")
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
            rel_value = int(rel)
        except ValueError:
            raise InputError(str(path), line, f"relevance {rel!r} is not an integer") from None
        if not -MAX_RELEVANCE <= rel_value <= MAX_RELEVANCE:
            raise InputError(str(path), line, f"relevance {rel} is out of range (-{MAX_RELEVANCE}..{MAX_RELEVANCE})")
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

