"""The grades of an exam_pp paragraph: `exam_grades` entries (per-question grades of one LLM and prompt) and
`grades` entries (direct relevance grades), as rows of their grade set (method, model, prompt version)."""

from __future__ import annotations

import json
from operator import itemgetter

from proctor.io.exampp_rows import (
    CHECKED,
    IMPORTED,
    Block,
    Blocks,
    ExamppQuery,
    GradeKey,
    GradeRow,
    Refused,
    Seen,
    as_list,
    as_mapping,
    block_rows,
    check_id,
    optional_text,
)
from proctor.records import GradeSet


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
    kept = query.grade_rows.get(key)
    if rows and (kept is None or type(kept) is Blocks) and (block := _as_block(rows)) is not None:
        _keep_block(query, key, block)
        return
    if kept is None:
        kept = query.grade_rows[key] = []
    elif type(kept) is Blocks:  # from now on rows
        kept = query.grade_rows[key] = kept.rows(query.query_id)
    kept.extend(rows)


def _keep_block(query: ExamppQuery, key: GradeKey, block: Block) -> bool:
    """Keep `block` with the line's blocks of `key`; False (nothing kept) when that grade set's grades in the line
    are rows already."""
    kept = query.grade_rows.get(key)
    if kept is None:
        query.grade_rows[key] = Blocks([block])
    elif type(kept) is Blocks:
        kept.append(block)
    else:
        return False
    return True


def _as_block(rows: list[GradeRow]) -> Block | None:
    """An entry's rows (one passage) as a `Block` when each is one (parse status `imported`, the answer its raw
    reply, no extra); else None."""
    pid = rows[0][1]
    if any(row[1] != pid or row[5] != IMPORTED or row[6] != row[3] or row[8] is not None for row in rows):
        return None
    return pid, [row[2] for row in rows], [row[3] for row in rows], [row[4] for row in rows], [row[7] for row in rows]


def _add_block(query: ExamppQuery, key: GradeKey, block: Block, seen: Seen) -> None:
    """`_add_grades` of an entry as a `Block`: kept as it is when it is the first entry of its grade set and passage
    and its grade set's entries in the line are blocks so far."""
    if not block[1]:
        return
    where = (*key, query.query_id, block[0])
    first = seen.graded.setdefault(where, (query.line, block))
    if type(first) is not tuple or first[1] is not block:  # given again
        _add_grades(query, key, block_rows(query.query_id, block), seen)
        return
    if not _keep_block(query, key, block):  # rows already
        rows = block_rows(query.query_id, block)
        seen.graded[where] = (query.line, rows)
        query.grade_rows[key].extend(rows)  # type: ignore[union-attr]


def _repeated(query: ExamppQuery, key: GradeKey, where: tuple, rows: list[GradeRow], seen: Seen) -> list[GradeRow]:
    """The rows of an entry given again that no earlier entry gave; a grade given differently is refused."""
    first = seen.graded[where]
    if isinstance(first, tuple):  # from now on question by question
        line, earlier = first
        if type(earlier) is tuple:  # a block
            earlier = block_rows(where[3], earlier)
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


def _answers(eg: dict) -> dict[str, str | None]:
    """`{question: answer}` of an exam_grades entry (a question answered twice keeps its last answer)."""
    known = _known_answers(eg)
    if known is not None:
        return known
    answers: dict[str, str | None] = {}
    for qid, text in as_list(eg.get("answers"), "answers"):
        answers[check_id(qid, "question")] = optional_text(text, "an answer")
    return answers


def _questions(eg: dict, key: str) -> set[str]:
    """The question ids listed under `key` (correctAnswered, wrongAnswered)."""
    known = _known_questions(eg, key)
    return {check_id(q, "question") for q in as_list(eg.get(key), key)} if known is None else known


_GRADES = frozenset(range(6))
_INT = frozenset({int})
_TEXT = frozenset({str, type(None)})


_QUESTION_ID, _SELF_RATING = itemgetter("question_id"), itemgetter("self_rating")


def _known_ratings(eg: dict) -> dict[str, int] | None:
    """`_ratings` of an entry whose every rating is an integer 0..5 of a distinct question id (`question_id`)
    found valid before (`CHECKED`), without a Python step per rating; None for anything else (`_ratings` and
    `_grade_value` then read it and say what is wrong)."""
    listed = eg.get("self_ratings")
    if type(listed) is not list:
        return {} if listed is None else None
    try:
        ratings = dict(zip(map(_QUESTION_ID, listed), map(_SELF_RATING, listed), strict=True))
        values = set(ratings.values())
    except (TypeError, KeyError, AttributeError):  # not an object, or a `nugget_id` instead: read one by one
        return None
    if (len(ratings) != len(listed) or not ratings.keys() <= CHECKED.keys() or not values <= _GRADES
            or not set(map(type, ratings.values())) <= _INT):  # True and 1.0 equal 1: their types tell them apart
        return None  # (every rating's type: a set of values keeps one of 1, 1.0 and True, whichever came first)
    return ratings


