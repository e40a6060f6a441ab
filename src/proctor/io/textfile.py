"""Line-by-line reading of plain or gzipped text files with errors that name the file and the line.

Every reader in `proctor.io` goes through `read_lines`, so a missing file, an empty file, a truncated gzip
stream or undecodable bytes are reported the same way everywhere.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import json.decoder
import json.scanner
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from jiter import from_json as _jiter

from proctor.errors import InputError
from proctor.options.inputs import ImportOptions


def _open_binary(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"\x1f":  # one byte: the start of a gzip header, cut
        raise EOFError("a gzip stream cut in its header")
    return open(path, "rb", buffering=_BUFFER)


_BUFFER = 1 << 22
"""Bytes read at a time from a plain file: a line of an exam_pp file holds about 700 KB, which the default 8 KB buffer
reads in about ninety pieces (the line iteration of a large file took three times as long)."""


def _where_gzip_stops(path: Path) -> tuple[int, str]:
    """The line where a truncated gzip file's data stops, and how it stops (read again from the start: the
    buffered reader drops the data of a line that was cut)."""
    lines, last = 0, b"\n"
    with open(path, "rb") as raw:
        decompressor, data = zlib.decompressobj(wbits=31), raw.read(1 << 20)
        with contextlib.suppress(zlib.error):
            while data:
                out = decompressor.decompress(data)
                lines, last = lines + out.count(b"\n"), out[-1:] or last
                if decompressor.eof and decompressor.unused_data:  # the next member of a multi-member file
                    decompressor, data = zlib.decompressobj(wbits=31), decompressor.unused_data
                    continue
                data = raw.read(1 << 20)
    if last != b"\n":
        return lines + 1, f"truncated gzip stream (it stops within line {lines + 1})"
    if lines == 0:
        return 1, "truncated gzip stream (it stops before its first line)"
    return lines, f"truncated gzip stream (it stops after line {lines}, without its end marker)"


def line_heads(path: str | Path, size: int = 1024) -> Iterator[tuple[int, bytes | None]]:
    """`(line_number, first size bytes)` of every line, undecoded and unchecked (a BOM dropped; None for a line
    that is empty or whitespace and shorter than `size`): a quick pass before the real reading, which
    `read_lines` checks. Only the heads are copied, the file is read in large chunks. Errors are OSError,
    EOFError, zlib.error or gzip.BadGzipFile."""
    with _open_binary(Path(path)) as handle:
        for line_no, (head, length) in enumerate(_heads(handle, size), start=1):
            if line_no == 1 and head.startswith(b"\xef\xbb\xbf"):
                head, length = head[3:], length - 3
            yield line_no, None if length <= size and (not head or head.isspace()) else head


def _heads(handle, size: int, chunk_bytes: int = 1 << 22) -> Iterator[tuple[bytes, int]]:
    """(first `size` bytes, length) of each line of a binary file, read in chunks of `chunk_bytes`."""
    head, length = b"", 0
    while chunk := handle.read(chunk_bytes):
        start, end_of_chunk = 0, len(chunk)
        while start < end_of_chunk:
            stop = chunk.find(b"\n", start)
            end = end_of_chunk if stop < 0 else stop + 1
            if length < size:
                head += chunk[start:min(end, start + size - length)]
            length += end - start
            if stop < 0:
                break
            yield head, length
            head, length, start = b"", 0, end
    if length:
        yield head, length


def read_lines(path: str | Path, *, allow_empty: bool = False) -> Iterator[tuple[int, str]]:
    """Yield `(line_number, text)` for every line (newline stripped), numbering from 1.

    Raises `InputError` naming the file and line for a missing file, undecodable bytes, a truncated or
    corrupt gzip stream, and (unless `allow_empty`) a file with no non-blank line.
    """
    for line_no, text, _ in _lines(Path(path), allow_empty=allow_empty):
        yield line_no, text  # type: ignore[misc]


_SLOW = object()
"""What `_fast_json` gives for a line it leaves to `json.loads` (and `_lines` for a line it decoded instead)."""


def _lines(path: Path, *, allow_empty: bool = False, parse: Callable[[bytes], Any] | None = None
           ) -> Iterator[tuple[int, str | None, Any]]:
    """`(line_number, text, _SLOW)` of every line as `read_lines` gives it, or `(line_number, None, value)` for a line
    `parse` turned into a value (from its undecoded bytes; a line it gives `_SLOW` for is decoded as usual)."""
    if not path.exists():
        raise InputError(str(path), None, "no such file")
    if path.is_dir():
        raise InputError(str(path), None, "is a directory, expected a file")
    line_no = 0
    seen_content = False
    try:
        with _open_binary(path) as handle:
            for line_no, raw in enumerate(handle, start=1):  # noqa: B007 - line_no used after the loop
                if parse is not None and (value := parse(raw)) is not _SLOW:
                    seen_content = True
                    yield line_no, None, value
                    continue
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
                yield line_no, text, _SLOW
    except EOFError:
        raise InputError(str(path), *_where_gzip_stops(path)) from None
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(str(path), line_no + 1, f"corrupt gzip stream ({exc})") from None
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    if not seen_content and not allow_empty:
        raise InputError(str(path), 1, "file is empty")


def _fast_json(raw: bytes) -> Any:
    """The value of one JSONL line by `jiter` (about three times as fast as `json.loads` with `_unique_keys`), or
    `_SLOW` for a line it refuses, which `json.loads` then reads as before (same values, same messages).

    jiter gives `json.loads`'s value wherever it accepts a line (floats to the bit, integers of any length up to
    Python's 4300 digits, -0.0; tests compare the two on random and edge inputs) and refuses more: any key given
    twice (`_unique_keys` refuses only two different values), NaN and Infinity (`allow_inf_nan=False`), lone
    UTF-16 surrogate escapes (which `_loads` refuses too, with its own message), more digits than Python takes,
    deeper nesting than its own limit, a byte order mark. A line that is not ASCII is checked as UTF-8 first (its
    error is `_lines`' to report). Strings of up to 64 bytes are shared across lines (`cache_mode="all"`: ids
    recur on every line)."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return _SLOW
    try:
        return _jiter(raw, catch_duplicate_keys=True, cache_mode="all", allow_inf_nan=False)
    except ValueError:
        return _SLOW


