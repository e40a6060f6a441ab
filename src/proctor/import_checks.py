"""What an import may change: a run the store holds is one unit, the grades made from a text an import replaced
are set aside, and ranked passages without text are counted (`proctor.importing` calls these)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from proctor.errors import InputError
from proctor.records import GradeSet
from proctor.store import Store
from proctor.store.integrity import Guard


class ImportTally(Protocol):
    """What these checks read and add to while an import runs (`proctor.importing.report.Tally`)."""

    kind: str
    path: str
    imported_at: str
    replaced: dict[str, int]
    notes: list[str]


def set_stale(store: Store, guard: Guard, report: ImportTally) -> None:
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


def note_unjudgeable(store: Store, report: ImportTally) -> None:
    """After an import of rankings: how many ranked passages have no text (never graded, left out of qrels)."""
    if report.kind not in ("runs", "exampp", "corpus", "responses"):
        return
    n = store.corpus.unjudgeable()
    if n:
        report.notes.append(f"{report.path}: the store's runs now rank {n} (query, passage) pairs that name a "
                            "passage the store has no text for (this file's and the earlier ones'): unjudgeable "
                            "(never graded, left out of EXAM-Qrels, unjudged for every measure) "
                            "until a corpus gives their text")


def compare_runs(store: Store, path: Path, lines: list, replace: bool, report: ImportTally) -> None:
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
        raise InputError(str(path), *_run_difference(store, run, mine, stored), params=("replace",))


def _run_difference(store: Store, run: str, mine: dict, stored: dict) -> tuple[int, str]:
    """The first line where a file's run differs from the stored run, and what differs."""
    tail = ("; a run is imported whole: pass {replace} to replace the stored run, or give this one a run name of "
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


def named_grade_set(store: Store, path: Path, line: int, grade_set: GradeSet, grades_bank: str | None) -> str:
    """Record a grade set an entry names in full (`proctor export exampp`'s extension) as it is: its bank version
    must be in the store, and `--bank` cannot move it to another."""
    if grades_bank is not None:
        raise InputError(str(path), line, f"grade set {grade_set.id} names its own bank ({grade_set.bank_label}) in "
                         "the file's `proctor` extension: {bank} applies to exam_pp grades without one",
                         params=("bank",))
    if grade_set.bank is not None and (grade_set.bank, grade_set.bank_version) not in {
            (b["bank"], b["version"]) for b in store.banks.versions()}:
        raise InputError(str(path), line, f"grade set {grade_set.id} ({grade_set.method} / {grade_set.model}) grades "
                         f"bank {grade_set.bank_label}, which the store does not hold: import that bank version "
                         "first (`proctor bank export` from the store it came from, then `proctor import bank`)")
    return store.grades.ensure_grade_set(grade_set)


def refuse_lone_ensembles(store: Store, path: Path, sets: dict[tuple[str, str, str], str],
                          lines: dict[str, int] | None = None) -> None:
    """An ensemble is derived from its members: one whose member is neither in the store nor in the file could
    never be read (nor derived again). Refused naming the file and the line where the ensemble first appears
    (`lines`: grade set id → line)."""
    known = {s.id: s for s in store.grades.grade_sets()}
    for gid in sorted(set(sets.values()), key=lambda g: ((lines or {}).get(g, 0), g)):
        missing = [m for m in known[gid].members if m not in known]
        if missing:
            raise InputError(str(path), (lines or {}).get(gid), f"ensemble {gid}: its member grade set {missing[0]} "
                             "is neither in the store nor in this file; export the ensemble with its members "
                             "(`proctor export exampp {grade_set}` of the ensemble writes them too)",
                             params=("grade_set",))


def refuse_revived(path: Path, revived: tuple | None, lines: dict[str, int]) -> None:
    """A grade set aside as stale (its text was replaced) is not brought back by a file made before that."""
    if revived is not None:
        gid, qid, pid, question, why = revived
        raise InputError(str(path), lines.get(qid), f"grade (grade set {gid}, query_id {qid!r}, passage_id {pid!r}, "
                         f"question_id {question!r}) was set aside as stale ({why}): the text it was made from is "
                         "gone, and this file would make it count again; pass {replace} to import this file's "
                         "grades as valid for the texts the store holds now", params=("replace",))


def refuse_non_members(path: Path, line: int, questions: set[str], members: set[str], bank: str | None) -> None:
    """A grade of a question that is not a (non-spurious) member of the bank named by `--bank` is refused."""
    if not questions <= members:
        question = sorted(questions - members)[0]
        raise InputError(str(path), line, f"question {question!r} is graded but not in bank {bank} "
                         "(or marked spurious there: such questions are not graded)")
