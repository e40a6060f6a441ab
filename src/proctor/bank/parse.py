"""Pull a list of questions (or nuggets) out of an LLM reply: JSON objects or bare lists, inside code
fences or followed by trailing text; numbered lists as a last resort. Duplicates are removed."""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$", re.M)
KEYS = ("questions", "nuggets", "items", "key_facts", "facts")


def extract_items(reply: str | None) -> list[str] | None:
    """The items in a reply, in order, without duplicates; None when nothing usable is found."""
    if not reply or not reply.strip():
        return None
    for candidate in _candidates(reply):
        items = _items_of(candidate)
        if items:
            return dedupe(items)
    numbered = [m.group(1).strip().strip('"') for m in _NUMBERED.finditer(reply)]
    numbered = [n for n in numbered if len(n.split()) >= 3]
    return dedupe(numbered) if len(numbered) >= 2 else None


def dedupe(items: list[str]) -> list[str]:
    """Drop empty items and repeats (case and spacing ignored), keeping the first."""
    seen, out = set(), []
    for item in items:
        text = " ".join(item.split())
        key = text.lower().rstrip("?.! ")
        if text and key not in seen:
            seen.add(key)
            out.append(text)
    return out


def _candidates(reply: str):
    for block in _FENCE.findall(reply):
        yield from _json_values(block)
    yield from _json_values(reply)


def _json_values(text: str):
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            yield value


def _items_of(value) -> list[str] | None:
    if isinstance(value, dict):
        for key in KEYS:
            if isinstance(value.get(key), list):
                return _items_of(value[key])
        lists = [v for v in value.values() if isinstance(v, list)]
        return _items_of(lists[0]) if len(lists) == 1 else None
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                text = next((item[k] for k in ("question", "question_text", "nugget", "nugget_text", "text")
                             if isinstance(item.get(k), str)), None)
                if text is None:
                    return None
                out.append(text)
            else:
                return None
        return out or None
    return None
