"""Read query (topic) files: JSON `{id: text}`, JSONL `{"query_id"|"id"|"qid": ..., "text"|"query": ...}`,
or TSV `id<TAB>text`."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import InputError
from proctor.io.records import id_and_text, read_id_text_tsv, record_id
from proctor.io.textfile import iter_jsonl, looks_like_json, parse_json_document

ID_KEYS = ("query_id", "qid", "id", "_id", "topic_id")
TEXT_KEYS = ("text", "query", "query_text", "title")


def read_queries(path: str | Path) -> list[tuple[int, str, str]]:
    """Return `(line, query_id, text)` for every query in the file, in file order; a query id given twice is
    an error."""
    rows = _read_any(path)
    seen: dict[str, int] = {}
    for line, qid, _ in rows:
        if qid in seen:
            raise InputError(str(path), line, f"query {qid!r} given twice (first on line {seen[qid]})")
        seen[qid] = line
    return rows


def _read_any(path: str | Path) -> list[tuple[int, str, str]]:
    name = str(path).removesuffix(".gz")
    if name.endswith(".jsonl"):
        return _read_jsonl(path)
    if name.endswith(".json") or looks_like_json(path):
        try:
            return _read_json(path)
        except InputError as exc:
            # A JSONL file without the .jsonl suffix fails as one document: read it line by line.
            if "Extra data" in exc.message:
                return _read_jsonl(path)
            raise
    return read_id_text_tsv(path, "query")


def _read_json(path: str | Path) -> list[tuple[int, str, str]]:
    data = parse_json_document(path)
    if isinstance(data, dict):
        out = []
        for qid, text in data.items():
            if not isinstance(text, str):
                raise InputError(str(path), None, f"query {qid!r}: text must be a string, got {type(text).__name__}")
            out.append((1, record_id(path, None, qid, "query"), text))
        return out
    if isinstance(data, list):
        return [(1, *_record(path, 1, item)) for item in data]
    raise InputError(str(path), 1, "expected a JSON object {query_id: text} or a list of query records")


def _read_jsonl(path: str | Path) -> list[tuple[int, str, str]]:
    return [(line, *_record(path, line, obj)) for line, obj in iter_jsonl(path)]


def _record(path: str | Path, line: int, obj: object) -> tuple[str, str]:
    return id_and_text(path, line, obj, ID_KEYS, TEXT_KEYS, "query")
