"""Tiny stores for the trust tests: queries, runs and self-ratings written as the files a user imports."""

from __future__ import annotations

import json
from pathlib import Path

from proctor.cli import main


def tiny_store(folder: Path, ratings: dict[str, dict[str, int]], runs: dict[str, dict[str, list[str]]], *,
               queries: int | None = None, judgments: dict[str, dict[str, int]] | None = None) -> Path:
    """A store with `queries` queries (q1..qN; default: those rated), the runs `{run: {query: [passages best
    first]}}`, one question per query with the self-ratings `{query: {passage: rating}}`, and judgments."""
    store = folder / "s.db"
    names = sorted({q for r in runs.values() for q in r} | set(ratings))
    if queries is not None:
        names = sorted(set(names) | {f"q{i}" for i in range(1, queries + 1)})
    (folder / "q.tsv").write_text("".join(f"{q}\ttopic {q}\n" for q in names))
    assert main(["import", "queries", str(folder / "q.tsv"), "--store", str(store)]) == 0
    lines = []
    for qid, per in sorted(ratings.items()):
        paragraphs = [{"paragraph_id": pid, "text": f"text of {pid}", "paragraph_data": {"judgments": [],
                       "rankings": []}, "exam_grades": [{
                           "llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
                           "self_ratings": [{"question_id": f"{qid}/a", "self_rating": rating}],
                           "answers": [[f"{qid}/a", "x"]]}]} for pid, rating in sorted(per.items())]
        lines.append(json.dumps([qid, paragraphs]))
    (folder / "g.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["import", "exampp", str(folder / "g.jsonl"), "--store", str(store)]) == 0
    for run, per in runs.items():
        (folder / f"{run}.run").write_text("".join(f"{q} Q0 {p} {i} {100 - i} {run}\n" for q, passages in per.items()
                                                   for i, p in enumerate(passages, start=1)))
        assert main(["import", "runs", str(folder / f"{run}.run"), "--store", str(store)]) == 0
    if judgments:
        (folder / "j.qrels").write_text("".join(f"{q} 0 {p} {r}\n" for q, per in judgments.items()
                                                for p, r in per.items()))
        assert main(["import", "qrels", str(folder / "j.qrels"), "--store", str(store)]) == 0
    return store
