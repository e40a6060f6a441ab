"""Replies that are a Python list of labels, one per item (nuggetizer's importance and assignment prompts):
parsed as nuggetizer parses them (code fences removed, `ast.literal_eval`), a little more forgiving of text
around the list, and strict about the rest: exactly one known label per item, or the reply is unusable."""

from __future__ import annotations

import ast
import re

_LIST = re.compile(r"\[[^\[\]]*\]", re.S)


def parse_labels(reply: str | None, count: int, allowed: tuple[str, ...]) -> tuple[list[str] | None, str]:
    """`(labels, "")` with one lower-cased label of `allowed` per item, or `(None, reason)`."""
    if not reply or not reply.strip():
        return None, "empty reply"
    text = reply.replace("```python", "").replace("```", "").strip()
    candidates = [text] + [m.group(0) for m in _LIST.finditer(text)]
    for candidate in candidates:
        try:
            value = ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            continue
        labels = [v.strip().lower() for v in value]
        if len(labels) != count:
            return None, f"{len(labels)} labels for {count} items"
        unknown = sorted({label for label in labels if label not in allowed})
        if unknown:
            return None, f"unknown label {unknown[0]!r} (expected {', '.join(allowed)})"
        return labels, ""
    return None, "no Python list of labels in the reply"


def python_list(texts: list[str]) -> str:
    """A list of texts as nuggetizer puts it into a prompt (`str.format` of a Python list: its repr)."""
    return repr(list(texts))


def parse_text_list(reply: str | None) -> tuple[list[str] | None, str]:
    """A Python list of texts (nuggetizer's creator reply), e.g. `["a", "b"]`; None with the reason otherwise."""
    if not reply or not reply.strip():
        return None, "empty reply"
    text = reply.replace("```python", "").replace("```", "").strip()
    for candidate in [text] + [m.group(0) for m in _LIST.finditer(text)]:
        try:
            value = ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value if v.strip()], ""
    return None, "no Python list of nuggets in the reply"
