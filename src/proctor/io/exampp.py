"""The Autograder Workbench (exam_pp) interchange format: read into the store's rows, write back out.

One JSON line per query: `[query_id, [paragraph, ...]]`. A paragraph carries its text, human judgments,
run rankings, `exam_grades` (per-question grades of one LLM + prompt) and `grades` (direct relevance
grades). See `../shared/data/README.md` of the project for the field list.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from proctor.errors import InputError
from proctor.io.textfile import iter_jsonl
from proctor.store import Grade, Store

IMPORTED = "imported"
"""`parse_status` of a grade taken over from an exam_pp file (it was parsed by the workbench)."""


@dataclass
class ExamppQuery:
    """The rows one line of an exam_pp file contributes to the store."""

    line: int
    query_id: str
    passages: list[tuple[str, str | None]] = field(default_factory=list)
    judgments: list[tuple[str, str, int]] = field(default_factory=list)
    rankings: list[tuple[str, str, str, int, float]] = field(default_factory=list)
    grades: list[Grade] = field(default_factory=list)
    configs: dict[tuple[str, str, str], dict] = field(default_factory=dict)


def read_exampp(path: str | Path, *, with_grades: bool = True) -> Iterator[ExamppQuery]:
    """Yield one `ExamppQuery` per line; malformed content raises `InputError` with the line."""
    for line, obj in iter_jsonl(path):
        if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], list)):
            raise InputError(str(path), line, "expected `[query_id, [paragraph, ...]]`")
        query = ExamppQuery(line, str(obj[0]))
        for index, para in enumerate(obj[1]):
            try:
                _paragraph(query, para, with_grades)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                pid = para.get("paragraph_id") if isinstance(para, dict) else None
                what = f"paragraph {index}" + (f" ({pid})" if pid is not None else "")
                raise InputError(str(path), line, f"{what}: malformed ({type(exc).__name__}: {exc})") from None
        yield query


def _paragraph(query: ExamppQuery, para: dict, with_grades: bool) -> None:
    pid = para["paragraph_id"]
    if not isinstance(pid, str | int):
        raise TypeError("paragraph_id must be a string")
    pid = str(pid)
    text = para.get("text")
    if text is not None and not isinstance(text, str):
        raise TypeError("text must be a string")
    query.passages.append((pid, text))
    data = para.get("paragraph_data") or {}
    for j in data.get("judgments") or []:
        rel = j["relevance"]
        if not isinstance(rel, int) or isinstance(rel, bool):
            raise ValueError(f"judgment relevance {rel!r} is not an integer")
        query.judgments.append((str(j.get("query", query.query_id)), pid, rel))
    for r in data.get("rankings") or []:
        query.rankings.append((str(r["method"]), str(r.get("queryId", query.query_id)), pid,
                               int(r["rank"]), float(r["score"])))
    if not with_grades:
        return
    for eg in para.get("exam_grades") or []:
        _exam_grades(query, pid, eg)
    for g in para.get("grades") or []:
        _direct_grade(query, pid, g)


def _method_of(prompt_info: dict, self_rated: bool) -> str:
    prompt_class = str(prompt_info.get("prompt_class", ""))
    if "nugget" in prompt_class.lower():
        return "nugget-rating" if self_rated else "nugget-qa"
    return "self-rating" if self_rated else "qa"


def _exam_grades(query: ExamppQuery, pid: str, eg: dict) -> None:
    prompt_info = eg.get("prompt_info") or {}
    ratings = {str(r["question_id"]): r["self_rating"] for r in eg.get("self_ratings") or []}
    self_rated = bool(prompt_info.get("is_self_rated", bool(ratings)))
    method, model = _method_of(prompt_info, self_rated), str(eg.get("llm") or "unknown")
    version = str(prompt_info.get("prompt_class") or method)
    answers = {str(qid): text for qid, text in eg.get("answers") or []}
    correct = set(map(str, eg.get("correctAnswered") or []))
    wrong = set(map(str, eg.get("wrongAnswered") or []))
    query.configs[(method, model, version)] = {
        "prompt_info": prompt_info, "llm_options": eg.get("llm_options"), "source": "exampp",
    }
    for qid in sorted(set(ratings) | set(answers) | correct | wrong):
        rating = ratings.get(qid)
        if rating is not None and (not isinstance(rating, int) or isinstance(rating, bool)):
            raise ValueError(f"self_rating {rating!r} of {qid} is not an integer")
        grade = rating if self_rated else 1 if qid in correct else 0
        verdict = True if qid in correct else False if qid in wrong else None
        query.grades.append(Grade(
            query.query_id, pid, qid, method, model, version, grade,
            IMPORTED if grade is not None else "failed", raw_reply=answers.get(qid), answer=answers.get(qid),
            correct=verdict,
        ))


def _direct_grade(query: ExamppQuery, pid: str, g: dict) -> None:
    prompt_info = g.get("prompt_info") or {}
    method = str(prompt_info.get("prompt_class") or g.get("prompt_type") or "direct")
    model = str(g.get("llm") or "unknown")
    rating = g.get("self_ratings")
    grade = rating if isinstance(rating, int) else int(bool(g.get("correctAnswered")))
    query.configs[(method, model, method)] = {
        "prompt_info": prompt_info, "llm_options": g.get("llm_options"), "source": "exampp",
        "prompt_type": g.get("prompt_type"), "direct": True,
    }
    query.grades.append(Grade(query.query_id, pid, "", method, model, method, grade, IMPORTED,
                              raw_reply=g.get("answer"), answer=g.get("answer"),
                              correct=g.get("correctAnswered")))


# -- writing --------------------------------------------------------------------------------------------
def write_exampp(store: Store, out: str | Path) -> int:
    """Write the store as an exam_pp file (gzipped when `out` ends in .gz); returns the number of queries."""
    out = Path(out)
    with (gzip.open(out, "wt", encoding="utf-8") if out.suffix == ".gz"
          else open(out, "w", encoding="utf-8")) as handle:
        return _write(store, handle)


def _write(store: Store, handle: TextIO) -> int:
    texts = store.passage_texts()
    paragraphs: dict[str, dict[str, dict[str, Any]]] = {}

    def para(qid: str, pid: str) -> dict[str, Any]:
        per_query = paragraphs.setdefault(qid, {})
        if pid not in per_query:
            per_query[pid] = {"paragraph_id": pid, "text": texts.get(pid), "paragraph": {},
                              "paragraph_data": {"judgments": [], "rankings": []}, "exam_grades": None}
        return per_query[pid]

    for qid, per_query in sorted(store.judgments().items()):
        for pid, rel in sorted(per_query.items()):
            para(qid, pid)["paragraph_data"]["judgments"].append(
                {"paragraphId": pid, "query": qid, "relevance": rel, "titleQuery": qid})
    for run, qid, pid, rank, score in sorted(store.ranking_rows()):
        para(qid, pid)["paragraph_data"]["rankings"].append(
            {"method": run, "paragraphId": pid, "queryId": qid, "rank": rank, "score": score})
    current: dict[tuple, list[Grade]] = {}
    for g in store.grades():
        current.setdefault((g.query_id, g.passage_id, g.method, g.model, g.prompt_version), []).append(g)
    configs: dict[tuple[str, str, str], dict] = {}
    for (qid, pid, method, model, version), grades in current.items():
        if (method, model, version) not in configs:
            configs[(method, model, version)] = store.grade_config(method, model, version) or {}
        config = configs[(method, model, version)]
        target = para(qid, pid)
        if config.get("direct"):
            for g in grades:
                target.setdefault("grades", []).append({
                    "correctAnswered": bool(g.correct), "answer": g.answer or "", "llm": model,
                    "llm_options": config.get("llm_options") or {}, "prompt_info": config.get("prompt_info"),
                    "self_ratings": g.grade, "prompt_type": config.get("prompt_type")})
            continue
        target["exam_grades"] = target["exam_grades"] or []
        target["exam_grades"].append(_exam_grades_entry(method, model, version, config, grades))
    for qid in sorted(paragraphs):
        handle.write(json.dumps([qid, list(paragraphs[qid].values())], ensure_ascii=False) + "\n")
    return len(paragraphs)


def _exam_grades_entry(method: str, model: str, version: str, config: dict, grades: list[Grade]) -> dict:
    self_rated = method in ("self-rating", "nugget-rating") or any(
        g.grade is not None and g.grade > 1 for g in grades)
    prompt_info = config.get("prompt_info") or {"prompt_class": version, "is_self_rated": self_rated}
    correct = [g.question_id for g in grades if g.correct is True]
    wrong = [g.question_id for g in grades if g.correct is False]
    return {
        "correctAnswered": correct,
        "wrongAnswered": wrong,
        "answers": [[g.question_id, g.answer or ""] for g in grades],
        "llm": model,
        "llm_options": config.get("llm_options") or {},
        "exam_ratio": len(correct) / len(grades) if grades else 0.0,
        "prompt_info": prompt_info,
        "self_ratings": [{"question_id": g.question_id, "self_rating": g.grade}
                         for g in grades if g.grade is not None] if self_rated else None,
    }
