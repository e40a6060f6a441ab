"""Nugget banks in the formats of the TREC RAG and AutoJudge tools, read into (and written from) the same
bank records as every other bank (`proctor.io.banks.Bank`):

- `nuggetizer`: castorini/nuggetizer's JSONL, one line per topic `{"query": text, "qid": id, "nuggets":
  [{"text", "importance"}, ...]}` (what `nuggetizer create` writes). Nuggets get workbench ids
  (`qid/md5(text)`); their order is kept (`info.position`).
- `autojudge`: the TREC AutoJudge NuggetBank JSONL (format v3, trec-auto-judge/auto-judge-base
  `nugget_data`), one bank per line `{query_id, title_query, format_version, nugget_bank: {question text:
  {question, question_id, answers, importance, ...}}, claim_bank: {claim text: {claim, claim_id, ...}}}`.
  Questions become bank questions (their gold answers kept), claims become nuggets; ids are
  `query_id/<their id>` (their ids are md5(text) and repeat across topics), their own id kept. A question
  whose `aggregator_type` is `AND` or `OR` (the RAGTIME 2026 nugget format, read by AutoJudge's v3 loader)
  also gives one *answer nugget* per answer (`QUESTION ANSWER`, id `<question id>/md5(answer)`, info
  `nugget_of` and `aggregator`): what nugget assignment labels, combined per question by
  `proctor.evaluate.nuggets` (AND: the lowest label of its answers, OR: the highest). Answer nuggets are
  Proctor's grading units, not the bank's content: the writers leave them out.

Whatever else a record holds (creator, references, metadata, sub-nuggets, reasoning, ...) is kept in the
item's `info` and written back on export, so import → export gives the same content. Every problem names the
file and line; with `on_error="skip"` a bad line is skipped whole and reported (`Bank.skipped`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from proctor.errors import InputError
from proctor.io.banks import Bank, check_importance
from proctor.io.fields import optional_text, record_id
from proctor.io.ids import item_id
from proctor.io.textfile import jsonl_records
from proctor.options.inputs import ImportOptions

FORMATS = ("nuggetizer", "autojudge")
_AJ = {"question": ("nugget_bank", "question_id", "question"), "nugget": ("claim_bank", "claim_id", "claim")}
AGGREGATORS = ("AND", "OR")
"""The aggregators a question's answers are combined with (RAGTIME 2026: AND, every answer must appear; OR,
any one does). AutoJudge's `Default` means none; its `NOT` and `SUM` are kept but not scored (a note says so)."""


def records(path: str | Path, bank: Bank, on_error: str) -> Iterator[tuple[int, Any]]:
    """The JSON records of a JSONL file; with `on_error="skip"`, lines that are not JSON are collected."""
    return jsonl_records(path, bank.skipped, on_error)


def _add_line(path: str | Path, bank: Bank, line: int, items: list[dict[str, Any]], on_error: str,
              error: InputError | None) -> None:
    """Add one line's items at once, or none of them (its error raised, or collected with skip)."""
    if error is None:
        for item in items:
            if item["question_id"] in bank.lines:
                error = InputError(str(path), line, f"id {item['question_id']!r} also on line "
                                   f"{bank.lines[item['question_id']]}")
                break
    if error is not None:
        if on_error != "skip":
            raise error
        bank.skipped.append(error)
        return
    for item in items:
        bank.lines[item["question_id"]] = line
        bank.questions.append(item)


def read_nuggetizer(path: str | Path, on_error: str = ImportOptions.on_error) -> Bank:
    """A nuggetizer nuggets file (`nuggetizer create` output)."""
    return _read(path, on_error, "nuggetizer", _nuggetizer_line)


def _read(path: str | Path, on_error: str, fmt: str, parse_line: Callable[..., list[dict[str, Any]]]) -> Bank:
    """Every line of a nugget file through `parse_line`; a bad line is an error or, with skip, a note."""
    bank = Bank(info={"format": fmt})
    for line, obj in records(path, bank, on_error):
        items, error = [], None
        try:
            items = parse_line(path, line, obj, bank)
        except InputError as exc:
            error = exc
        _add_line(path, bank, line, items, on_error, error)
    return bank


def bank_topic(obj: Any, fmt: str) -> Any:
    """The topic a bank record of format `fmt` names, as its reader takes it (None when it names none): a
    nuggetizer record's `qid`; an AutoJudge bank's `query_id`, else its `metadata.topic_id`."""
    if not isinstance(obj, dict):
        return None
    if fmt == "nuggetizer":
        return obj.get("qid")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return obj["query_id"] if obj.get("query_id") is not None else meta.get("topic_id")


