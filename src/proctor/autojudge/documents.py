"""The documents AutoJudge reports carry inline (`documents`: id → {id, text, title, ...}, and the documents of a
`ranking`, as TREC RAG 2025/2026, RAGTIME and the starter kit's kiddie reports give them): the texts citation
support judges cited sentences against when no `--corpus` gives them.

A report's documents are its own: two reports may give one document id different texts (kiddie's runs do, each
with its own excerpt of `Chlorophyll`), so each carried document becomes the corpus passage `ID@RUN/TOPIC`, and
the report's citations of it (document ids, `{id: score}` maps, or `references` that indices point into) are
renamed alike. A citation of a document the report does not carry keeps its id (a `--corpus` may hold it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from proctor.autojudge.sources import topic_of
from proctor.errors import UsageError


def scope_documents(record: dict[str, Any]) -> list[dict[str, str]]:
    """Rename, in one report's JSON `record` (in place), every document it carries and every citation of it to
    `ID@RUN/TOPIC`; returns those documents as corpus lines `{id, text[, title]}` (the title is put before the
    text when Proctor reads them). The same id twice in one report with different texts is refused."""
    meta = record.get("metadata") or {}
    where = f"{meta.get('run_id')}/{topic_of(meta)}"
    carried: dict[str, dict[str, str]] = {}
    for doc_id, doc in _carried(record):
        line = {"id": f"{doc_id}@{where}", "text": str(doc.get("text") or "")}
        if str(doc.get("title") or "").strip():
            line["title"] = str(doc["title"])
        if carried.setdefault(doc_id, line) != line:
            raise UsageError(f"report of run/topic {where}: document {doc_id!r} is given twice with different texts")
    if not carried:
        return []
    new = {doc_id: line["id"] for doc_id, line in carried.items()}
    if isinstance(record.get("references"), list):
        record["references"] = [_renamed(r, new) for r in record["references"]]
    for key in ("responses", "answer"):
        for sentence in record.get(key) or []:
            cited = sentence.get("citations") if isinstance(sentence, dict) else None
            if isinstance(cited, dict):
                sentence["citations"] = {_renamed(k, new): v for k, v in cited.items()}
            elif isinstance(cited, list):
                sentence["citations"] = [_renamed(c, new) for c in cited]
    return list(carried.values())


def _renamed(value: Any, new: dict[str, str]) -> Any:
    """A document id renamed when the report carries it; anything else (an index, another id) as it is."""
    return new.get(value, value) if isinstance(value, str) else value


def _carried(record: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, document) of the report's `documents` (keyed as its citations name them) and of its `ranking`."""
    for doc_id, doc in (record.get("documents") or {}).items():
        if isinstance(doc, dict):
            yield str(doc_id), doc
    for entry in record.get("ranking") or []:
        for ranked in entry.get("ranked_docs") or [entry]:
            if isinstance(ranked.get("doc"), dict):
                yield str(ranked["doc_id"]), ranked["doc"]
