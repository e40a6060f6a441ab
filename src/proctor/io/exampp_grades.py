"""The grades of an exam_pp paragraph: `exam_grades` entries (per-question grades of one LLM and prompt) and
`grades` entries (direct relevance grades), as rows of their grade set (method, model, prompt version)."""

from __future__ import annotations

from proctor.io.exampp_rows import (
    IMPORTED,
    ExamppQuery,
    GradeKey,
    GradeRow,
    Refused,
    Seen,
    as_list,
    as_mapping,
    check_id,
    optional_text,
)


def _grade_value(value: object, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 5:
        raise Refused(f"{what} {value!r} is not a grade 0..5")
    return value


def _add_grades(query: ExamppQuery, key: GradeKey, rows: list[GradeRow], seen: Seen) -> None:
    """Keep the rows of one entry (one grade set and passage); an entry given again merges identical grades and
    refuses different ones, question by question."""
    if not rows:
        return
    where = (*key, query.query_id, rows[0][1])
    first = seen.graded.setdefault(where, (query.line, rows))
    if type(first) is not tuple or first[1] is not rows:
        rows = _repeated(query, key, where, rows, seen)
    query.grade_rows.setdefault(key, []).extend(rows)


def _repeated(query: ExamppQuery, key: GradeKey, where: tuple, rows: list[GradeRow], seen: Seen) -> list[GradeRow]:
    """The rows of an entry given again that no earlier entry gave; a grade given differently is refused."""
    first = seen.graded[where]
    if isinstance(first, tuple):  # from now on question by question
        line, earlier = first
        first = seen.graded[where] = {row[2]: (line, row) for row in earlier}
    new = []
    for row in rows:
        line, old = first.setdefault(row[2], (query.line, row))
        if old is row:
            new.append(row)
        elif old[3:] != row[3:]:
            what = f"question {row[2]!r}" if row[2] else "relevance"
            raise Refused(f"passage {row[1]!r} graded twice differently on {what} by {key[1]} ({key[2]}): "
                           f"{old[4]} (first {seen.first(line)}) and {row[4]}")
    return new


def _method_of(prompt_info: dict, self_rated: bool) -> str:
    prompt_class = str(prompt_info.get("prompt_class", ""))
    if "nugget" in prompt_class.lower():
        return "nugget-rating" if self_rated else "nugget-qa"
    return "self-rating" if self_rated else "qa"


def _model(entry: dict) -> str:
    return optional_text(entry.get("llm"), "llm") or "unknown"


def _ratings(eg: dict) -> dict[str, object]:
    """`{question: self_rating}` of an exam_grades entry (a question rated twice differently is refused)."""
    ratings: dict[str, object] = {}
    for r in as_list(eg.get("self_ratings"), "self_ratings"):
        if type(r) is not dict:
            r = as_mapping(r, "a self_rating")
        named = r.get("question_id")
        qid = check_id(named if named is not None else r["nugget_id"], "question")
        rating = r["self_rating"]
        if qid in ratings and ratings[qid] != rating:
            raise Refused(f"question {qid!r} rated twice differently ({ratings[qid]!r} and {rating!r})")
        ratings[qid] = rating
    return ratings


def exam_grades(query: ExamppQuery, pid: str, eg: dict, seen: Seen) -> None:
    prompt_info = as_mapping(eg.get("prompt_info"), "prompt_info")
    ratings = _ratings(eg)
    self_rated = bool(prompt_info.get("is_self_rated", bool(ratings)))
    method, model = _method_of(prompt_info, self_rated), _model(eg)
    version = optional_text(prompt_info.get("prompt_class"), "prompt_class") or method
    answers: dict[str, str | None] = {}
    for qid, text in as_list(eg.get("answers"), "answers"):
        answers[check_id(qid, "question")] = optional_text(text, "an answer")
    correct = {check_id(q, "question") for q in as_list(eg.get("correctAnswered"), "correctAnswered")}
    wrong = {check_id(q, "question") for q in as_list(eg.get("wrongAnswered"), "wrongAnswered")}
    if correct & wrong:
        raise Refused(f"question {sorted(correct & wrong)[0]!r} is both correctAnswered and wrongAnswered")
    query.configs[(method, model, version)] = {
        "prompt_info": prompt_info, "llm_options": eg.get("llm_options"), "source": "exampp",
    }
    rows: list[GradeRow] = []
    query_id = query.query_id
    for qid in sorted(ratings.keys() | answers.keys() | correct | wrong):
        rating = ratings.get(qid)
        if rating is not None and not (type(rating) is int and 0 <= rating <= 5):  # type: ignore[operator]
            rating = _grade_value(rating, f"self_rating of {qid}")
        grade = rating if self_rated else 1 if qid in correct else 0
        answer = answers.get(qid)
        rows.append((query_id, pid, qid, answer, grade, IMPORTED if grade is not None else "failed",  # type: ignore[arg-type]
                     answer, True if qid in correct else False if qid in wrong else None))
    _add_grades(query, (method, model, version), rows, seen)


def direct_grade(query: ExamppQuery, pid: str, g: dict, seen: Seen) -> None:
    prompt_info = as_mapping(g.get("prompt_info"), "prompt_info")
    method = optional_text(prompt_info.get("prompt_class") or g.get("prompt_type"), "prompt_class") or "direct"
    model = _model(g)
    correct = g.get("correctAnswered")
    if correct is not None and not isinstance(correct, bool):
        raise Refused(f"correctAnswered must be true or false, got {correct!r}")
    rating = g.get("self_ratings")
    grade = _grade_value(rating, "self_ratings") if rating is not None else int(bool(correct))
    answer = optional_text(g.get("answer"), "answer")
    query.configs[(method, model, method)] = {
        "prompt_info": prompt_info, "llm_options": g.get("llm_options"), "source": "exampp",
        "prompt_type": g.get("prompt_type"), "direct": True,
    }
    row = (query.query_id, pid, "", answer, grade, IMPORTED, answer, correct)
    _add_grades(query, (method, model, method), [row], seen)
