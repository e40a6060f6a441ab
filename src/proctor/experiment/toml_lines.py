"""Where a key sits in a TOML file: tomllib gives values without lines, so errors about a value find its
line with a small scan of the text (table headers `[t]`, `[[t]]` counted per name, then `key =`)."""

from __future__ import annotations

import re

_ARRAY = re.compile(r"^\s*\[\[\s*([^\]]+?)\s*\]\]")
_TABLE = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_.-]+))\s*=""")

Where = tuple[str | int, ...]
"""A table path: `()` for the top level, `("inputs",)`, `("grade", 1)` for the second `[[grade]]`."""


def key_line(text: str, table: Where, key: str | None = None) -> int | None:
    """The 1-based line of `key` in `table` (of the table's header when `key` is None); None if not found."""
    current: Where = ()
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _ARRAY.match(line) or _TABLE.match(line)
        if header and key is not None and table == () and header.group(1).strip().split(".")[0] == key:
            return number
        header = _ARRAY.match(line)
        if header:
            name = header.group(1).strip()
            seen[name] = seen.get(name, -1) + 1
            current = (name, seen[name])
        elif _TABLE.match(line):
            current = (_TABLE.match(line).group(1).strip(),)  # type: ignore[union-attr]
        else:
            found = _KEY.match(line)
            if found and key is not None and current == table:
                name = next(g for g in found.groups() if g is not None)
                if name == key or name.split(".")[0] == key:
                    return number
            continue
        if key is None and current == table:
            return number
    return None


def first_line(text: str, table: Where, key: str | None) -> int | None:
    """The line of `key` in `table`, else of the table's header, else None."""
    return key_line(text, table, key) or (key_line(text, table) if table else None)
