"""The Autograder Workbench (exam_pp) interchange format: read into the store's rows, write back out.

One JSON line per query: `[query_id, [paragraph, ...]]`. A paragraph carries its text, human judgments,
run rankings, `exam_grades` (per-question grades of one LLM + prompt) and `grades` (direct relevance
grades). See `../shared/data/README.md` of the project for the field list.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Iterator
from math import isfinite
from pathlib import Path

from proctor.errors import InputError
from proctor.io.exampp_grades import direct_grade, exam_grades
from proctor.io.exampp_rows import CHECKED, ExamppQuery, Refused, Seen, as_list, as_mapping, check_id
from proctor.io.fields import as_id, record_id
from proctor.io.textfile import iter_jsonl, line_heads
from proctor.io.trec import MAX_RANK, MAX_RELEVANCE, parse_rank, parse_relevance, parse_score

__all__ = ["ExamppQuery", "read_exampp"]

_QUERY_HEAD = re.compile(rb'\s*\[\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)\s*,')
"""The query id at the start of an exam_pp line (a JSON string or number)."""


def _shared_lines(path: str | Path) -> set[int] | None:
    """Lines whose query (or a facet `query/...` of it) is also another line's, found from the start of each
    line without parsing or even decoding it; None (share every line) when a line does not start like
    `["id", ` or the file cannot be read (the full reading then says what is wrong)."""
    lines: dict[str, list[int]] = {}
    try:
        heads = list(line_heads(path))
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return None
    for line, head in heads:
        if head is None:
            continue
        match = _QUERY_HEAD.match(head)
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
    seen = Seen()
    shared = _shared_lines(path)
    for line, obj in iter_jsonl(path):
        if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], list)):
            raise InputError(str(path), line, "expected `[query_id, [paragraph, ...]]`")
        query = ExamppQuery(line, record_id(path, line, obj[0], "query"))
        seen.start(line, shared is None or line in shared)
        for index, para in enumerate(obj[1]):
            try:
                if not isinstance(para, dict):
                    raise Refused(f"expected a JSON object, got {type(para).__name__}")
                _paragraph(query, para, with_grades, seen)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                pid = para.get("paragraph_id") if isinstance(para, dict) else None
                what = f"paragraph {index}" + (f" ({pid})" if isinstance(pid, str | int) else "")
                problem = str(exc) if isinstance(exc, Refused) else f"malformed ({type(exc).__name__}: {exc})"
                raise InputError(str(path), line, f"{what}: {problem}") from None
        yield query


def _paragraph(query: ExamppQuery, para: dict, with_grades: bool, seen: Seen) -> None:
    pid = para["paragraph_id"]
    if type(pid) is not str or pid not in CHECKED:
        pid = check_id(pid, "paragraph")
    text = para.get("text")
    if text is not None and not isinstance(text, str):
        raise Refused(f"text must be a string, got {type(text).__name__}")
    if text is not None:
        if not text or text.isspace():  # graded as the passage: a passage without text is unjudgeable instead
            raise Refused(f"passage {pid!r}: the text is empty (leave `text` out: a passage without text is "
                          "unjudgeable, never graded)")
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        first = seen.texts.setdefault(pid, (query.line, digest))
        if first[1] != digest:
            raise Refused(f"passage {pid!r} given again with another text (first {seen.first(first[0])})")
    else:
        first = seen.texts.get(pid)
    at = seen.line_passages.setdefault(pid, len(query.passages))
    if at == len(query.passages):
        query.passages.append((pid, text))
        if first is not None and first[0] != query.line:
            query.given_before.append(pid)
    elif text is not None:
        query.passages[at] = (pid, text)
    data = para.get("paragraph_data")
    if type(data) is not dict:
        data = as_mapping(data, "paragraph_data")
    for j in as_list(data.get("judgments"), "judgments"):
        _judgment(query, pid, j if type(j) is dict else as_mapping(j, "a judgment"), seen)
    rankings = data.get("rankings")
    for r in rankings if type(rankings) is list else as_list(rankings, "rankings"):
        _ranking(query, pid, r if type(r) is dict else as_mapping(r, "a ranking"), seen)
    if not with_grades:
        return
    for eg in as_list(para.get("exam_grades"), "exam_grades"):
        exam_grades(query, pid, eg if type(eg) is dict else as_mapping(eg, "an exam_grades entry"), seen)
    for g in as_list(para.get("grades"), "grades"):
        direct_grade(query, pid, as_mapping(g, "a grades entry"), seen)


def _judgment(query: ExamppQuery, pid: str, j: dict, seen: Seen) -> None:
    rel = j["relevance"]
    if type(rel) is not int or not -MAX_RELEVANCE <= rel <= MAX_RELEVANCE:  # else the checks say what is wrong
        try:
            if isinstance(rel, str):
                raise ValueError(f"relevance {rel!r} is not an integer")
            rel = parse_relevance(rel)
        except ValueError as exc:
            raise Refused(f"judgment {exc}") from None
    judged_query = _own_query(query, j.get("query", query.query_id), "judgment")
    new = (query.line, rel)
    first = seen.judged.setdefault((judged_query, pid), new)
    if first[1] != rel:
        raise Refused(f"passage {pid!r} judged {first[1]} and {rel} for query {judged_query!r} "
                       f"(first {seen.first(first[0])})")
    if first is new:
        query.judgments.append((judged_query, pid, rel))


def _own_query(query: ExamppQuery, named: object, what: str) -> str:
    """The line's query or one of its facets (`query/facet`, TREC CAR), checked as an id; any other query is
    refused."""
    if named == query.query_id:  # a valid id already
        return query.query_id
    named = check_id(named, "query")
    if named != query.query_id and not named.startswith(query.query_id + "/"):
        raise Refused(f"a {what} for query {named!r} inside the line of query {query.query_id!r}")
    return named


def _ranking(query: ExamppQuery, pid: str, r: dict, seen: Seen) -> None:
    ranked_query = query.query_id
    if (named := r.get("queryId", ranked_query)) != ranked_query:
        ranked_query = _own_query(query, named, "ranking")
    run = r["method"]
    if type(run) is not str or run not in CHECKED:
        run = check_id(run, "run")
    rank, score = r["rank"], r["score"]
    if not (type(rank) is int and 0 <= rank <= MAX_RANK and type(score) is float and isfinite(score)):
        try:
            rank, score = parse_rank(rank), parse_score(score)
        except ValueError as exc:
            raise Refused(f"ranking of run {run!r}: {exc}") from None
    new = (query.line, rank, score)
    first = seen.ranked.setdefault((run, ranked_query, pid), new)
    if first is not new and first[1:] != (rank, score):
        raise Refused(f"run {run!r} ranks passage {pid!r} twice for query {ranked_query!r}: rank {first[1]} "
                       f"score {first[2]} (first {seen.first(first[0])}), then rank {rank} score {score}")
    if first is new:
        query.rankings.append((run, ranked_query, pid, rank, score))


