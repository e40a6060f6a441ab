"""Where the runner's inputs came from. The judge imports reports and nugget banks through copies it writes
into `--out-dir` (`S.responses.jsonl`, `S.given-bank.jsonl`); an error Proctor's readers find in a copy names
the user's own file and line instead (`relocated`). Reports carry their file (`Report.path`); the banks'
file is the runner's `--nugget-banks` option (its click context), read here record by record."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from proctor.errors import InputError

Origin = tuple[str, int | None]
"""A user's file and line (1-based; None where only the input is known)."""


def _lines(path: Path) -> Iterable[tuple[int, Any]]:
    """The JSON records of a JSONL file with their line numbers (blank or unreadable lines skipped)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                if text.strip():
                    try:
                        yield number, json.loads(text)
                    except ValueError:
                        continue
    except OSError:
        return


def report_key(record: Any) -> tuple[str, str] | None:
    """(run, topic) of a report record as the runner's loader reads it."""
    meta = record.get("metadata") if isinstance(record, dict) else None
    if not isinstance(meta, dict):
        return None
    topic = next((meta[k] for k in ("topic_id", "narrative_id", "request_id") if meta.get(k) is not None), None)
    return (str(meta.get("run_id")), str(topic)) if topic is not None else None


def report_origins(responses: Iterable[Any]) -> dict[tuple[str, str], list[Origin]]:
    """(run, topic) → the files and lines of its reports (one, unless repeated), in the reports' files
    (`Report.path`)."""
    out: dict[tuple[str, str], list[Origin]] = {}
    for path in sorted({str(r.path) for r in responses if getattr(r, "path", None)}):
        for number, record in _lines(Path(path)):
            key = report_key(record)
            if key is not None:
                out.setdefault(key, []).append((path, number))
    return out


def bank_origins() -> dict[str, Origin]:
    """Topic → the file and line of its nugget bank in the runner's `--nugget-banks` (file or folder); empty
    when the judge runs outside the runner's command line."""
    import click

    context = click.get_current_context(silent=True)
    given = (context.params.get("nugget_banks") if context is not None else None) or None
    if given is None:
        return {}
    root = Path(str(given))
    files = sorted(p for p in root.iterdir() if ".json" in p.name) if root.is_dir() else [root]
    out: dict[str, Origin] = {}
    for path in files:
        for number, record in _lines(path):
            if isinstance(record, dict):
                meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
                topic = record.get("query_id") or record.get("qid") or meta.get("topic_id") or meta.get("query_id")
                if topic is not None:
                    out.setdefault(str(topic), (str(path), number))
    return out


def relocated(error: InputError, copy: Path, origins: list[Origin | None], what: str) -> InputError:
    """The error of line N of the judge's copy as an error of the user's file and line it came from (the copy's
    N-th record is `origins[N-1]`); `what` names the input when its line is unknown."""
    if Path(error.path) != copy or error.line is None:
        return error
    origin = origins[error.line - 1] if 0 < error.line <= len(origins) else None
    if origin is None:
        return InputError(what, None, error.message)
    return InputError(origin[0], origin[1], error.message)
