"""Cut generated text into passages: sentences joined up to ~400 tokens (003 §4.2: paragraph-sized plain
text passages of up to 400 tokens), and fair word budgets (001 §3.1.2). Sentences are found by pysbd
(rule-based sentence boundary disambiguation, Golden Rules for English): abbreviations such as "Dr.",
"Mr.", "e.g." and "U.S." and decimals such as "3.5" do not end sentences; blank lines always do."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_PARAGRAPH = re.compile(r"\n\s*\n")
_TOKEN = re.compile(r"\w+|[^\w\s]")

MAX_TOKENS = 400
"""The longest segment, in tokens, a response is cut into by default."""


def count_tokens(text: str) -> int:
    """Tokens as words and punctuation marks (close to what subword tokenizers count for English)."""
    return len(_TOKEN.findall(text))


def sentences(text: str) -> list[str]:
    """The sentences of a text (pysbd, English), paragraphs (blank lines) never joined."""
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        if paragraph.strip():
            out.extend(s.strip() for s in _segmenter().segment(paragraph) if s.strip())
    return out


@cache
def _segmenter() -> Any:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def segment(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Passages of whole sentences, each at most `max_tokens` tokens (a longer sentence is cut by words)."""
    units: list[str] = []
    for sentence in sentences(text):
        units.extend(_pack(sentence.split(), max_tokens) if count_tokens(sentence) > max_tokens else [sentence])
    return _pack(units, max_tokens)


def _pack(units: list[str], max_tokens: int) -> list[str]:
    """Join consecutive units greedily into chunks of at most `max_tokens` tokens."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        n = count_tokens(unit)
        if size + n > max_tokens and current:
            chunks.append(" ".join(current))
            current, size = [], 0
        current.append(unit)
        size += n
    if current:
        chunks.append(" ".join(current))
    return chunks


def truncate_words(text: str, budget: int | None) -> tuple[str, bool]:
    """The first `budget` words of a text (all systems get the same budget); True when cut."""
    if budget is None:
        return text, False
    words = text.split()
    if len(words) <= budget:
        return text, False
    return " ".join(words[:budget]), True
