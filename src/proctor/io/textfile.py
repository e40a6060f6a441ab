"""Line-by-line reading of plain or gzipped text files with errors that name the file and the line.

Every reader in `proctor.io` goes through `read_lines`, so a missing file, an empty file, a truncated gzip
stream or undecodable bytes are reported the same way everywhere.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from proctor.errors import InputError


def _open_binary(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_lines(path: str | Path, *, allow_empty: bool = False) -> Iterator[tuple[int, str]]:
    """Yield `(line_number, text)` for every line (newline stripped), numbering from 1.

    Raises `InputError` naming the file and line for a missing file, undecodable bytes, a truncated or
    corrupt gzip stream, and (unless `allow_empty`) a file with no non-blank line.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such file")
    if path.is_dir():
        raise InputError(str(path), None, "is a directory, expected a file")
    line_no = 0
    seen_content = False
    try:
        with _open_binary(path) as handle:
            for line_no, raw in enumerate(handle, start=1):  # noqa: B007 - line_no used after the loop
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        str(path), line_no, f"undecodable bytes (not UTF-8) at column {exc.start + 1}"
                    ) from None
                text = text.rstrip("\r\n")
                if line_no == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                if text.strip():
                    seen_content = True
                yield line_no, text
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        reason = "truncated gzip stream" if isinstance(exc, EOFError) else f"corrupt gzip stream ({exc})"
        raise InputError(str(path), line_no + 1, reason) from None
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    if not seen_content and not allow_empty:
        raise InputError(str(path), 1, "file is empty")


def read_text(path: str | Path) -> str:
    """The whole file as text (via `read_lines`, so every error names a line)."""
    return "\n".join(text for _, text in read_lines(path))


def parse_json_document(path: str | Path) -> Any:
    """Parse a file holding one JSON document; syntax errors and conflicting duplicate keys name the line."""
    text = read_text(path)
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except _DuplicateKey as exc:
        raise InputError(str(path), None, str(exc)) from None


def parse_json_line(path: str | Path, line_no: int, text: str) -> Any:
    """Parse one JSONL line; syntax errors name the line."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), line_no, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except _DuplicateKey as exc:
        raise InputError(str(path), line_no, str(exc)) from None


class _DuplicateKey(ValueError):
    """A JSON object that gives one key two different values."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice with different values is an error (identical repeats are harmless)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise _DuplicateKey(f"key {key!r} given twice with different values in one JSON object")
        out[key] = value
    return out


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield `(line_number, object)` for each non-blank line of a JSONL file (plain or gzipped)."""
    for line_no, text in read_lines(path):
        if text.strip():
            yield line_no, parse_json_line(path, line_no, text)


def looks_like_json(path: str | Path) -> bool:
    """True when the first non-blank character of the file is `{` or `[`."""
    for _, text in read_lines(path):
        stripped = text.strip()
        if stripped:
            return stripped[0] in "{["
    return False
