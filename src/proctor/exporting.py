"""Export a store in the Autograder Workbench's exam_pp interchange format: passages, judgments, rankings
and the grades of the chosen grade sets (their label step). Reading the format is `proctor.io.exampp`'s."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from proctor.errors import UsageError
from proctor.io.exampp_grades import EXTENSION
from proctor.methods import ANSWER_METHODS
from proctor.records import GradeSet, grade_set_id
from proctor.store import Store


def write_exampp(store: Store, out: str | Path, grade_sets: Sequence[GradeSet] | None = None) -> int:
    """Write the store as an exam_pp file (gzipped when `out` ends in .gz); returns the number of queries."""
    out = Path(out)
    with (gzip.open(out, "wt", encoding="utf-8") if out.suffix == ".gz"
          else open(out, "w", encoding="utf-8")) as handle:
        return _write(store, handle, grade_sets or ())


def _write(store: Store, handle: TextIO, grade_sets: Sequence[GradeSet]) -> int:
    texts = store.corpus.passage_texts()
    paragraphs: dict[str, dict[str, dict[str, Any]]] = {}

    def para(qid: str, pid: str) -> dict[str, Any]:
        per_query = paragraphs.setdefault(qid, {})
        if pid not in per_query:
            per_query[pid] = {"paragraph_id": pid, "text": texts.get(pid), "paragraph": {},
                              "paragraph_data": {"judgments": [], "rankings": []}, "exam_grades": None}
        return per_query[pid]

    for qid, per_query in sorted(store.corpus.judgments().items()):
        for pid, rel in sorted(per_query.items()):
            para(qid, pid)["paragraph_data"]["judgments"].append(
                {"paragraphId": pid, "query": qid, "relevance": rel, "titleQuery": qid})
    for run, qid, pid, rank, score in sorted(store.corpus.ranking_rows()):
        para(qid, pid)["paragraph_data"]["rankings"].append(
            {"method": run, "paragraphId": pid, "queryId": qid, "rank": rank, "score": score})
    for grade_set in grade_sets:
        _add_grades(store, grade_set, para)
    for qid in sorted(paragraphs):
        handle.write(json.dumps([qid, list(paragraphs[qid].values())], ensure_ascii=False) + "\n")
    return len(paragraphs)


def _add_grades(store: Store, grade_set: GradeSet, para) -> None:
    """The grades of a grade set's label step: per passage one `exam_grades` entry (grades per question) or, for
    grades of the query itself (direct methods, ensembles across bank versions), one `grades` entry; each
    carries the grade set and its grades as stored in the `proctor` extension (`io.exampp_grades.EXTENSION`)."""
    refuse_unexportable(grade_set)
    current: dict[tuple[str, str], list[tuple]] = {}
    for row in store.grades.stored_rows(grade_set.id, grade_set.step):
        current.setdefault((row[0], row[1]), []).append(row[2:])
    questions = {row[0] for rows in current.values() for row in rows}
    if "" in questions and len(questions) > 1:
        raise UsageError(f"grade set {grade_set.id} mixes grades of the query itself with grades per question; the "
                         "exam_pp format keeps them apart, so it cannot be exported")
    direct = questions == {""}
    identity = grade_set.identity()
    self_rated = get_kind(grade_set) != "qa"
    for (qid, pid), rows in current.items():
        extension = {"grade_set": identity, "grades": [
            [q, grade, status, raw, answer, None if correct is None else bool(correct), extra]
            for q, raw, grade, status, answer, correct, extra in rows]}
        target = para(qid, pid)
        if direct:
            (_, raw, grade, _, answer, correct, _), = rows
            target.setdefault("grades", []).append({
                "correctAnswered": bool(correct) if correct is not None else bool(grade), "answer": answer or "",
                "llm": grade_set.model, "llm_options": grade_set.info.get("llm_options") or {},
                "prompt_info": grade_set.info.get("prompt_info") or {"prompt_class": grade_set.step,
                                                                    "is_self_rated": True},
                "self_ratings": grade, "prompt_type": grade_set.info.get("prompt_type") or grade_set.step,
                EXTENSION: extension})
            continue
        target["exam_grades"] = target["exam_grades"] or []
        target["exam_grades"].append({**_exam_grades_entry(grade_set, rows, self_rated), EXTENSION: extension})


def refuse_unexportable(grade_set: GradeSet) -> None:
    """Grade sets the exam_pp format cannot give back as they are: those of generated answers, and one recorded
    under an id its fields no longer give (a store of an earlier release)."""
    if grade_set.method in ANSWER_METHODS:
        raise UsageError(f"grade set {grade_set.id} ({grade_set.method}) grades generated answers, not pool passages: "
                         "the exam_pp format has no place for it")
    if grade_set.id != grade_set_id(grade_set.method, grade_set.model, grade_set.prompt_version, grade_set.bank,
                                    grade_set.bank_version, grade_set.params):
        raise UsageError(f"grade set {grade_set.id} was recorded under an id its fields no longer give (a store of an "
                         "earlier release): an import could not give it back under that id, so it is not exported")


def get_kind(grade_set: GradeSet) -> str:
    """The parser kind of a grade set's label step (`rating`, `qa`, ...); `rating` for steps Proctor does not
    know (imported, ensembles: grades on a scale)."""
    from proctor.methods import get_method

    if (grade_set.info.get("prompt_info") or {}).get("is_self_rated") is False:
        return "qa"
    try:
        return get_method(grade_set.step).kind
    except UsageError:
        return "rating"


def _exam_grades_entry(grade_set: GradeSet, rows: list[tuple], self_rated: bool) -> dict:
    """The exam_pp fields of one passage's grades: self-ratings for graded scales (every grade, whatever its value:
    the grade set says it is self-rated, not the grades), correct/wrong answers for QA."""
    correct = [q for q, *_, verdict, _ in rows if verdict == 1]
    wrong = [q for q, *_, verdict, _ in rows if verdict == 0]
    info = grade_set.info.get("prompt_info") or {}
    return {
        "correctAnswered": correct,
        "wrongAnswered": wrong,
        "answers": [[q, answer or ""] for q, _, _, _, answer, _, _ in rows],
        "llm": grade_set.model,
        "llm_options": grade_set.info.get("llm_options") or {},
        "exam_ratio": len(correct) / len(rows) if rows else 0.0,
        "prompt_info": {**info, "prompt_class": info.get("prompt_class", grade_set.prompt_version),
                        "is_self_rated": self_rated},
        "self_ratings": [{"question_id": q, "self_rating": grade} for q, _, grade, *_ in rows
                         if grade is not None] if self_rated else None,
    }


def run_lines(store: Store) -> dict[str, list[str]]:
    """Every stored run as TREC run lines `qid Q0 docid rank score run`: queries sorted, passages in trec_eval's
    order (score descending, ties by passage id descending), the rank and score as imported."""
    from proctor.io.runs import order

    rows: dict[str, dict[str, dict[str, tuple[int, float]]]] = {}
    for run, qid, pid, rank, score in store.corpus.ranking_rows():
        rows.setdefault(run, {}).setdefault(qid, {})[pid] = (rank, score)
    out: dict[str, list[str]] = {}
    for run in sorted(rows):
        lines = []
        for qid in sorted(rows[run]):
            ranked = rows[run][qid]
            for pid in order({p: score for p, (_, score) in ranked.items()}):
                rank, score = ranked[pid]
                lines.append(f"{qid} Q0 {pid} {rank} {score!r} {run}\n")
        out[run] = lines
    return out


def write_runs(store: Store, folder: str | Path) -> dict[str, int]:
    """One TREC run file per stored run, named as the run, in `folder`; all are written to a temporary folder
    first, so a failure leaves `folder` as it was. Returns the lines written per run."""
    import os
    import tempfile

    from proctor.errors import UsageError

    runs = run_lines(store)
    if not runs:
        raise UsageError(f"{store.path}: no runs in the store")
    for run in runs:
        if run in (".", "..") or any(c in run for c in "/\\\0") or run.startswith("."):
            raise UsageError(f"run {run!r}: its name cannot be a file name; nothing was written")
    from proctor.outputs import folder_target

    folder = folder_target(folder)
    with tempfile.TemporaryDirectory(prefix=".export-runs.", dir=folder) as tmp:
        for run, lines in runs.items():
            (Path(tmp) / run).write_text("".join(lines), encoding="utf-8")
        for run in runs:
            os.replace(Path(tmp) / run, folder / run)
    return {run: len(lines) for run, lines in runs.items()}


def judgment_lines(store: Store) -> list[str]:
    """The imported human judgments as qrels lines `qid 0 docid rel` (queries, then passages, sorted)."""
    judgments = store.corpus.judgments()
    return [f"{qid} 0 {pid} {judgments[qid][pid]}\n" for qid in sorted(judgments) for pid in sorted(judgments[qid])]
