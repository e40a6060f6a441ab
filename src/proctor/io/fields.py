"""Ids, and records of an id and a text, shared by the readers: JSON objects and TSV lines.

An id is a non-empty string without whitespace or control characters (it ends up in qrels, runs and TSV
files, which whitespace would corrupt); JSON integers, and floats with an integral value, are taken as their
decimal text (`7` and `7.0` give `"7"`); other floats, objects, lists, booleans, null and NaN are refused.
`as_id` is the one check every reader uses."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from proctor.errors import InputError
from proctor.io.textfile import read_lines

_NOT_IN_ID = re.compile(r"[\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Whitespace (Unicode's, as `str.isspace`), control characters (C0, DEL, C1) and lone surrogates."""


def as_id(value: Any, what: str) -> str:
    """`value` as an id; a ValueError saying what is wrong otherwise."""
    if type(value) is str and value and _NOT_IN_ID.search(value) is None:
        return value  # the common case, checked once
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        raise ValueError(f"{what} id must be a string or a number, got {_kind(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{what} id must be a string or a number, got {value!r}")
        if not value.is_integer():
            raise ValueError(f"{what} id {value!r} is a fractional number; write ids as strings or integers")
        value = int(value)
    if not isinstance(value, str | int):
        raise ValueError(f"{what} id must be a string or a number, got {type(value).__name__}")
    text = str(value)
    if not text:
        raise ValueError(f"{what} id is empty")
    bad = _NOT_IN_ID.search(text)
    if bad is not None:
        raise ValueError(f"{what} id {text!r} contains whitespace or a control character ({bad.group()!r})")
    return text


def record_id(path: str | Path, line: int | None, value: Any, what: str) -> str:
    """`as_id`, with errors naming the file and line."""
    try:
        return as_id(value, what)
    except ValueError as exc:
        raise InputError(str(path), line, str(exc)) from None


def _kind(value: Any) -> str:
    return {bool: "a boolean", type(None): "null", dict: "an object", list: "a list"}.get(type(value), repr(value))


def id_and_text(
    path: str | Path, line: int, obj: object, id_keys: Sequence[str], text_keys: Sequence[str], what: str
) -> tuple[str, str]:
    """The id and text of a JSON record, under the first of the accepted keys that is present."""
    if not isinstance(obj, dict):
        raise InputError(str(path), line, f"expected a JSON object with a {what} id and text")
    found = next((obj[k] for k in id_keys if k in obj), None)
    text = next((obj[k] for k in text_keys if k in obj), None)
    if not any(k in obj for k in id_keys) or not isinstance(text, str):
        raise InputError(str(path), line, f"expected keys {id_keys[0]!r} and {text_keys[0]!r} (string)")
    return record_id(path, line, found, what), text


def optional_text(value: object) -> str | None:
    """A query text given beside other data (bank files, responses): a string with something in it, else None
    (blank means "not given", as our own bank writers emit it for a query whose text is unknown)."""
    return value if isinstance(value, str) and value.strip() else None


def read_id_text_tsv(path: str | Path, what: str) -> list[tuple[int, str, str]]:
    """`(line, id, text)` from `id<TAB>text` lines (further tabs belong to the text)."""
    out = []
    for line, text in read_lines(path):
        if not text.strip():
            continue
        first, tab, rest = text.partition("\t")
        if not tab or not first.strip():
            raise InputError(str(path), line, f"expected `{what}_id<TAB>text`")
        out.append((line, record_id(path, line, first.strip(), what), rest.strip()))
    return out