def _nuggetizer_line(path: str | Path, line: int, obj: Any, bank: Bank) -> list[dict[str, Any]]:
    if not isinstance(obj, dict) or not isinstance(obj.get("nuggets"), list):
        raise InputError(str(path), line, "expected a nuggetizer record {\"query\", \"qid\", \"nuggets\": [...]}")
    if bank_topic(obj, "nuggetizer") is None:
        raise InputError(str(path), line, "nuggetizer record without \"qid\": every line needs its topic id under "
                         "\"qid\" (nuggetizer's create returns the nuggets only; add the qid)")
    qid = record_id(path, line, obj["qid"], "query")
    extras = {k: v for k, v in obj.items() if k not in ("qid", "nuggets")}
    items, seen = [], set()
    for n, nugget in enumerate(obj["nuggets"]):
        if not isinstance(nugget, dict) or not isinstance(nugget.get("text"), str) or not nugget["text"].strip():
            raise InputError(str(path), line, f"nuggets[{n}]: needs a non-empty \"text\"")
        text = nugget["text"].strip()
        if text in seen:
            raise InputError(str(path), line, f"nuggets[{n}]: the nugget {text!r} is repeated")
        seen.add(text)
        info: dict[str, Any] = {"position": n, "nuggetizer_line": extras}
        importance = check_importance(path, line, nugget.get("importance"), f"nuggets[{n}]")
        if importance:
            info["importance"] = importance
        more = {k: v for k, v in nugget.items() if k not in ("text", "importance")}
        if more:
            info["nuggetizer"] = more
        items.append({"question_id": item_id(qid, text), "query_id": qid, "facet_id": None, "kind": "nugget",
                      "text": text, "answers": None, "info": info})
    if optional_text(obj.get("query")) is not None:
        bank.query_texts.setdefault(qid, obj["query"])
    return items


def read_autojudge(path: str | Path, on_error: str = ImportOptions.on_error) -> Bank:
    """A TREC AutoJudge NuggetBank JSONL file (format v3)."""
    return _read(path, on_error, "autojudge", _autojudge_line)


def _autojudge_line(path: str | Path, line: int, obj: Any, bank: Bank) -> list[dict[str, Any]]:
    topic = bank_topic(obj, "autojudge")
    if topic is None:
        raise InputError(str(path), line, "expected an AutoJudge nugget bank with a query_id (or metadata.topic_id)")
    qid = record_id(path, line, topic, "query")
    extras = {k: v for k, v in obj.items() if k not in ("nugget_bank", "claim_bank")}
    items = []
    for kind, (key, _, _) in _AJ.items():
        entries = obj.get(key)
        if entries is None:
            continue
        if not isinstance(entries, dict | list):
            raise InputError(str(path), line, f"{key}: expected an object (or a list) of entries")
        for n, entry in enumerate(entries.values() if isinstance(entries, dict) else entries):
            item = _autojudge_entry(path, line, f"{key}[{n}]", qid, kind, entry, extras)
            items += [item, *_answer_nuggets(path, line, f"{key}[{n}]", item, entry, bank)]
    if optional_text(obj.get("title_query")) is not None:
        bank.query_texts.setdefault(qid, obj["title_query"])
    return items


def _autojudge_entry(path: str | Path, line: int, where: str, qid: str, kind: str, entry: Any,
                     extras: dict[str, Any]) -> dict[str, Any]:
    _, id_key, text_key = _AJ[kind]
    if not isinstance(entry, dict) or not isinstance(entry.get(text_key), str) or not entry[text_key].strip():
        raise InputError(str(path), line, f"{where}: needs a non-empty {text_key!r}")
    text = entry[text_key].strip()
    if entry.get("query_id") is not None and str(entry["query_id"]) != qid:
        raise InputError(str(path), line, f"{where}: names query {entry['query_id']!r}, its bank {qid!r}")
    own = entry.get(id_key) or hashlib.md5(entry[text_key].encode()).hexdigest()
    own = record_id(path, line, own, kind)
    info: dict[str, Any] = {"autojudge_id": own, "autojudge_bank": extras,
                            "autojudge": {k: v for k, v in entry.items()
                                          if k not in (text_key, id_key, "query_id", "importance")}}
    importance = check_importance(path, line, entry.get("importance"), where)
    if importance:
        info["importance"] = importance
    return {"question_id": f"{qid}/{own}", "query_id": qid, "facet_id": None, "kind": kind, "text": text,
            "answers": _answers(path, line, where, entry.get("answers")), "info": info}


