"""Ids, and records of an id and a text, shared by the readers: JSON objects and TSV lines.

An id is a non-empty string without whitespace, control characters or invisible ones (it ends up in qrels, runs
and TSV files, which whitespace would corrupt; an invisible character makes two ids that read the same); JSON
integers, and floats with an integral value, are taken as their decimal text (`7` and `7.0` give `"7"`); other
floats, objects, lists, booleans, null and NaN are refused.
`as_id` is the one check every reader uses."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from proctor.errors import InputError, code_point
from proctor.io.textfile import read_lines

_INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
              "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
              "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
              "\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0\ufe00-\ufe0f")
"""Unicode's format characters (category Cf: zero-width space and joiners, soft hyphen, direction marks and
overrides, BOM, tags), then the fillers and variation selectors that show nothing."""

_NOT_IN_ID = re.compile(f"[\\s\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff{_INVISIBLE}]")
"""Whitespace (Unicode's, as `str.isspace`), control characters (C0, DEL, C1), lone surrogates and invisible
characters."""

_NOT_IN_ASCII_ID = re.compile(r"[\x00-\x20\x7f]")
"""What `_NOT_IN_ID` finds in an ASCII id (the common case, checked twice as fast)."""


def as_id(value: Any, what: str) -> str:
    """`value` as an id; a ValueError saying what is wrong otherwise."""
    if type(value) is str and value and (_NOT_IN_ASCII_ID if value.isascii() else _NOT_IN_ID).search(value) is None:
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
        char = bad.group()
        control = unicodedata.category(char) in ("Cc", "Cs")
        kind = ("whitespace or a control character" if control and char.isspace() else "whitespace" if char.isspace()
                else "a control character" if control else "an invisible character")
        raise ValueError(f"{what} id {text!r} contains {kind}, {code_point(char)}: an id must read as it is")
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
