"""What an import may change: a run the store holds is one unit, the grades made from a text an import replaced
are set aside, and ranked passages without text are counted (`proctor.importing` calls these)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from proctor.errors import InputError
from proctor.store import Store
from proctor.store.integrity import Guard


class ImportReport(Protocol):
    """What these checks read and add to (`proctor.importing.ImportReport`)."""

    kind: str
    path: str
    imported_at: str
    replaced: dict[str, int]
    notes: list[str]


def set_stale(store: Store, guard: Guard, report: ImportReport) -> None:
    """Set aside the grades made from the texts replaced since the last call (before the import writes grades of
    its own for them: an exam_pp file calls this after each line's passages)."""
    stale = 0
    for column, ids, why in (("passage_id", guard.replaced_ids("passages"), "passage text replaced"),
                             ("query_id", guard.replaced_ids("queries"), "query text replaced"),
                             ("question_id", guard.replaced_questions, "question text replaced")):
        new = {i for i in ids if (column, i) not in guard.staled}
        guard.staled |= {(column, i) for i in new}
        stale += store.imports.stale_grades_of(column, new, why, report.imported_at)
    if stale:
        report.replaced["stale grades"] = report.replaced.get("stale grades", 0) + stale


def note_unjudgeable(store: Store, report: ImportReport) -> None:
    """After an import of rankings: how many ranked passages have no text (never graded, left out of qrels)."""
    if report.kind not in ("runs", "exampp", "corpus", "responses"):
        return
    n = store.corpus.unjudgeable()
    if n:
        report.notes.append(f"{report.path}: the store's runs now rank {n} (query, passage) pairs that name a "
                            "passage the store has no text for (this file's and the earlier ones'): unjudgeable "
                            "(never graded, left out of EXAM-Qrels, unjudged for every measure) "
                            "until a corpus gives their text")


def compare_runs(store: Store, path: Path, lines: list, replace: bool, report: ImportReport) -> None:
    """A run the store holds is one unit: the file must hold exactly its rankings (the same passages for the same
    queries with the same ranks and scores), or it is refused naming the first line that differs; under
    `replace` the stored run is removed first (counted)."""
    by_run: dict[str, dict[tuple[str, str], tuple[int, int, float]]] = {}
    for r in lines:
        by_run.setdefault(r.run, {})[(r.query_id, r.passage_id)] = (r.line, r.rank, r.score)
    for run, stored in ((run, store.corpus.run_rankings(run)) for run in by_run):
        if not stored:
            continue
        mine = by_run[run]
        if {k: v[1:] for k, v in mine.items()} == {k: v[:2] for k, v in stored.items()}:
            continue
        if replace:
            store.corpus.delete_run_rankings([run])
            report.replaced["rankings"] = report.replaced.get("rankings", 0) + len(stored)
            continue
        raise InputError(str(path), *_run_difference(store, run, mine, stored))


def _run_difference(store: Store, run: str, mine: dict, stored: dict) -> tuple[int, str]:
    """The first line where a file's run differs from the stored run, and what differs."""
    tail = ("; a run is imported whole: pass --replace to replace the stored run, or give this one a run name of "
            "its own")
    for key, (line, rank, score) in sorted(mine.items(), key=lambda kv: kv[1][0]):
        where = f"run {run!r}, query {key[0]!r}, passage {key[1]!r}"
        if key not in stored:
            origin = store.imports.origin_words(next(iter(stored.values()))[2])
            return line, f"{where}: the stored run (from {origin}) does not rank this passage for this query{tail}"
        if stored[key][:2] != (rank, score):
            return line, (f"{where}: the store holds rank {stored[key][0]}, score {stored[key][1]!r} (from "
                          f"{store.imports.origin_words(stored[key][2])}), this file has rank {rank}, score "
                          f"{score!r}{tail}")
    missing = min(set(stored) - set(mine))
    first = min(v[0] for v in mine.values())
    return first, (f"run {run!r}: the stored run (from {store.imports.origin_words(stored[missing][2])}) also ranks "
                   f"passage "
                   f"{missing[1]!r} for query {missing[0]!r}, which this file lacks{tail}")
