"""Recorded grades for the replay backend: from a Proctor store (one grade set, every step) or an exam_pp
graded file. Keys are (step, query, passage, item); an LLM verification recorded with a QA grade is
replayed as step `qa-verify`."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import UsageError
from proctor.llm.config import Recorded
from proctor.records import Grade, GradeSet
from proctor.store import Store

_EXAMPP_CACHE: dict[tuple, tuple[Recorded, str, str]] = {}
"""exam_pp files already read in this process, by (path, size, mtime, method, selector): an experiment that
plans and then grades, or a notebook that grades twice, reads a large file once. Stores are always read."""


def load_recorded(source: str, method: str, selector: str | None) -> tuple[Recorded, str, str]:
    """({(step, query, passage, item): (grade, reply)}, model, origin) of `method` in `source`; `selector`
    is a model name or a grade set id (`replay:FILE@MODEL`, `replay:FILE@ID`)."""
    path = Path(source)
    if not path.exists():
        raise UsageError(f"{path}: no such file to replay")
    if _is_sqlite(path):
        return _recorded(*_from_store(path, method, selector))
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, method, selector)
    if key not in _EXAMPP_CACHE:
        _EXAMPP_CACHE.clear()
        _EXAMPP_CACHE[key] = _recorded(*_from_exampp(path, method, selector))
    recorded, model, origin = _EXAMPP_CACHE[key]
    return dict(recorded), model, origin


def _recorded(grades: list[Grade], model: str, origin: str) -> tuple[Recorded, str, str]:
    recorded: Recorded = {}
    for g in grades:
        recorded[(g.method, g.query_id, g.passage_id, g.question_id)] = (g.grade, g.raw_reply)
        verifier = (g.extra or {}).get("verifier_reply")
        if verifier is not None:
            recorded.setdefault(("qa-verify", g.query_id, g.passage_id, g.question_id), (None, verifier))
    return recorded, model, origin


def _from_store(path: Path, method: str, selector: str | None) -> tuple[list[Grade], str, str]:
    store = Store.open(path)
    try:
        sets = store.grades.grade_sets()
        chosen = [s for s in sets if s.id == selector] or [
            s for s in sets if s.method == method and not s.intermediate and selector in (None, s.model)]
        if not chosen:
            raise UsageError(f"{path}: no recorded grade set of method {method!r}"
                             + (f" and model or id {selector!r}" if selector else "")
                             + "; it holds:\n" + "\n".join("  " + s.describe() for s in sets))
        if len(chosen) > 1:
            raise UsageError(f"{path}: several grade sets of method {method!r}; name one as replay:{path}@ID:\n"
                             + "\n".join("  " + s.describe() for s in chosen))
        grade_set = chosen[0]
        grades = list(store.grades.records(grade_set))
        grades += [g for s in sets if s.intermediate and s.model == grade_set.model for g in _steps(store, s)]
    finally:
        store.close()
    return grades, grade_set.model, f"{path.name}#{grade_set.id}"


def _steps(store: Store, grade_set: GradeSet) -> list[Grade]:
    return list(store.grades.records(grade_set))


def _from_exampp(path: Path, method: str, model: str | None) -> tuple[list[Grade], str, str]:
    from proctor.io.exampp import read_exampp

    grades = [g for query in read_exampp(path) for g in query.grades
              if g.method == method and (model is None or g.model == model)]
    models = sorted({g.model for g in grades})
    if not models:
        which = f"method {method!r}" + (f" and model {model!r}" if model else "")
        raise UsageError(f"{path}: no recorded grades of {which}")
    if len(models) > 1:
        raise UsageError(f"{path}: grades of several models ({', '.join(models)}); name one: replay:{path}@MODEL")
    return grades, models[0], path.name


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"
