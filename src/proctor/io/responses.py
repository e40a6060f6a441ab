"""Read generated responses of RAG and generation systems:

- `jsonl`: `{run_id, query_id, text}` per line;
- `rag24`: TREC RAG 2024 answers `{run_id, topic_id, topic, references, response_length,
  answer: [{text, citations}]}` (citations index into `references`);
- `rag25`: TREC RAG 2025 answers `{metadata: {run_id, narrative_id, ...}, references, answer: [...]}`, and
  TREC AutoJudge reports where they differ: the topic as `metadata.topic_id` or `request_id`, sentences
  under `responses`, citations as document ids or `{document: confidence}` (most confident first);
- `text-dir`: a folder with one sub-folder per system holding one `QUERY.txt` or `QUERY.md` per query.

Each response becomes segments: plain text is cut into passages of whole sentences up to ~400 tokens;
RAG answers give one passage per answer sentence with the documents it cites. Problems are reported with
file and line; with `on_error="skip"` the bad record is skipped and reported instead.

Passage ids are `RUN/QUERY/i`. So that two responses can never get the same ids (run `a/b` with query `c`
and run `a` with query `b/c` would both give `a/b/c/0`), run and query ids of responses are ids as every
reader checks them (`proctor.io.fields.as_id`) that moreover contain no `/`: such a record is refused with
its file and line, never renamed. Cited document ids are checked as ids too. (Importing refuses, besides,
a response run named like a retrieval run in the store, and a different response of a run to a query that
the store already holds: see `proctor.importing`.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.errors import InputError
from proctor.io.fields import as_id, optional_text
from proctor.io.segment import MAX_TOKENS, segment, truncate_words
from proctor.io.textfile import iter_jsonl, parse_json_line, read_lines, read_text
from proctor.options.inputs import ImportOptions

FORMATS = ("auto", "jsonl", "rag24", "rag25", "text-dir")


@dataclass
class Segment:
    """One passage of a response, in the system's order."""

    passage_id: str
    text: str
    position: int
    citations: list[str] = field(default_factory=list)


@dataclass
class Response:
    """One system's response to one query."""

    line: int
    run: str
    query_id: str
    query_text: str | None
    segments: list[Segment]
    truncated: bool = False
    references: list[str] = field(default_factory=list)


@dataclass
class ReadReport:
    """Responses read and records skipped (with `on_error="skip"`)."""

    responses: list[Response] = field(default_factory=list)
    skipped: list[InputError] = field(default_factory=list)


def detect_format(path: Path) -> str:
    """`text-dir` for folders, else by the keys of the first record."""
    if path.is_dir():
        return "text-dir"
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            raise InputError(str(path), line, "expected a JSON object per line")
        if "metadata" in obj:
            return "rag25"
        if "topic_id" in obj or "answer" in obj:
            return "rag24"
        return "jsonl"
    raise InputError(str(path), 1, "file is empty")


def read_responses(path: str | Path, fmt: str = "auto", *, word_budget: int | None = None,
                   max_tokens: int = MAX_TOKENS, on_error: str = ImportOptions.on_error) -> ReadReport:
    """Parse every response; bad records raise `InputError` or, with `on_error="skip"`, are collected."""
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such file or folder")
    fmt = detect_format(path) if fmt == "auto" else fmt
    report = ReadReport()
    seen: dict[tuple[str, str], int] = {}
    for item in _records(path, fmt, word_budget, max_tokens):
        if isinstance(item, InputError):
            if on_error == "fail":
                raise item
            report.skipped.append(item)
            continue
        key = (item.run, item.query_id)
        if key in seen:
            error = InputError(str(path), item.line, f"run {item.run!r} answers query {item.query_id!r} twice "
                               f"(first on line {seen[key]})")
            if on_error == "fail":
                raise error
            report.skipped.append(error)
            continue
        seen[key] = item.line
        report.responses.append(item)
    return report


