"""Read query (topic) files: JSON `{id: text}`, JSONL `{"query_id"|"id"|"qid": ..., "text"|"query": ...}`,
or TSV `id<TAB>text`."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import InputError
from proctor.io.fields import as_id, id_and_text, read_id_text_tsv, record_id
from proctor.io.textfile import JsonLines, iter_jsonl, looks_like_json, parse_json_document_located

ID_KEYS = ("query_id", "qid", "id", "_id", "topic_id")
TEXT_KEYS = ("text", "query", "query_text", "title")


def read_queries(path: str | Path) -> list[tuple[int, str, str]]:
    """Return `(line, query_id, text)` for every query in the file, in file order; a query id given twice or
    a query whose text is empty (or only whitespace) is an error, as an empty question text is."""
    rows, lines = _read_any(path)
    seen: dict[str, int] = {}
    for index, (_, qid, text) in enumerate(rows):
        if not text.strip():
            where = (lines.of(qid) or lines.of(index)) if lines else rows[index][0]
            raise InputError(str(path), where or rows[index][0], f"query {qid!r}: the text is empty")
        if qid in seen:
            first = lines.of(seen[qid]) if lines else rows[seen[qid]][0]
            raise InputError(str(path), lines.of(index) if lines else rows[index][0],
                             f"query {qid!r} given twice (first on line {first})")
        seen[qid] = index
    return rows


def _read_any(path: str | Path) -> tuple[list[tuple[int, str, str]], JsonLines | None]:
    """The rows, and for a JSON document where its items stand (rows of a JSON document say line 1)."""
    name = str(path).removesuffix(".gz")
    if name.endswith(".jsonl"):
        return _read_jsonl(path), None
    if name.endswith(".json") or looks_like_json(path):
        try:
            return _read_json(path)
        except InputError as exc:
            # A JSONL file without the .jsonl suffix fails as one document: read it line by line.
            if "Extra data" in exc.message:
                return _read_jsonl(path), None
            raise
    return read_id_text_tsv(path, "query"), None


def _read_json(path: str | Path) -> tuple[list[tuple[int, str, str]], JsonLines]:
    data, lines = parse_json_document_located(path)
    if isinstance(data, dict):
        out = []
        for qid, text in data.items():
            line = lines.of(qid) if not isinstance(text, str) or not _is_id(qid) else 1
            if not isinstance(text, str):
                raise InputError(str(path), line, f"query {qid!r}: text must be a string, got {type(text).__name__}")
            out.append((line, record_id(path, line, qid, "query"), text))
        return out, lines
    if isinstance(data, list):
        out = []
        for index, item in enumerate(data):
            try:
                out.append((1, *_record(path, 1, item)))
            except InputError as exc:
                raise InputError(str(path), lines.of(index), exc.message) from None
        return out, lines
    raise InputError(str(path), 1, "expected a JSON object {query_id: text} or a list of query records")


def _is_id(value: str) -> bool:
    try:
        as_id(value, "query")
    except ValueError:
        return False
    return True


def _read_jsonl(path: str | Path) -> list[tuple[int, str, str]]:
    return [(line, *_record(path, line, obj)) for line, obj in iter_jsonl(path)]


def _record(path: str | Path, line: int, obj: object) -> tuple[str, str]:
    return id_and_text(path, line, obj, ID_KEYS, TEXT_KEYS, "query")
