"""Writing output files safely: every file goes to a temporary file in its target's folder and is renamed
into place — never half-written, never written through a symlink (the rename replaces the link itself),
no leftovers on failure — and a wrong target (a folder where a file is wanted, a missing folder) is a
clear usage error."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from proctor.errors import UsageError


def file_target(path: str | Path, option: str = "--out") -> Path:
    """A path a file can be written to, or a usage error saying why not (naming `option`; a parameter's
    `{name}` marker names it as `UsageError.params` do)."""
    target = Path(path)
    if target.is_dir() and not target.is_symlink():
        raise UsageError(f"{option} {target}: is a folder; give the name of a file to write", params=_named(option))
    if not target.parent.is_dir():
        raise UsageError(f"{option} {target}: folder {target.parent} does not exist", params=_named(option))
    return target


def folder_target(path: str | Path, option: str = "--out") -> Path:
    """A folder to write into (created when missing), or a usage error when something else is there (naming
    `option` as `file_target` does)."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{option} {target}: exists and is not a folder", params=_named(option))
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {target}: cannot create the folder ({exc.strerror})",
                         params=_named(option)) from None
    return target


def _named(option: str) -> tuple[str, ...]:
    """The parameter a `{name}` marker names (none for an option spelled out)."""
    return (option[1:-1],) if option.startswith("{") and option.endswith("}") else ()


@contextlib.contextmanager
def atomic_file(path: str | Path, *, binary: bool = False) -> Iterator[IO]:
    """Open a temporary file next to `path`; on success it replaces `path` (a symlink there is replaced,
    not followed); on failure it is removed."""
    target = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(handle, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as out:
            yield out
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write a text file atomically."""
    with atomic_file(path) as out:
        out.write(text)


def temporary_path(path: str | Path) -> Path:
    """A fresh temporary path next to `path` with the same suffix (for writers that want a file name)."""
    target = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix or ".partial", dir=target.parent)
    os.close(handle)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; every output is 0644 (as atomic_file's)
    return Path(tmp)


def format_of(result: Any, fmt: str | None) -> str:
    """The format `fmt` of a result (None: the first of its `formats`), or a `UsageError` naming the ones it has."""
    fmt = fmt or result.formats[0]
    if fmt not in result.formats:
        raise UsageError(f"unknown format {fmt!r}: {', '.join(result.formats)}")
    return fmt


def json_text(data: Any) -> str:
    """JSON as every command writes it: indented by 2, with a final newline."""
    return json.dumps(data, indent=2) + "\n"
