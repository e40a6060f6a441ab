"""Records of an id and a text, shared by the query and corpus readers: JSON objects and TSV lines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from proctor.errors import InputError
from proctor.io.textfile import read_lines


def id_and_text(
    path: str | Path, line: int, obj: object, id_keys: Sequence[str], text_keys: Sequence[str], what: str
) -> tuple[str, str]:
    """The id and text of a JSON record, under the first of the accepted keys that is present."""
    if not isinstance(obj, dict):
        raise InputError(str(path), line, f"expected a JSON object with a {what} id and text")
    record_id = next((obj[k] for k in id_keys if k in obj), None)
    text = next((obj[k] for k in text_keys if k in obj), None)
    if record_id is None or not isinstance(text, str):
        raise InputError(str(path), line, f"expected keys {id_keys[0]!r} and {text_keys[0]!r} (string)")
    return str(record_id), text


def read_id_text_tsv(path: str | Path, what: str) -> list[tuple[int, str, str]]:
    """`(line, id, text)` from `id<TAB>text` lines (further tabs belong to the text)."""
    out = []
    for line, text in read_lines(path):
        if not text.strip():
            continue
        record_id, tab, rest = text.partition("\t")
        if not tab or not record_id.strip():
            raise InputError(str(path), line, f"expected `{what}_id<TAB>text`")
        out.append((line, record_id.strip(), rest.strip()))
    return out
