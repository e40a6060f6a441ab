"""Escaping text that goes into Markdown: anything a system, query or question id or a text from an input
file carries must print as text — no raw HTML, no links (`javascript:` or any other), no table breaks."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def escape(value: object) -> str:
    """`value` as Markdown text: HTML special characters as entities, Markdown punctuation backslashed,
    line breaks as spaces (so a cell stays one cell and a heading one line)."""
    text = str(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIAL.sub(r"\\\1", text)
    return text.replace("javascript:", "javascript&#58;")
