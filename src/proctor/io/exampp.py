"""The Autograder Workbench (exam_pp) interchange format: read into the store's rows, write back out.

One JSON line per query: `[query_id, [paragraph, ...]]`. A paragraph carries its text, human judgments,
run rankings, `exam_grades` (per-question grades of one LLM + prompt) and `grades` (direct relevance
grades). See `../shared/data/README.md` of the project for the field list.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import InputError
from proctor.io.records import as_id, record_id
from proctor.io.textfile import iter_jsonl, read_lines
from proctor.io.trec import parse_rank, parse_relevance, parse_score
from proctor.records import Grade

GradeKey = tuple[str, str, str]
"""(method, model, prompt version): the grade set a grade of an exam_pp file goes to."""
GradeRow = tuple[str, str, str, str | None, int | None, str, str | None, bool | None]
"""(query, passage, question, raw reply, grade, parse status, answer, correct): a grade as a plain tuple, in the
order `Store.grade_import` writes it (an import of millions of grades makes no `Grade` objects)."""

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
    grade_rows: dict[GradeKey, list[GradeRow]] = field(default_factory=dict)
    """The grades of each (method, model, prompt version), in file order."""
    configs: dict[GradeKey, dict] = field(default_factory=dict)


    @property
    def grades(self) -> list[Grade]:
        """The grades of `grade_rows` as `Grade` records."""
        return [Grade(q, p, i, m, x, v, g, s, r, a, c) for (m, x, v), rows in self.grade_rows.items()
                for q, p, i, r, g, s, a, c in rows]


class _Refused(ValueError):
    """Content that is well-formed but not acceptable (out of range, another query's, conflicting)."""


@dataclass
class _Seen:
    """What earlier paragraphs and lines gave, to refuse conflicting repeats (identical ones are merged).

    Judgments, rankings and grades are keyed by the line's query (or one of its facets), so a line whose
    query no other line shares (`_shared_lines`) checks them against its own paragraphs only and forgets them
    at its end: memory stays that of one line. Passage texts recur across queries, so a digest of each is
    kept for the whole file."""

    texts: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    """(line, BLAKE2b digest of the text) of every passage given a text so far."""
    judged: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    ranked: dict[tuple[str, str, str], tuple[int, int, float]] = field(default_factory=dict)
    graded: dict[tuple[str, str, str, str, str], tuple[int, list[GradeRow]] | dict[str, tuple[int, GradeRow]]] = \
        field(default_factory=dict)
    """Per (method, model, version, query, passage): the line and rows of its first entry, or (once an entry is
    given again) `{question: (line, row)}`."""
    line: int = 0
    line_passages: dict[str, int] = field(default_factory=dict)
    """Where each passage of the current line is in `ExamppQuery.passages`."""
    shared: tuple[dict, dict, dict] = field(default_factory=lambda: ({}, {}, {}))
    """`judged`, `ranked` and `graded` of the lines whose query another line shares, kept for the whole file."""

    def start(self, line: int, shared: bool) -> None:
        """Begin a line: its keys go with those of the other shared lines, or into dicts of its own."""
        self.line, self.line_passages = line, {}
        self.judged, self.ranked, self.graded = self.shared if shared else ({}, {}, {})

    def first(self, line: int) -> str:
        return "earlier in this line" if line == self.line else f"on line {line}"


_QUERY_HEAD = re.compile(r'\s*\[\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)\s*,')
"""The query id at the start of an exam_pp line (a JSON string or number)."""


def _shared_lines(path: str | Path) -> set[int] | None:
    """Lines whose query (or a facet `query/...` of it) is also another line's, found from the start of each
    line without parsing it; None (share every line) when a line does not start like `["id", `."""
    lines: dict[str, list[int]] = {}
    for line, text in read_lines(path):
        if not text.strip():
            continue
        match = _QUERY_HEAD.match(text)
        try:
            query_id = as_id(json.loads(match.group(1)), "query") if match else None
        except ValueError:
            query_id = None
        if query_id is None:
            return None  # the full reading reports the problem, or shares everything
        lines.setdefault(query_id, []).append(line)
    shared: set[int] = set()
    for query_id, where in lines.items():
        parts = query_id.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts))]
        related = [lines[p] for p in prefixes if p in lines]
        if len(where) > 1 or related:
            shared.update(where)
            for other in related:
                shared.update(other)
    return shared


