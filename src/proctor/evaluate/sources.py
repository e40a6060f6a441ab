"""Where a leaderboard's inputs come from: the grade set (method, model), labels, runs, and the
description every report carries of how its numbers were made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.labels import LabelStats, Qrels, exam_labels
from proctor.evaluate.runs import Ranked, order_runs
from proctor.io.trec import qrels_dict, read_qrels, read_runs
from proctor.store import Store


def choose_grade_set(store: Store, method: str | None, model: str | None) -> dict[str, Any]:
    """The one (method, model) grade set that matches; ambiguity or absence is a usage error."""
    sets = store.grade_sets()
    matching = [s for s in sets if (method is None or s["method"] == method) and (model is None or s["model"] == model)]
    if len(matching) == 1:
        return matching[0]
    available = "; ".join(f"--method {s['method']} --model {s['model']} ({s['grades']} grades)" for s in sets)
    if not sets:
        raise UsageError(f"{store.path}: the store holds no grades (import an exam_pp file or run `proctor grade`)")
    if not matching:
        raise UsageError(f"no grades for method={method} model={model}; the store has: {available}")
    raise UsageError(f"several grade sets match; choose one: {available}")


def describe(store: Store, grade_set: dict[str, Any] | None) -> dict[str, Any]:
    """How labels were made: method, model, prompt versions, bank versions."""
    if grade_set is None:
        return {"labels": "human judgments"}
    banks = [f"{b['bank']}@{b['version']}" for b in store.banks()]
    return {
        "labels": "EXAM grades",
        "method": grade_set["method"],
        "model": grade_set["model"],
        "prompt_version": ",".join(grade_set["prompt_versions"]),
        "bank": ",".join(banks) if banks else "none imported (questions as graded)",
        "grades": grade_set["grades"],
        "failed_grades": grade_set["failures"],
    }


def exam_qrels(
    store: Store, grade_set: dict[str, Any], *, min_questions: int = 1, facets: bool = False,
    stats: LabelStats | None = None,
) -> Qrels:
    """EXAM-Qrels labels from one grade set."""
    facet_map = store.question_facets() if facets else None
    rows = store.grade_rows(grade_set["method"], grade_set["model"])
    return exam_labels(rows, min_questions=min_questions, facets=facet_map, stats=stats)


def official_or_file_qrels(store: Store, which: str) -> Qrels:
    """`official`: the store's judgments; anything else: a qrels file."""
    if which == "official":
        qrels = store.judgments()
        if not qrels:
            raise UsageError(f"{store.path}: the store holds no judgments (import qrels or an exam_pp file)")
        return qrels
    return qrels_dict(read_qrels(which))


def load_runs(store: Store, run_paths: Sequence[str] | None) -> Ranked:
    """Ranked runs from files/folders when given, else from the store."""
    if run_paths:
        return order_runs(read_runs(run_paths))
    runs = store.rankings()
    if not runs:
        raise UsageError(f"{store.path}: the store holds no rankings (import runs, or pass --runs)")
    return order_runs(runs)
