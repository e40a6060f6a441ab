"""Read passage corpora: JSONL `{"id"|"passage_id"|"docid"|"pid"|"_id": ..., "text"|"contents": ...}`
(an optional `title` is put before the text) or TSV `id<TAB>text`."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import InputError, text_difference
from proctor.io.fields import id_and_text, read_id_text_tsv
from proctor.io.textfile import iter_jsonl, looks_like_json

ID_KEYS = ("id", "passage_id", "paragraph_id", "docid", "pid", "_id", "doc_id")
TEXT_KEYS = ("text", "contents", "passage", "body")


def read_corpus(path: str | Path) -> list[tuple[int, str, str]]:
    """Return `(line, passage_id, text)` for every passage."""
    rows = ([_record(path, line, obj) for line, obj in iter_jsonl(path)] if looks_like_json(path)
            else read_id_text_tsv(path, "passage"))
    seen: dict[str, tuple[int, str]] = {}
    out = []
    for line, pid, text in rows:
        if not text.strip():  # an empty text would be graded as if it were the passage: give none instead
            raise InputError(str(path), line, f"passage {pid!r}: the text is empty (leave the passage out: a "
                             "passage without text is unjudgeable, never graded)")
        if pid in seen:
            if seen[pid][1] != text:
                raise InputError(str(path), line, f"passage {pid!r} given again with another text (first on line "
                                 f"{seen[pid][0]}; {text_difference(seen[pid][1], text)})")
            continue  # an identical duplicate is harmless
        seen[pid] = (line, text)
        out.append((line, pid, text))
    return out


def _record(path: str | Path, line: int, obj: object) -> tuple[int, str, str]:
    pid, text = id_and_text(path, line, obj, ID_KEYS, TEXT_KEYS, "passage")
    title = obj.get("title")  # type: ignore[union-attr]
    if isinstance(title, str) and title.strip():
        text = f"{title.strip()}\n{text}"
    return line, pid, text