def read_exampp(path: str | Path, *, with_grades: bool = True) -> Iterator[ExamppQuery]:
    """Yield one `ExamppQuery` per line; malformed content raises `InputError` with the line.

    Ids are checked as every reader checks them; grades must be 0..5, ranks whole numbers from 0, scores
    finite, relevance in -1000..1000; judgments and rankings belong to the line's query; a passage text,
    judgment, ranking or grade given again differently (in this line or an earlier one) is refused."""
    seen = _Seen()
    shared = _shared_lines(path)
    for line, obj in iter_jsonl(path):
        if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], list)):
            raise InputError(str(path), line, "expected `[query_id, [paragraph, ...]]`")
        query = ExamppQuery(line, record_id(path, line, obj[0], "query"))
        seen.start(line, shared is None or line in shared)
        for index, para in enumerate(obj[1]):
            try:
                if not isinstance(para, dict):
                    raise _Refused(f"expected a JSON object, got {type(para).__name__}")
                _paragraph(query, para, with_grades, seen)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                pid = para.get("paragraph_id") if isinstance(para, dict) else None
                what = f"paragraph {index}" + (f" ({pid})" if isinstance(pid, str | int) else "")
                problem = str(exc) if isinstance(exc, _Refused) else f"malformed ({type(exc).__name__}: {exc})"
                raise InputError(str(path), line, f"{what}: {problem}") from None
        yield query


def _paragraph(query: ExamppQuery, para: dict, with_grades: bool, seen: _Seen) -> None:
    pid = _id(para["paragraph_id"], "paragraph")
    text = para.get("text")
    if text is not None and not isinstance(text, str):
        raise _Refused(f"text must be a string, got {type(text).__name__}")
    if text is not None:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        first = seen.texts.setdefault(pid, (query.line, digest))
        if first[1] != digest:
            raise _Refused(f"passage {pid!r} given again with another text (first {seen.first(first[0])})")
    at = seen.line_passages.setdefault(pid, len(query.passages))
    if at == len(query.passages):
        query.passages.append((pid, text))
    elif text is not None:
        query.passages[at] = (pid, text)
    data = _mapping(para.get("paragraph_data"), "paragraph_data")
    for j in _list(data.get("judgments"), "judgments"):
        _judgment(query, pid, _mapping(j, "a judgment"), seen)
    for r in _list(data.get("rankings"), "rankings"):
        _ranking(query, pid, _mapping(r, "a ranking"), seen)
    if not with_grades:
        return
    for eg in _list(para.get("exam_grades"), "exam_grades"):
        _exam_grades(query, pid, _mapping(eg, "an exam_grades entry"), seen)
    for g in _list(para.get("grades"), "grades"):
        _direct_grade(query, pid, _mapping(g, "a grades entry"), seen)


_CHECKED: dict[str, None] = {}
"""Id strings already found valid (a question id recurs in ratings, answers and verdicts of every passage)."""


def _id(value: object, what: str) -> str:
    if type(value) is str and value in _CHECKED:
        return value
    try:
        checked = as_id(value, what)
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    if checked is value:
        if len(_CHECKED) >= 1 << 16:
            _CHECKED.clear()
        _CHECKED[checked] = None
    return checked


