"""Human-editable banks: writing banks as YAML and in both workbench formats (reading YAML banks is
`proctor.io.yaml_banks`')."""

from __future__ import annotations

from typing import Any

import yaml


def bank_lines(questions: list[dict[str, Any]], query_texts: dict[str, str], fmt: str) -> list[dict[str, Any]]:
    """Workbench bank lines: `items` (current format) or `questions` (older format), one per query/facet."""
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for q in questions:
        groups.setdefault((q["query_id"], q.get("facet_id")), []).append(q)
    lines = []
    for (qid, facet), items in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        text = next((i["info"].get("query_text") for i in items if i.get("info") and i["info"].get("query_text")),
                    query_texts.get(qid, ""))
        out = []
        for q in items:
            id_key, text_key = ("nugget_id", "nugget_text") if q["kind"] == "nugget" else ("question_id",
                                                                                            "question_text")
            entry = {"query_id": qid, "facet_id": facet, id_key: q["question_id"], text_key: q["text"]}
            if q.get("answers"):
                entry["gold_answers"] = q["answers"]
            if (q.get("info") or {}).get("importance"):
                entry["importance"] = q["info"]["importance"]
            if fmt == "questions":
                entry["info"] = q.get("info")
            out.append(entry)
        lines.append({"query_id": qid, "facet_id": facet, "test_collection": "proctor", "query_text": text or "",
                      "info": None, ("questions" if fmt == "questions" else "items"): out})
    return lines


def yaml_text(questions: list[dict[str, Any]], query_texts: dict[str, str], name: str | None = None) -> str:
    """The human-editable YAML form of a bank."""
    queries: dict[tuple[str, str | None], dict[str, Any]] = {}
    for q in questions:
        entry = queries.setdefault((q["query_id"], q.get("facet_id")), {
            "query_id": q["query_id"], "query_text": query_texts.get(q["query_id"], ""), "facet_id": q.get("facet_id")})
        item: dict[str, Any] = {"text": q["text"], "id": q["question_id"]}
        info = q.get("info") or {}
        if info.get("choices"):
            item["choices"], item["correct"] = info["choices"], info.get("correct")
        elif q.get("answers"):
            item["answers"] = q["answers"]
        if info.get("importance"):
            item["importance"] = info["importance"]
        if info.get("spurious"):
            item["spurious"] = True
        entry.setdefault("nuggets" if q["kind"] == "nugget" else "questions", []).append(item)
    data = {"bank": name, "queries": [queries[k] for k in sorted(queries, key=lambda k: (k[0], k[1] or ""))]}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