def _answer_nuggets(path: str | Path, line: int, where: str, item: dict[str, Any], entry: dict[str, Any],
                    bank: Bank) -> list[dict[str, Any]]:
    """A question's answer nuggets when its `aggregator_type` is AND or OR (none otherwise)."""
    aggregator = entry.get("aggregator_type")
    if aggregator is None or item["kind"] != "question":
        return []
    if not isinstance(aggregator, str) or aggregator.strip().upper() not in (*AGGREGATORS, "NOT", "SUM", "DEFAULT"):
        raise InputError(str(path), line, f"{where}: unknown aggregator_type {aggregator!r} (AND or OR)")
    aggregator = aggregator.strip().upper()
    if aggregator not in AGGREGATORS:
        if aggregator != "DEFAULT":
            bank.notes.append(f"{path}:{line}: {where}: aggregator_type {aggregator} is kept, but only AND and OR "
                              "are scored: the question has no answer nuggets")
        return []
    if not item["answers"]:
        raise InputError(str(path), line, f"{where}: aggregator_type {aggregator} combines the question's answers, "
                         "but it has none")
    info = item["info"]
    extra = {"importance": info["importance"]} if info.get("importance") else {}
    return [{"question_id": f"{item['question_id']}/{hashlib.md5(answer.encode()).hexdigest()}",
             "query_id": item["query_id"], "facet_id": None, "kind": "nugget", "text": f"{item['text']} {answer}",
             "answers": None, "info": {"nugget_of": item["question_id"], "aggregator": aggregator, "answer": answer,
                                       **extra}}
            for answer in item["answers"]]


def _answers(path: str | Path, line: int, where: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    found = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else [value]
    out = []
    for answer in found:
        text = answer.get("answer") if isinstance(answer, dict) else answer
        if not isinstance(text, str):
            raise InputError(str(path), line, f"{where}: every answer needs an \"answer\" text")
        out.append(text)
    return sorted(set(out)) or None


def nuggetizer_lines(questions: list[dict[str, Any]], query_texts: dict[str, str]) -> list[dict[str, Any]]:
    """nuggetizer records of a bank's nuggets, one per query (sorted), nuggets in their order."""
    by_query: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        if q["kind"] == "nugget" and not (q.get("info") or {}).get("nugget_of"):
            by_query.setdefault(q["query_id"], []).append(q)
    lines = []
    for qid in sorted(by_query):
        nuggets = sorted(by_query[qid], key=lambda q: ((q.get("info") or {}).get("position", 1 << 30),
                                                       q["question_id"]))
        first = nuggets[0].get("info") or {}
        line = dict(first.get("nuggetizer_line") or {"query": query_texts.get(qid, "")})
        line["qid"] = qid
        line["nuggets"] = []
        for q in nuggets:
            info = q.get("info") or {}
            entry: dict[str, Any] = {"text": q["text"]}
            if info.get("importance"):
                entry["importance"] = info["importance"]
            line["nuggets"].append({**entry, **(info.get("nuggetizer") or {})})
        lines.append(line)
    return lines


def autojudge_lines(questions: list[dict[str, Any]], query_texts: dict[str, str]) -> list[dict[str, Any]]:
    """AutoJudge NuggetBank (v3) records, one per query (sorted): questions in `nugget_bank`, nuggets in
    `claim_bank`, keyed by their text."""
    by_query: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        if not (q.get("info") or {}).get("nugget_of"):  # answer nuggets are Proctor's, not the bank's
            by_query.setdefault(q["query_id"], []).append(q)
    lines = []
    for qid in sorted(by_query):
        items = by_query[qid]
        first = next((q["info"]["autojudge_bank"] for q in items if (q.get("info") or {}).get("autojudge_bank")),
                     None)
        line = dict(first or {"query_id": qid, "title_query": query_texts.get(qid, ""), "format_version": "v3"})
        for q in items:
            key, id_key, text_key = _AJ[q["kind"]]
            line.setdefault(key, {})[q["text"]] = _autojudge_out(q, qid, id_key, text_key)
        lines.append(line)
    return lines


def _autojudge_out(q: dict[str, Any], qid: str, id_key: str, text_key: str) -> dict[str, Any]:
    info = q.get("info") or {}
    own = info.get("autojudge_id") or hashlib.md5(q["text"].encode()).hexdigest()
    entry: dict[str, Any] = {text_key: q["text"], id_key: own, "query_id": qid, **(info.get("autojudge") or {})}
    kept = entry.get("answers")
    if q.get("answers") and sorted(set(_answers("", 0, "", kept) or [])) != q["answers"]:
        entry["answers"] = {a: {"answer": a} for a in q["answers"]}
    elif not q.get("answers"):
        entry.pop("answers", None)
    if info.get("importance"):
        entry["importance"] = info["importance"]
    return entry
