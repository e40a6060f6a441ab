"""A small collection in the TREC AutoJudge formats (original text, written for these tests): topics JSONL
(`request_id`, `title`), one report file per run (three systems of clearly different quality, each sentence
citing a document) and an AutoJudge nugget bank (v3) with questions for every topic."""

from __future__ import annotations

import json
from pathlib import Path

from rag_collection import SYSTEMS

TITLES = {"q1": "how do bees make honey", "q2": "why is the sky blue", "q3": "what causes ocean tides",
          "q4": "how does a refrigerator keep food cold"}
QUESTIONS = {
    "q1": ["Where do bees collect nectar?", "How do bees remove water from the nectar?",
           "Where is honey stored in the hive?"],
    "q2": ["What scattering makes the sky blue?", "Which wavelengths of light are scattered most?",
           "Why is the sky red at sunset?"],
    "q3": ["Which body's gravity mainly causes tides?", "How many high tides do most coasts see each day?",
           "What are spring tides?"],
    "q4": ["What does the refrigerant do inside the coils?", "What does the compressor do?",
           "Where is the heat released?"],
}


def sentences(text: str) -> list[str]:
    """The answer's sentences."""
    return [s.strip() + "." for s in text.rstrip(".").split(". ")]


def report(run: str, qid: str, text: str) -> dict:
    """One AutoJudge report (RAG 2024 style sentences with citations into `references`)."""
    return {"metadata": {"team_id": "proctor", "run_id": run, "topic_id": qid, "type": "automatic"},
            "references": [f"doc-{qid}-{i}" for i in range(len(sentences(text)))],
            "responses": [{"text": s, "citations": [i]} for i, s in enumerate(sentences(text))]}


def write(root: Path) -> dict[str, Path]:
    """Topics, reports (one file per run) and the bank under `root`."""
    paths = {"topics": root / "topics.jsonl", "responses": root / "responses", "bank": root / "bank.jsonl"}
    paths["responses"].mkdir(parents=True, exist_ok=True)
    paths["topics"].write_text("".join(json.dumps({"request_id": q, "title": t}) + "\n" for q, t in TITLES.items()))
    for run, answers in SYSTEMS.items():
        (paths["responses"] / f"{run}.jsonl").write_text(
            "".join(json.dumps(report(run, q, text)) + "\n" for q, text in answers.items()))
    paths["bank"].write_text("".join(json.dumps(bank_line(q)) + "\n" for q in TITLES))
    return paths


def bank_line(qid: str) -> dict:
    """The AutoJudge NuggetBank (v3) of one topic: its questions keyed by their text."""
    return {"format_version": "v3", "query_id": qid, "title_query": TITLES[qid],
            "nugget_bank": {q: {"question": q, "question_id": f"{qid}-{n}", "query_id": qid}
                            for n, q in enumerate(QUESTIONS[qid])}}
