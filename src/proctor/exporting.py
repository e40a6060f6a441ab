"""Export a store in the Autograder Workbench's exam_pp interchange format: passages, judgments, rankings
and the grades of the chosen grade sets (their label step). Reading the format is `proctor.io.exampp`'s."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from proctor.records import Grade, GradeSet
from proctor.store import Store


def write_exampp(store: Store, out: str | Path, grade_sets: Sequence[GradeSet] = ()) -> int:
    """Write the store as an exam_pp file (gzipped when `out` ends in .gz); returns the number of queries."""
    out = Path(out)
    with (gzip.open(out, "wt", encoding="utf-8") if out.suffix == ".gz"
          else open(out, "w", encoding="utf-8")) as handle:
        return _write(store, handle, grade_sets)


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
    current: dict[tuple[str, str], list[Grade]] = {}
    for g in store.grades.records(grade_set, grade_set.step):
        current.setdefault((g.query_id, g.passage_id), []).append(g)
    config = grade_set.info
    method, model, version = grade_set.method, grade_set.model, grade_set.prompt_version
    for (qid, pid), grades in current.items():
        target = para(qid, pid)
        if config.get("direct"):
            for g in grades:
                target.setdefault("grades", []).append({
                    "correctAnswered": bool(g.correct), "answer": g.answer or "", "llm": model,
                    "llm_options": config.get("llm_options") or {}, "prompt_info": config.get("prompt_info"),
                    "self_ratings": g.grade, "prompt_type": config.get("prompt_type")})
            continue
        target["exam_grades"] = target["exam_grades"] or []
        target["exam_grades"].append(_exam_grades_entry(method, model, version, config, grades))


def _exam_grades_entry(method: str, model: str, version: str, config: dict, grades: list[Grade]) -> dict:
    self_rated = method in ("self-rating", "nugget-rating") or any(
        g.grade is not None and g.grade > 1 for g in grades)
    prompt_info = config.get("prompt_info") or {"prompt_class": version, "is_self_rated": self_rated}
    correct = [g.question_id for g in grades if g.correct is True]
    wrong = [g.question_id for g in grades if g.correct is False]
    return {
        "correctAnswered": correct,
        "wrongAnswered": wrong,
        "answers": [[g.question_id, g.answer or ""] for g in grades],
        "llm": model,
        "llm_options": config.get("llm_options") or {},
        "exam_ratio": len(correct) / len(grades) if grades else 0.0,
        "prompt_info": prompt_info,
        "self_ratings": [{"question_id": g.question_id, "self_rating": g.grade}
                         for g in grades if g.grade is not None] if self_rated else None,
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