def read_text(path: str | Path) -> str:
    """The whole file as text (via `read_lines`, so every error names a line)."""
    return "\n".join(text for _, text in read_lines(path))


def parse_json_document(path: str | Path) -> Any:
    """Parse a file holding one JSON document; syntax errors and conflicting duplicate keys name the line."""
    return parse_json_document_located(path)[0]


def parse_json_document_located(path: str | Path) -> tuple[Any, JsonLines]:
    """`parse_json_document`, and where the items of its top-level list or object stand (for errors)."""
    text = read_text(path)
    return _loads(path, None, text), JsonLines(text)


def parse_json_line(path: str | Path, line_no: int, text: str) -> Any:
    """Parse one JSONL line; syntax errors, conflicting duplicate keys and lone surrogates name the line."""
    return _loads(path, line_no, text)


def _loads(path: str | Path, line_no: int | None, text: str) -> Any:
    """`json.loads` with every failure an `InputError` naming `line_no` (the line of a one-line text) or the
    line in `text` where the error is."""
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), line_no or exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except _DuplicateKey as exc:
        raise InputError(str(path), line_no or JsonLines(text).duplicate_key_line(), str(exc)) from None
    except RecursionError:
        raise InputError(str(path), line_no, "invalid JSON: nested too deeply") from None
    except ValueError:  # what is left is Python's limit on digits
        raise InputError(str(path), line_no, "invalid JSON: a number of more than 4300 digits") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(str(path), line_no or _line_of_lone_surrogate(text),
                             f"invalid JSON: a \\u escape of a lone UTF-16 surrogate ({exc.object[exc.start]!r}), "
                             "which is no character") from None
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_HIGH = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _line_of_lone_surrogate(text: str) -> int | None:
    """The line of the first surrogate escape that is not half of a pair."""
    for match in _SURROGATE_ESCAPE.finditer(text):
        if _HIGH.fullmatch(match.group()):
            paired = _LOW.match(text, match.end()) is not None
        else:
            paired = match.start() >= 6 and _HIGH.fullmatch(text, match.start() - 6, match.start()) is not None
        if not paired:
            return text.count("\n", 0, match.start()) + 1
    return None


