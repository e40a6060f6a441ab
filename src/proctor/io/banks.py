"""Read question banks in both formats of the original workbench (exam_pp).

One JSON line per query (or per query facet): `{query_id, facet_id, test_collection, query_text, info,
items: [...]}` (current format) or `... questions: [...]` (older format). An item is a question
(`question_id`, `question_text`, optional `gold_answers`) or a nugget (`nugget_id`, `nugget_text`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.errors import InputError
from proctor.io.fields import optional_text, record_id
from proctor.io.textfile import jsonl_records
from proctor.options.inputs import ImportOptions

ANSWER_KEYS = ("gold_answers", "answers", "answer", "gold_answer")
IMPORTANCE = ("vital", "okay")
"""Nugget importance as AutoNuggetizer labels it: vital (a good answer must have it) or okay."""


def check_importance(path: str | Path, line: int | None, value: object, what: str) -> str | None:
    """A valid importance (`vital`/`okay`, case-insensitive) or None when absent; anything else is an error."""
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().lower() not in IMPORTANCE:
        raise InputError(str(path), line, f"{what}: unknown importance {value!r} (expected vital or okay)")
    return value.strip().lower()


@dataclass
class Bank:
    """A parsed bank: its questions (dicts ready for `Store.replace_bank`) and the query texts it names."""

    questions: list[dict[str, Any]] = field(default_factory=list)
    query_texts: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    skipped: list[InputError] = field(default_factory=list)
    """Bad lines left out when read with `on_error="skip"`."""
    notes: list[str] = field(default_factory=list)
    """What the reader merged (identical repeats of an item inside one line), for the terminal."""

    @property
    def version(self) -> str:
        """A digest of the bank's content: same questions, same version."""
        digest = hashlib.sha256()
        for q in sorted(self.questions, key=lambda q: q["question_id"]):
            key = (q["question_id"], q["query_id"], q.get("facet_id"), q["kind"], q["text"], q.get("answers"))
            info = q.get("info") or {}
            importance = info.get("importance")
            key = key + (importance,) if importance else key
            digest.update(repr(key + ("spurious",) if info.get("spurious") else key).encode())
        return digest.hexdigest()[:12]


def is_spurious(question: dict[str, Any]) -> bool:
    """A question a reviewer marked spurious: kept in its bank version (text, mark, audit trail) but never
    graded and never counted in labels or cover."""
    return bool((question.get("info") or {}).get("spurious"))


def read_bank(path: str | Path, on_error: str = ImportOptions.on_error) -> Bank:
    """Parse a bank file (plain or gzipped JSONL); every problem names the file and the line. With
    `on_error="skip"` a bad line is left out whole and reported in `Bank.skipped`."""
    bank = Bank()
    for line, obj in jsonl_records(path, bank.skipped, on_error):
        try:
            questions = _line(path, line, obj, bank)
        except InputError as exc:
            if on_error != "skip":
                raise
            bank.skipped.append(exc)
            continue
        for question in questions:
            bank.lines[question["question_id"]] = line
            bank.questions.append(question)
    return bank


def _line(path: str | Path, line: int, obj: Any, bank: Bank) -> list[dict[str, Any]]:
    """One workbench line's questions (the bank's query texts, info and merge notes noted on the way)."""
    if not isinstance(obj, dict):
        raise InputError(str(path), line, "expected a JSON object per line")
    items = obj.get("items", obj.get("questions"))
    if not isinstance(items, list):
        raise InputError(str(path), line, "expected a list under key 'items' (or the older 'questions')")
    if obj.get("query_id") is None:
        raise InputError(str(path), line, "missing 'query_id'")
    query_id = record_id(path, line, obj["query_id"], "query")
    facet_id = obj.get("facet_id")
    text = obj.get("query_text")
    questions = _line_items(bank, path, line, [_item(path, line, item, query_id, facet_id, text) for item in items])
    if optional_text(text) is not None and facet_id is None:
        bank.query_texts.setdefault(query_id, text)
    if isinstance(obj.get("info"), dict) and not bank.info:
        bank.info = {k: v for k, v in obj["info"].items() if k != "hash"}
    return questions


def _line_items(bank: Bank, path: str | Path, line: int, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line's items: an identical repeat of an item in the same line is merged (and noted); an id given
    again with other content, or on another line, is an error."""
    here: dict[str, dict[str, Any]] = {}
    merged: dict[str, int] = {}
    for question in questions:
        qid = question["question_id"]
        if qid in here and here[qid] == question:
            merged[qid] = merged.get(qid, 1) + 1
            continue
        if qid in here:
            raise InputError(str(path), line, f"id {qid!r} given twice in this line with different content")
        if qid in bank.lines:
            raise InputError(str(path), line, f"id {qid!r} also on line {bank.lines[qid]}")
        here[qid] = question
    bank.notes += [f"{path}:{line}: id {qid!r} appears {times} times with identical content; kept once"
                   for qid, times in merged.items()]
    return list(here.values())


def _item(path: str | Path, line: int, item: Any, query_id: str, facet_id: Any, query_text: Any) -> dict:
    if not isinstance(item, dict):
        raise InputError(str(path), line, "every item must be a JSON object")
    if "nugget_id" in item or "nugget_text" in item:
        kind, id_key, text_key = "nugget", "nugget_id", "nugget_text"
    else:
        kind, id_key, text_key = "question", "question_id", "question_text"
    qid, text = item.get(id_key), item.get(text_key)
    if not isinstance(qid, str) or not qid or not isinstance(text, str) or not text.strip():
        raise InputError(str(path), line, f"a {kind} needs a non-empty {id_key!r} and {text_key!r}")
    qid = record_id(path, line, qid, kind)
    item_query = str(item.get("query_id", query_id))
    if item_query != query_id:
        raise InputError(str(path), line, f"{kind} {qid!r} names query {item_query!r}, its line {query_id!r}")
    answers = next((item[k] for k in ANSWER_KEYS if item.get(k) is not None), None)
    if isinstance(answers, str):
        answers = [answers]
    if answers is not None and not (isinstance(answers, list) and all(isinstance(a, str) for a in answers)):
        raise InputError(str(path), line, f"{kind} {qid!r}: gold answers must be a string or a list of strings")
    info = {k: v for k, v in item.items()
            if k not in {id_key, text_key, "query_id", "facet_id", *ANSWER_KEYS} and v is not None}
    if "importance" in info:
        info["importance"] = check_importance(path, line, info["importance"], f"{kind} {qid!r}")
    if query_text is not None and facet_id is not None:
        info["query_text"] = query_text
    return {
        "question_id": qid,
        "query_id": query_id,
        "facet_id": item.get("facet_id", facet_id),
        "kind": kind,
        "text": text.strip(),
        "answers": sorted(set(answers)) if answers else None,
        "info": info or None,
    }