def _records(path: Path, fmt: str, budget: int | None, max_tokens: int) -> Iterator[Response | InputError]:
    if fmt == "text-dir":
        yield from _text_dir(path, budget, max_tokens)
        return
    parse = {"jsonl": _plain, "rag24": _rag24, "rag25": _rag25}.get(fmt)
    if parse is None:
        raise InputError(str(path), None, f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    for line, text in read_lines(path):
        if not text.strip():
            continue
        try:
            yield parse(parse_json_line(path, line, text), budget, max_tokens, line)
        except _Bad as bad:
            yield InputError(str(path), line, str(bad))
        except InputError as exc:  # invalid JSON on this line only: the next line is a record of its own
            yield exc


class _Bad(ValueError):
    """A malformed record."""


def _field(obj: Any, key: str, kind: type | tuple[type, ...], what: str = "") -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise _Bad(f"missing field {what or key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _Bad(f"field {what or key!r} must be {names}, got {type(value).__name__}")
    return value


def _id(value: Any, what: str) -> str:
    """A run or query id of a response: an id without `/`, which response passage ids use as separator."""
    try:
        text = as_id(value, what)
    except ValueError as exc:
        raise _Bad(str(exc)) from None
    if "/" in text:
        raise _Bad(f"{what} id {text!r} contains '/', which separates run, query and position in the ids of "
                   "response passages (run/query/i); rename it")
    return text


def _plain(obj: Any, budget: int | None, max_tokens: int, line: int) -> Response:
    run = _id(_field(obj, "run_id", (str, int)), "run")
    qid = _id(_field(obj, "query_id", (str, int)), "query")
    text = _field(obj, "text", str)
    if not text.strip():
        raise _Bad("empty response text")
    text, cut = truncate_words(text, budget)
    parts = segment(text, max_tokens)
    return Response(line, run, qid, optional_text(obj.get("query")),
                    [Segment(f"{run}/{qid}/{i}", p, i) for i, p in enumerate(parts)], cut)


def _rag_answer(run: str, qid: str, answer: Any, references: list, budget: int | None) -> tuple[list[Segment], bool]:
    if not isinstance(answer, list) or not answer:
        raise _Bad("field 'answer' must be a non-empty list of {text, citations}")
    segments, used, truncated = [], 0, False
    for i, sentence in enumerate(answer):
        text = _field(sentence, "text", str, f"answer[{i}].text")
        citations = (sentence.get("citations") or []) if isinstance(sentence, dict) else []
        if isinstance(citations, dict):  # AutoJudge (RAGTIME) reports: {document: confidence}, most confident first
            if any(isinstance(v, bool) or not isinstance(v, int | float) for v in citations.values()):
                raise _Bad(f"field 'answer[{i}].citations' maps cited documents to numeric confidences")
            citations = [doc for doc, _ in sorted(citations.items(), key=lambda kv: kv[1], reverse=True)]
        if not isinstance(citations, list):
            raise _Bad(f"field 'answer[{i}].citations' must be a list (or a {{document: confidence}} object)")
        cited = []
        for c in citations:
            if isinstance(c, bool) or not isinstance(c, int | str):
                raise _Bad(f"answer[{i}] cites {c!r}: citations are indices into 'references'")
            if isinstance(c, int):
                if not 0 <= c < len(references):
                    raise _Bad(f"answer[{i}] cites index {c}, but there are {len(references)} references")
                cited.append(str(references[c]))
            else:
                cited.append(_document_id(c))
        if not text.strip():
            continue
        if budget is not None:
            room = budget - used
            if room <= 0:
                truncated = True
                break
            text, cut = truncate_words(text, room)
            truncated |= cut
        used += len(text.split())
        segments.append(Segment(f"{run}/{qid}/{len(segments)}", text.strip(), len(segments), cited))
    if not segments:
        raise _Bad("empty answer: no sentence has text")
    return segments, truncated


def _references(obj: dict) -> list[str]:
    references = obj.get("references", [])
    if not isinstance(references, list):
        raise _Bad("field 'references' must be a list of document ids")
    return [_document_id(r) for r in references]


def _document_id(value: Any) -> str:
    try:
        return as_id(value, "cited document")
    except ValueError as exc:
        raise _Bad(str(exc)) from None


def _rag24(obj: Any, budget: int | None, max_tokens: int, line: int) -> Response:
    run = _id(_field(obj, "run_id", (str, int)), "run")
    qid = _id(_field(obj, "topic_id", (str, int)), "query")
    references = _references(obj)
    segments, cut = _rag_answer(run, qid, obj.get("answer"), references, budget)
    topic = optional_text(obj.get("topic"))
    return Response(line, run, qid, topic, segments, cut, references)


def _rag25(obj: Any, budget: int | None, max_tokens: int, line: int) -> Response:
    """TREC RAG 2025 answers and TREC AutoJudge reports (`{metadata: {run_id, narrative_id | topic_id |
    request_id}, answer | responses: [...], references}`)."""
    meta = _field(obj, "metadata", dict)
    run = _id(_field(meta, "run_id", (str, int), "metadata.run_id"), "run")
    named = [(k, meta[k]) for k in ("narrative_id", "topic_id", "request_id") if meta.get(k) is not None]
    if not named:
        raise _Bad("missing field 'metadata.narrative_id' (or metadata.topic_id / metadata.request_id)")
    qid = _id(_field(meta, named[0][0], (str, int), f"metadata.{named[0][0]}"), "query")
    for key, value in named[1:]:
        if str(value) != qid:
            raise _Bad(f"metadata.{named[0][0]} {qid!r} and metadata.{key} {value!r} name different topics")
    references = _references(obj)
    sentences = obj.get("answer") if obj.get("answer") is not None else obj.get("responses")
    segments, cut = _rag_answer(run, qid, sentences, references, budget)
    narrative = optional_text(meta.get("narrative"))
    return Response(line, run, qid, narrative, segments, cut, references)


def _text_dir(root: Path, budget: int | None, max_tokens: int) -> Iterator[Response | InputError]:
    systems = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not systems:
        yield InputError(str(root), None, "expected one sub-folder per system holding QUERY.txt or QUERY.md files")
        return
    for system in systems:
        for file in sorted(f for f in system.iterdir() if f.suffix in (".txt", ".md") and f.is_file()):
            try:
                text = read_text(file)
            except InputError as exc:
                yield exc
                continue
            text, cut = truncate_words(text, budget)
            parts = segment(text, max_tokens)
            if not parts:
                yield InputError(str(file), 1, "empty response")
                continue
            try:
                run, qid = _id(system.name, "run"), _id(file.stem, "query")
            except _Bad as bad:
                yield InputError(str(file), None, str(bad))
                continue
            yield Response(1, run, qid, None, [Segment(f"{run}/{qid}/{i}", p, i) for i, p in enumerate(parts)], cut)