def _mapping(value: object, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Refused(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _list(value: object, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Refused(f"{what} must be a list, got {type(value).__name__}")
    return value


def _optional_text(value: object, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _Refused(f"{what} must be a string, got {type(value).__name__}")
    return value


def _judgment(query: ExamppQuery, pid: str, j: dict, seen: _Seen) -> None:
    try:
        if isinstance(j["relevance"], str):
            raise ValueError(f"relevance {j['relevance']!r} is not an integer")
        rel = parse_relevance(j["relevance"])
    except ValueError as exc:
        raise _Refused(f"judgment {exc}") from None
    judged_query = _own_query(query, _id(j.get("query", query.query_id), "query"), "judgment")
    new = (query.line, rel)
    first = seen.judged.setdefault((judged_query, pid), new)
    if first[1] != rel:
        raise _Refused(f"passage {pid!r} judged {first[1]} and {rel} for query {judged_query!r} "
                       f"(first {seen.first(first[0])})")
    if first is new:
        query.judgments.append((judged_query, pid, rel))


def _own_query(query: ExamppQuery, named: str, what: str) -> str:
    """The line's query or one of its facets (`query/facet`, TREC CAR); any other query is refused."""
    if named != query.query_id and not named.startswith(query.query_id + "/"):
        raise _Refused(f"a {what} for query {named!r} inside the line of query {query.query_id!r}")
    return named


def _ranking(query: ExamppQuery, pid: str, r: dict, seen: _Seen) -> None:
    ranked_query = _own_query(query, _id(r.get("queryId", query.query_id), "query"), "ranking")
    run = _id(r["method"], "run")
    try:
        rank, score = parse_rank(r["rank"]), parse_score(r["score"])
    except ValueError as exc:
        raise _Refused(f"ranking of run {run!r}: {exc}") from None
    new = (query.line, rank, score)
    first = seen.ranked.setdefault((run, ranked_query, pid), new)
    if first[1:] != (rank, score):
        raise _Refused(f"run {run!r} ranks passage {pid!r} twice for query {ranked_query!r}: rank {first[1]} "
                       f"score {first[2]} (first {seen.first(first[0])}), then rank {rank} score {score}")
    if first is new:
        query.rankings.append((run, ranked_query, pid, rank, score))


def _grade_value(value: object, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 5:
        raise _Refused(f"{what} {value!r} is not a grade 0..5")
    return value


def _add_grades(query: ExamppQuery, key: GradeKey, rows: list[GradeRow], seen: _Seen) -> None:
    """Keep the rows of one entry (one grade set and passage); an entry given again merges identical grades and
    refuses different ones, question by question."""
    if not rows:
        return
    where = (*key, query.query_id, rows[0][1])
    first = seen.graded.setdefault(where, (query.line, rows))
    if type(first) is not tuple or first[1] is not rows:
        rows = _repeated(query, key, where, rows, seen)
    query.grade_rows.setdefault(key, []).extend(rows)


def _repeated(query: ExamppQuery, key: GradeKey, where: tuple, rows: list[GradeRow], seen: _Seen) -> list[GradeRow]:
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
            raise _Refused(f"passage {row[1]!r} graded twice differently on {what} by {key[1]} ({key[2]}): "
                           f"{old[4]} (first {seen.first(line)}) and {row[4]}")
    return new


def _method_of(prompt_info: dict, self_rated: bool) -> str:
    prompt_class = str(prompt_info.get("prompt_class", ""))
    if "nugget" in prompt_class.lower():
        return "nugget-rating" if self_rated else "nugget-qa"
    return "self-rating" if self_rated else "qa"


def _model(entry: dict) -> str:
    return _optional_text(entry.get("llm"), "llm") or "unknown"


def _ratings(eg: dict) -> dict[str, object]:
    """`{question: self_rating}` of an exam_grades entry (a question rated twice differently is refused)."""
    ratings: dict[str, object] = {}
    for r in _list(eg.get("self_ratings"), "self_ratings"):
        if type(r) is not dict:
            r = _mapping(r, "a self_rating")
        named = r.get("question_id")
        qid = _id(named if named is not None else r["nugget_id"], "question")
        rating = r["self_rating"]
        if qid in ratings and ratings[qid] != rating:
            raise _Refused(f"question {qid!r} rated twice differently ({ratings[qid]!r} and {rating!r})")
        ratings[qid] = rating
    return ratings


def _exam_grades(query: ExamppQuery, pid: str, eg: dict, seen: _Seen) -> None:
    prompt_info = _mapping(eg.get("prompt_info"), "prompt_info")
    ratings = _ratings(eg)
    self_rated = bool(prompt_info.get("is_self_rated", bool(ratings)))
    method, model = _method_of(prompt_info, self_rated), _model(eg)
    version = _optional_text(prompt_info.get("prompt_class"), "prompt_class") or method
    answers: dict[str, str | None] = {}
    for qid, text in _list(eg.get("answers"), "answers"):
        answers[_id(qid, "question")] = _optional_text(text, "an answer")
    correct = {_id(q, "question") for q in _list(eg.get("correctAnswered"), "correctAnswered")}
    wrong = {_id(q, "question") for q in _list(eg.get("wrongAnswered"), "wrongAnswered")}
    if correct & wrong:
        raise _Refused(f"question {sorted(correct & wrong)[0]!r} is both correctAnswered and wrongAnswered")
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


def _direct_grade(query: ExamppQuery, pid: str, g: dict, seen: _Seen) -> None:
    prompt_info = _mapping(g.get("prompt_info"), "prompt_info")
    method = _optional_text(prompt_info.get("prompt_class") or g.get("prompt_type"), "prompt_class") or "direct"
    model = _model(g)
    correct = g.get("correctAnswered")
    if correct is not None and not isinstance(correct, bool):
        raise _Refused(f"correctAnswered must be true or false, got {correct!r}")
    rating = g.get("self_ratings")
    grade = _grade_value(rating, "self_ratings") if rating is not None else int(bool(correct))
    answer = _optional_text(g.get("answer"), "answer")
    query.configs[(method, model, method)] = {
        "prompt_info": prompt_info, "llm_options": g.get("llm_options"), "source": "exampp",
        "prompt_type": g.get("prompt_type"), "direct": True,
    }
    row = (query.query_id, pid, "", answer, grade, IMPORTED, answer, correct)
    _add_grades(query, (method, model, method), [row], seen)