def _known_answers(eg: dict) -> dict[str, str | None] | None:
    """The fast path of `_answers`: an entry whose question ids were all found valid before and whose answers
    are texts or null; None for anything else."""
    listed = eg.get("answers")
    if type(listed) is not list:
        return {} if listed is None else None
    try:
        answers = dict(listed)
    except (TypeError, ValueError):
        return None
    if not answers.keys() <= CHECKED.keys() or not set(map(type, answers.values())) <= _TEXT:
        return None
    return answers


def _known_questions(eg: dict, key: str) -> set[str] | None:
    """The fast path of `_questions`: when every id was found valid before; None for anything else."""
    listed = eg.get(key)
    if type(listed) is not list:
        return set() if listed is None else None
    try:
        questions = set(listed)
    except TypeError:
        return None
    return questions if questions <= CHECKED.keys() else None


def exam_grades(query: ExamppQuery, pid: str, eg: dict, seen: Seen) -> None:
    """Add the grades of one `exam_grades` entry of a paragraph (checks in the order the fields are read)."""
    if eg.get(EXTENSION) is not None:
        proctor_grades(query, pid, as_mapping(eg[EXTENSION], EXTENSION), seen, direct=False)
        return
    prompt_info = eg.get("prompt_info")
    if type(prompt_info) is not dict:
        prompt_info = as_mapping(prompt_info, "prompt_info")
    ratings = known = _known_ratings(eg)
    if ratings is None:
        ratings = _ratings(eg)
    self_rated = bool(prompt_info.get("is_self_rated", bool(ratings)))
    method, model = _method_of(prompt_info, self_rated), _model(eg)
    version = optional_text(prompt_info.get("prompt_class"), "prompt_class") or method
    answers, correct, wrong = _answers(eg), _questions(eg, "correctAnswered"), _questions(eg, "wrongAnswered")
    if correct & wrong:
        raise Refused(f"question {sorted(correct & wrong)[0]!r} is both correctAnswered and wrongAnswered")
    query.configs[(method, model, version)] = {
        "prompt_info": prompt_info, "llm_options": eg.get("llm_options"), "source": "exampp",
    }
    if known is None:
        ratings = {qid: None if rating is None else _grade_value(rating, f"self_rating of {qid}")
                   for qid, rating in sorted(ratings.items())}
    verdicts = dict.fromkeys(wrong, False) | dict.fromkeys(correct, True)
    query_id, questions = query.query_id, _sorted_questions(ratings, answers, verdicts)
    if self_rated and known is not None and len(ratings) == len(questions):  # every question rated: no Python step
        block = (pid, questions, list(map(answers.get, questions)), list(map(ratings.__getitem__, questions)),
                 list(map(verdicts.get, questions)))  # per grade (a column made by `map`)
        _add_block(query, (method, model, version), block, seen)  # type: ignore[arg-type]
        return
    if self_rated:
        rows = [(query_id, pid, q, a := answers.get(q), g := ratings.get(q), IMPORTED if g is not None else "failed",
                 a, verdicts.get(q), None) for q in questions]
    else:
        rows = [(query_id, pid, q, a := answers.get(q), 1 if q in correct else 0, IMPORTED, a, verdicts.get(q), None)
                for q in questions]
    _add_grades(query, (method, model, version), rows, seen)  # type: ignore[arg-type]


_QUESTIONS: dict[tuple[str, ...], list[str]] = {}
"""The sorted questions of an entry by its rated questions in their order (a query's entries list the same ones)."""


def _sorted_questions(ratings: dict, answers: dict, verdicts: dict) -> list[str]:
    """The entry's questions (rated, answered or judged), sorted; found by the rated ones' order when the others
    are among them (one list for them all: read only)."""
    keys = ratings.keys()
    if not (answers.keys() <= keys and verdicts.keys() <= keys):
        return sorted(keys | answers.keys() | verdicts.keys())
    order = tuple(ratings)
    questions = _QUESTIONS.get(order)
    if questions is None:
        if len(_QUESTIONS) >= 4096:
            _QUESTIONS.clear()
        questions = _QUESTIONS[order] = sorted(order)
    return questions


