"""The Autograder Workbench (exam_pp) interchange format: read into the store's rows, write back out.

One JSON line per query: `[query_id, [paragraph, ...]]`. A paragraph carries its text, human judgments,
run rankings, `exam_grades` (per-question grades of one LLM + prompt) and `grades` (direct relevance
grades). See `../shared/data/README.md` of the project for the field list.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import InputError
from proctor.io.records import as_id, record_id
from proctor.io.textfile import iter_jsonl
from proctor.io.trec import MAX_RELEVANCE
from proctor.records import Grade

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
        query = ExamppQuery(line, record_id(path, line, obj[0], "query"))
        judged: dict[str, int] = {}
        for index, para in enumerate(obj[1]):
            try:
                _paragraph(query, para, with_grades, judged)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                pid = para.get("paragraph_id") if isinstance(para, dict) else None
                what = f"paragraph {index}" + (f" ({pid})" if pid is not None else "")
                raise InputError(str(path), line, f"{what}: malformed ({type(exc).__name__}: {exc})") from None
        yield query


def _paragraph(query: ExamppQuery, para: dict, with_grades: bool, judged: dict[str, int]) -> None:
    pid = as_id(para["paragraph_id"], "paragraph")
    text = para.get("text")
    if text is not None and not isinstance(text, str):
        raise TypeError("text must be a string")
    query.passages.append((pid, text))
    data = para.get("paragraph_data") or {}
    for j in data.get("judgments") or []:
        _judgment(query, pid, j, judged)
    for r in data.get("rankings") or []:
        _ranking(query, pid, r)
    if not with_grades:
        return
    for eg in para.get("exam_grades") or []:
        _exam_grades(query, pid, eg)
    for g in para.get("grades") or []:
        _direct_grade(query, pid, g)


def _judgment(query: ExamppQuery, pid: str, j: dict, judged: dict[str, int]) -> None:
    rel = j["relevance"]
    if not isinstance(rel, int) or isinstance(rel, bool) or not -MAX_RELEVANCE <= rel <= MAX_RELEVANCE:
        raise ValueError(f"judgment relevance {rel!r} is not an integer in -{MAX_RELEVANCE}..{MAX_RELEVANCE}")
    judged_query = as_id(j.get("query", query.query_id), "query")
    if judged_query != query.query_id:
        raise ValueError(f"a judgment for query {judged_query!r} inside the line of query {query.query_id!r}")
    if pid in judged:
        if judged[pid] != rel:
            raise ValueError(f"passage {pid!r} judged {judged[pid]} and {rel} for query {query.query_id!r}")
        return
    judged[pid] = rel
    query.judgments.append((query.query_id, pid, rel))


def _ranking(query: ExamppQuery, pid: str, r: dict) -> None:
    ranked_query = as_id(r.get("queryId", query.query_id), "query")
    if ranked_query != query.query_id:
        raise ValueError(f"a ranking for query {ranked_query!r} inside the line of query {query.query_id!r}")
    score = float(r["score"])
    if not math.isfinite(score):
        raise ValueError(f"ranking score {r['score']!r} is not a finite number")
    query.rankings.append((as_id(r["method"], "run"), query.query_id, pid, int(r["rank"]), score))


def _grade_value(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 5:
        raise ValueError(f"{what} {value!r} is not a grade 0..5")
    return value


def _method_of(prompt_info: dict, self_rated: bool) -> str:
    prompt_class = str(prompt_info.get("prompt_class", ""))
    if "nugget" in prompt_class.lower():
        return "nugget-rating" if self_rated else "nugget-qa"
    return "self-rating" if self_rated else "qa"


def _exam_grades(query: ExamppQuery, pid: str, eg: dict) -> None:
    prompt_info = eg.get("prompt_info") or {}
    ratings = {as_id(r["question_id"], "question"): r["self_rating"] for r in eg.get("self_ratings") or []}
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
        if rating is not None:
            _grade_value(rating, f"self_rating of {qid}")
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
    grade = _grade_value(rating, "self_ratings") if rating is not None else int(bool(g.get("correctAnswered")))
    query.configs[(method, model, method)] = {
        "prompt_info": prompt_info, "llm_options": g.get("llm_options"), "source": "exampp",
        "prompt_type": g.get("prompt_type"), "direct": True,
    }
    query.grades.append(Grade(query.query_id, pid, "", method, model, method, grade, IMPORTED,
                              raw_reply=g.get("answer"), answer=g.get("answer"),
                              correct=g.get("correctAnswered")))
