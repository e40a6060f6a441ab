"""Write the example collection to files in the formats users bring: queries TSV, corpus JSONL, TREC runs
and qrels, a question bank (Workbench `items` format) and the grades as an exam_pp file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from proctor.demo.collection import MODEL, PASSAGES, PROMPT_CLASS, QUERIES, QUESTIONS, RUNS


def question_id(query_id: str, text: str) -> str:
    """The Workbench's question id: `query_id/md5(text)`."""
    return f"{query_id}/{hashlib.md5(text.encode()).hexdigest()}"


def write_collection(folder: str | Path) -> dict[str, Path]:
    """Write every file of the collection into `folder`; returns `{kind: path}` (runs: the runs folder)."""
    folder = Path(folder)
    runs_dir = folder / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    paths = {"queries": folder / "queries.tsv", "corpus": folder / "corpus.jsonl", "qrels": folder / "qrels.txt",
             "bank": folder / "bank.jsonl", "exampp": folder / "grades.jsonl", "runs": runs_dir}
    paths["queries"].write_text("".join(f"{qid}\t{text}\n" for qid, text in QUERIES.items()), encoding="utf-8")
    paths["corpus"].write_text("".join(json.dumps({"id": pid, "text": text}) + "\n"
                                       for passages in PASSAGES.values() for pid, text, _, _ in passages),
                               encoding="utf-8")
    paths["qrels"].write_text("".join(f"{qid} 0 {pid} {rel}\n" for qid, passages in PASSAGES.items()
                                      for pid, _, rel, _ in passages), encoding="utf-8")
    for run, per_query in RUNS.items():
        lines = [f"{qid} Q0 {pid} {rank} {10.0 - rank:.1f} {run}\n"
                 for qid, ranked in per_query.items() for rank, pid in enumerate(ranked, start=1)]
        (runs_dir / f"{run}.run").write_text("".join(lines), encoding="utf-8")
    paths["bank"].write_text("".join(json.dumps(_bank_line(qid)) + "\n" for qid in QUERIES), encoding="utf-8")
    paths["exampp"].write_text("".join(json.dumps(_exampp_line(qid)) + "\n" for qid in QUERIES),
                               encoding="utf-8")
    return paths


def _bank_line(qid: str) -> dict:
    return {"query_id": qid, "facet_id": None, "test_collection": "proctor-demo", "query_text": QUERIES[qid],
            "info": {"description": "example bank written for the Proctor demo"},
            "items": [{"query_id": qid, "question_id": question_id(qid, text), "question_text": text,
                       "gold_answers": answers} for text, answers in QUESTIONS[qid]]}


def _exampp_line(qid: str) -> list:
    ids = [question_id(qid, text) for text, _ in QUESTIONS[qid]]
    paragraphs = []
    for pid, text, _, ratings in PASSAGES[qid]:
        paragraphs.append({
            "paragraph_id": pid, "text": text, "paragraph": {},
            "paragraph_data": {"judgments": [], "rankings": []},
            "exam_grades": [{
                "correctAnswered": [q for q, r in zip(ids, ratings, strict=True) if r >= 4],
                "wrongAnswered": [q for q, r in zip(ids, ratings, strict=True) if r < 4],
                "answers": [[q, str(r)] for q, r in zip(ids, ratings, strict=True)],
                "llm": MODEL, "llm_options": {}, "exam_ratio": sum(r >= 4 for r in ratings) / len(ratings),
                "prompt_info": {"prompt_class": PROMPT_CLASS, "is_self_rated": True},
                "self_ratings": [{"question_id": q, "self_rating": r} for q, r in zip(ids, ratings, strict=True)],
            }],
        })
    return [qid, paragraphs]
