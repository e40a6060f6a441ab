"""Where the runner's inputs came from. The judge imports reports and nugget banks through copies it writes
into `--out-dir` (`S.responses.jsonl`, `S.given-bank.jsonl`); an error Proctor's readers find in a copy names
the user's own file and line instead (`relocated`). Reports carry their file (`Report.path`); the banks'
file is the runner's `--nugget-banks` option (its click context), read here record by record."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from proctor.api.autojudge import bank_topic, jsonl_records
from proctor.errors import InputError

RUNNER_OPTIONS = {"rag_topics": "--rag-topics", "rag_responses": "--rag-responses", "nugget_banks": "--nugget-banks",
                  "corpus": "--corpus", "outdir": "--out-dir"}
"""How the AutoJudge runner's command line spells the judge's parameters (`judge(rag_topics=...)` is
`--rag-topics`): the judge's errors name parameters (`UsageError.params`), and reach the runner's user in
these words."""

BANK_FORMATS = ("autojudge", "nuggetizer")
"""The formats of the banks the runner reads (`NuggetBanks`, `NuggetizerNuggetBanks`), each record's topic read
as Proctor's reader of that format reads it (`bank_topic`)."""

Origin = tuple[str, int | None]
"""A user's file and line (1-based; None where only the input is known)."""


def _lines(path: Path) -> Iterable[tuple[int, Any]]:
    """The JSON records of a JSONL file with their line numbers, read as Proctor's readers read it (plain or
    gzipped, whatever its name; a byte-order mark dropped): lines that are not JSON are skipped, and a file that
    cannot be read gives the records before the problem — origins only help name a line, the readers say what is
    wrong."""
    try:
        yield from jsonl_records(path, [], on_error="skip")
    except InputError:
        return


TOPIC_KEYS = ("topic_id", "narrative_id", "request_id")
"""Where a report's metadata names its topic, in the order AutoJudge's loader reads them (`topic_id`, else
`narrative_id`, which it copies into `topic_id`); `request_id` last (RAGTIME's requests)."""


def topic_of(meta: Any) -> str | None:
    """The topic id of a report's metadata: the mapping of its JSON record or the runner's parsed record."""
    values = meta if isinstance(meta, dict) else {k: getattr(meta, k, None) for k in TOPIC_KEYS}
    topic = next((values[k] for k in TOPIC_KEYS if values.get(k) is not None), None)
    return None if topic is None else str(topic)


def report_key(record: Any) -> tuple[str, str] | None:
    """(run, topic) of a report — its JSON record or the runner's parsed record — as the runner's loader reads
    it; None without metadata or topic."""
    meta = record.get("metadata") if isinstance(record, dict) else getattr(record, "metadata", None)
    if meta is None or (isinstance(record, dict) and not isinstance(meta, dict)):
        return None
    topic = topic_of(meta)
    run = meta.get("run_id") if isinstance(meta, dict) else getattr(meta, "run_id", None)
    return (str(run), topic) if topic is not None else None


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
            topic = next((t for fmt in BANK_FORMATS if (t := bank_topic(record, fmt)) is not None), None)
            if topic is not None:
                out.setdefault(str(topic), (str(path), number))
    return out


def relocated(error: InputError, copy: Path, origins: list[Origin | None], what: str) -> InputError:
    """The error of line N of the judge's copy as an error of the user's file and line it came from (the copy's
    N-th record is `origins[N-1]`); the parameter `what` (`rag_topics`, ...) names the input when its line is
    unknown, as the runner's command line spells it."""
    if Path(error.path) != copy or error.line is None:
        return error
    origin = origins[error.line - 1] if 0 < error.line <= len(origins) else None
    if origin is None:
        return InputError(RUNNER_OPTIONS.get(what, what), None, error.message)
    return InputError(origin[0], origin[1], error.message)