class _DuplicateKey(ValueError):
    """A JSON object that gives one key two different values."""

    def __init__(self, key: str, index: int | None = None) -> None:
        super().__init__(f"key {key!r} given twice with different values in one JSON object")
        self.index = index


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice with different values is an error (identical repeats are harmless)."""
    out = dict(pairs)
    if len(out) == len(pairs):  # no key given twice (the common case, without a Python loop)
        return out
    out = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class JsonLines:
    """Lines in a JSON document, found only when an error needs one (by parsing the text again, slowly, with
    the positions of values): `of(key_or_index)` is the line of a value of the top-level object or list."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._top: dict[str | int, int] | None = None

    def of(self, key: str | int) -> int | None:
        if self._top is None:
            self._top = {}
            with contextlib.suppress(ValueError, RecursionError):
                self._decode()
        return self._top.get(key)

    def duplicate_key_line(self) -> int | None:
        try:
            self._decode()
        except _DuplicateKey as exc:
            return self._line(exc.index) if exc.index is not None else None
        except (ValueError, RecursionError):
            pass
        return None

    def _line(self, index: int) -> int:
        return self.text.count("\n", 0, index) + 1

    def _decode(self) -> None:
        """Parse again with the pure-Python scanner, whose object and array parsers can be replaced."""
        top = len(self.text) - len(self.text.lstrip())

        def recording(scan_once, starts: list[int]):
            def scan(string: str, index: int):
                starts.append(index)
                return scan_once(string, index)
            return scan

        def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
            starts: list[int] = []
            pairs, end = json.decoder.JSONObject(s_and_end, strict, recording(scan_once, starts), None, list, memo)
            out: dict[str, Any] = {}
            for (key, value), start in zip(pairs, starts, strict=True):
                if key in out and out[key] != value:
                    raise _DuplicateKey(key, start)
                out[key] = value
                if s_and_end[1] - 1 == top and self._top is not None:
                    self._top.setdefault(key, self._line(start))
            return out, end

        def parse_array(s_and_end, scan_once):
            starts: list[int] = []
            items, end = json.decoder.JSONArray(s_and_end, recording(scan_once, starts))
            if s_and_end[1] - 1 == top and self._top is not None:
                self._top.update((i, self._line(start)) for i, start in enumerate(starts))
            return items, end

        decoder = json.JSONDecoder()
        decoder.parse_object = parse_object  # type: ignore[assignment]
        decoder.parse_array = parse_array  # type: ignore[assignment]
        decoder.scan_once = json.scanner.py_make_scanner(decoder)
        decoder.decode(self.text)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield `(line_number, object)` for each non-blank line of a JSONL file (plain or gzipped)."""
    return jsonl_records(path, [], on_error="stop")


def jsonl_records(path: str | Path, skipped: list, on_error: str = ImportOptions.on_error) -> Iterator[tuple[int, Any]]:
    """`iter_jsonl`, except that with `on_error="skip"` lines that are not JSON are appended to `skipped`
    (as `InputError`s naming file and line) instead of stopping the reading."""
    for line_no, text, value in _lines(Path(path), parse=_fast_json):
        if value is not _SLOW:
            yield line_no, value
            continue
        if not text.strip():  # type: ignore[union-attr]
            continue
        try:
            value = parse_json_line(path, line_no, text)  # type: ignore[arg-type]
        except InputError as exc:
            if on_error != "skip":
                raise
            skipped.append(exc)
            continue
        yield line_no, value


def looks_like_json(path: str | Path) -> bool:
    """True when the first non-blank character of the file is `{` or `[`."""
    for _, text in read_lines(path):
        stripped = text.strip()
        if stripped:
            return stripped[0] in "{["
    return False
