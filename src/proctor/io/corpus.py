"""Read passage corpora: JSONL `{"id"|"passage_id"|"docid"|"pid"|"_id": ..., "text"|"contents": ...}`
(an optional `title` is put before the text) or TSV `id<TAB>text`."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import InputError
from proctor.io.textfile import iter_jsonl, looks_like_json, read_lines

ID_KEYS = ("id", "passage_id", "paragraph_id", "docid", "pid", "_id", "doc_id")
TEXT_KEYS = ("text", "contents", "passage", "body")


def read_corpus(path: str | Path) -> list[tuple[int, str, str]]:
    """Return `(line, passage_id, text)` for every passage."""
    if looks_like_json(path):
        return [_record(path, line, obj) for line, obj in iter_jsonl(path)]
    out = []
    for line, text in read_lines(path):
        if not text.strip():
            continue
        parts = text.split("\t")
        if len(parts) < 2 or not parts[0].strip():
            raise InputError(str(path), line, "expected `passage_id<TAB>text`")
        out.append((line, parts[0].strip(), "\t".join(parts[1:]).strip()))
    return out


def _record(path: str | Path, line: int, obj: object) -> tuple[int, str, str]:
    if not isinstance(obj, dict):
        raise InputError(str(path), line, "expected a JSON object with a passage id and text")
    pid = next((obj[k] for k in ID_KEYS if k in obj), None)
    text = next((obj[k] for k in TEXT_KEYS if k in obj), None)
    if pid is None or not isinstance(text, str):
        raise InputError(str(path), line, f"expected keys {ID_KEYS[0]!r} and {TEXT_KEYS[0]!r} (string)")
    title = obj.get("title")
    if isinstance(title, str) and title.strip():
        text = f"{title.strip()}\n{text}"
    return line, str(pid), text