def direct_grade(query: ExamppQuery, pid: str, g: dict, seen: Seen) -> None:
    """Add the grade of one `grades` entry (a direct relevance grade) of a paragraph."""
    if g.get(EXTENSION) is not None:
        proctor_grades(query, pid, as_mapping(g[EXTENSION], EXTENSION), seen, direct=True)
        return
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
    row = (query.query_id, pid, "", answer, grade, IMPORTED, answer, correct, None)
    _add_grades(query, (method, model, method), [row], seen)


EXTENSION = "proctor"
"""The field of an `exam_grades` or `grades` entry in which `proctor export exampp` carries what the exam_pp fields
cannot: the grade set in full (`grade_set`: id, method, model, prompt version, bank and version, params, label
step, info) and every grade as stored (`grades`: [question, grade, parse status, raw reply, answer, correct,
extra JSON]). The Workbench ignores it; an import takes the grade set and grades from it, not from the exam_pp
fields (which say the same to the Workbench)."""
_IDENTITY = {"id": str, "method": str, "model": str, "prompt_version": str, "bank": (str, type(None)),
             "bank_version": (str, type(None)), "params": dict, "label_step": str, "info": dict}


def proctor_grades(query: ExamppQuery, pid: str, ext: dict, seen: Seen, *, direct: bool) -> None:
    """Add the grades of an entry's `proctor` extension to the grade set it names (its id checked against its
    fields)."""
    grade_set = _named_grade_set(as_mapping(ext.get("grade_set"), "proctor.grade_set"))
    key = (grade_set.step, grade_set.model, grade_set.id)
    query.grade_sets[key] = grade_set
    rows: dict[str, tuple] = {}
    for listed in as_list(ext.get("grades"), "proctor.grades"):
        if not isinstance(listed, list) or len(listed) != 7:
            raise Refused("proctor.grades: each grade is [question, grade, parse status, raw reply, answer, correct, "
                          "extra]")
        question, grade, status, raw, answer, correct, extra = listed
        question = "" if direct and question == "" else check_id(question, "question")
        if direct != (question == ""):
            raise Refused(f"proctor.grades: question {question!r} in a {'grades' if direct else 'exam_grades'} entry "
                          "(a direct grade has the question \"\", a per-question grade an id)")
        if grade is not None:
            grade = _grade_value(grade, "proctor grade")
        if not isinstance(status, str) or not status:
            raise Refused(f"proctor.grades: parse status {status!r} is not a text")
        if correct is not None and not isinstance(correct, bool):
            raise Refused(f"proctor.grades: correct {correct!r} is not true, false or null")
        row = (query.query_id, pid, question, optional_text(raw, "raw reply"), grade, status,
               optional_text(answer, "answer"), None if correct is None else int(correct), _json(extra))
        if (first := rows.setdefault(question, row)) != row:  # the same grade twice is one; two are refused
            what = f"question {question!r}" if question else "relevance"
            field, before, after = next((name, a, b) for name, a, b in
                                        zip(_GRADE_FIELDS, first[3:], row[3:], strict=True) if a != b)
            raise Refused(f"proctor.grades: passage {pid!r} graded twice differently on {what} in one entry: "
                          f"{field} {before!r} and {after!r}")
    _add_grades(query, key, list(rows.values()), seen)


_GRADE_FIELDS = ("raw reply", "grade", "parse status", "answer", "correct", "extra")
"""What a `proctor.grades` row holds after its question (the words a refusal names a differing one by)."""


def _named_grade_set(named: dict) -> GradeSet:
    for name, kind in _IDENTITY.items():
        if not isinstance(named.get(name), kind):
            raise Refused(f"proctor.grade_set: {name} is missing or of the wrong type")
    grade_set = GradeSet(named["method"], named["model"], named["prompt_version"], named["bank"],
                         named["bank_version"], named["params"], named["label_step"], named["info"])
    if grade_set.id != named["id"]:
        raise Refused(f"proctor.grade_set: id {named['id']!r} is not the id its fields give ({grade_set.id})")
    return grade_set


def _json(extra: object) -> str | None:
    """A grade's `extra` as stored: JSON text or null."""
    if extra is None:
        return None
    if not isinstance(extra, str):
        raise Refused(f"proctor.grades: extra must be JSON text or null, got {type(extra).__name__}")
    try:
        json.loads(extra)
    except ValueError:
        raise Refused(f"proctor.grades: extra {extra[:40]!r} is not JSON") from None
    return extra
