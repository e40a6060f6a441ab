"""The Autograder Workbench (exam_pp) interchange format: read into the store's rows, write back out.

One JSON line per query: `[query_id, [paragraph, ...]]`. A paragraph carries its text, human judgments,
run rankings, `exam_grades` (per-question grades of one LLM + prompt) and `grades` (direct relevance
grades). See `../shared/data/README.md` of the project for the field list.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import InputError
from proctor.io.textfile import iter_jsonl
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
