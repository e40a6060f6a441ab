"""Content hashes: of input files (folders of runs file by file) and of step descriptions (canonical JSON)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from proctor import __version__


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def expand(path: Path) -> list[Path]:
    """A file, or the files of a folder (sorted, hidden files left out)."""
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    return [path]


def step_digest(description: dict[str, Any]) -> str:
    """SHA-256 over a step's description and the Proctor version (canonical JSON)."""
    text = json.dumps({"proctor": __version__, **description}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
