"""A small collection in the TREC 2026 AutoJudge formats (original text, written for these tests), shaped by
autojudge-base 1.0.0's `track_specs.yml` (`rag26`, `ragtime26`): one report file per run, each run in one of the
three sentence formats (RAG24 integer indices into `references`, NeuCLIR doc-id lists, RAGTIME doc → score
maps), one `answer: []` per track, a RAG 2026 nugget bank (v3) whose `title_query` words the topic otherwise,
and a RAGTIME 2026 nugget bank whose questions combine their answers with `aggregator_type` AND / OR.

The judges of these tests are rules on the prompt's text, so every expected value is computed here from the
rules and the texts, never read from Proctor's output."""

from __future__ import annotations

import ast
import json
from pathlib import Path

TITLES = {"t1": "how do bees make honey", "t2": "why is the sky blue", "t3": "what causes ocean tides"}

QUESTIONS = {  # question → the word whose presence in a sentence answers it (the test judge's rule)
    "t1": {"Where do bees collect nectar?": "flowers", "How do bees dry the nectar?": "fan"},
    "t2": {"What scattering makes the sky blue?": "rayleigh", "Which light is scattered most?": "short"},
    "t3": {"Which body's gravity mainly causes tides?": "moon", "How many high tides are there each day?": "two"},
}
SUBJECT = {"t1": "honey", "t2": "sky", "t3": "tide"}
"""A sentence naming the topic's subject (but not the answer) gets grade 2 from the test judge."""

ANSWERS = {  # rag26: run → topic → sentences (an empty list: `answer: []`)
    "r26-idx": {"t1": ["Bees make honey from nectar of flowers.", "Workers fan their wings to dry it."],
                "t2": ["Rayleigh scattering makes the sky blue.", "Clouds are white."],
                "t3": []},
    "r26-ids": {"t1": ["Honey is sweet and sticky.", "Bears like eating it."],
                "t2": ["The sky looks blue on clear days.", "Short waves of light scatter more."],
                "t3": ["The moon pulls the oceans into tides."]},
}
REPORTS = {  # ragtime26: run → topic → sentences
    "rt-map": {"t1": ["Bees gather nectar from flowers in spring.", "In the hive they fan it dry."],
               "t2": ["Sunlight with short wavelengths is scattered by air."],
               "t3": ["Tides rise twice a day, two high tides.", "The Moon's gravity drives them."]},
    "rt-ids": {"t1": [],
               "t2": ["Rayleigh scattering of short waves colours the sky.", "It is the same for everyone."],
               "t3": ["Sailors check the tide tables."]},
}
FORMAT = {"r26-idx": "rag24", "r26-ids": "neuclir", "rt-map": "ragtime", "rt-ids": "neuclir"}

RAGTIME_BANK = {  # topic → [(question, aggregator, importance, answers)]
    "t1": [("Where do bees collect nectar?", "OR", "vital", ["flowers", "blossoms"]),
           ("What do bees do with nectar in the hive?", "AND", "okay", ["fan", "dry"])],
    "t2": [("Why is the sky blue?", "AND", "vital", ["rayleigh", "short waves"]),
           ("What does sunlight meet?", "OR", "okay", ["air", "molecules"])],
    "t3": [("What causes tides?", "AND", "vital", ["moon", "gravity"]),
           ("How often are high tides?", "OR", "okay", ["two", "twice"])],
}


def doc(topic: str, i: int, track: str) -> str:
    """A document id in the track's pattern (rag26: ClimbMix shards; ragtime26: NeuCLIR uuid segments)."""
    if track == "rag26":
        return f"shard_{int(topic[1:]):05d}_{i}"
    return f"0a1b2c3d-0000-4000-8000-{int(topic[1:]):012d}_{i}"


def citations(fmt: str, topic: str, i: int, track: str) -> object:
    """Sentence i's citation of document i in the run's format."""
    if fmt == "rag24":
        return [i]
    if fmt == "ragtime":
        return {doc(topic, i, track): 0.9, doc(topic, i + 1, track): 0.4}
    return [doc(topic, i, track)]


def rag26_report(run: str, topic: str, sentences: list[str]) -> dict:
    """A TREC RAG 2026 answer (`answer`, metadata with `narrative_id`, the exact `narrative`, `run_desc`)."""
    fmt = FORMAT[run]
    return {"metadata": {"team_id": "proctor", "run_id": run, "narrative_id": topic, "narrative": TITLES[topic],
                         "run_desc": "a test run"},
            "references": [doc(topic, i, "rag26") for i in range(len(sentences))],
            "answer": [{"text": s, "citations": citations(fmt, topic, i, "rag26")} for i, s in enumerate(sentences)]}


def ragtime26_report(run: str, topic: str, sentences: list[str]) -> dict:
    """A TREC RAGTIME 2026 report (`responses`, metadata with `topic_id`, no references)."""
    fmt = FORMAT[run]
    return {"metadata": {"team_id": "proctor", "run_id": run, "topic_id": topic, "run_desc": "a test run"},
            "responses": [{"text": s, "citations": citations(fmt, topic, i, "ragtime26")}
                          for i, s in enumerate(sentences)]}


def write(root: Path, track: str) -> dict[str, Path]:
    """Topics, one report file per run and the track's bank under `root` (`track`: rag26 or ragtime26)."""
    paths = {"topics": root / "topics.jsonl", "responses": root / "runs", "bank": root / "bank.jsonl"}
    paths["responses"].mkdir(parents=True, exist_ok=True)
    paths["topics"].write_text("".join(json.dumps({"request_id": q, "title": t}) + "\n" for q, t in TITLES.items()))
    runs, make = (ANSWERS, rag26_report) if track == "rag26" else (REPORTS, ragtime26_report)
    for run, answers in runs.items():
        (paths["responses"] / f"{run}.jsonl").write_text(
            "".join(json.dumps(make(run, q, s)) + "\n" for q, s in answers.items()))
    lines = [rag26_bank(q) for q in TITLES] if track == "rag26" else [ragtime26_bank(q) for q in TITLES]
    paths["bank"].write_text("".join(json.dumps(line) + "\n" for line in lines))
    return paths


def rag26_bank(topic: str) -> dict:
    """An AutoJudge NuggetBank (v3) whose `title_query` words the topic otherwise than the topic file."""
    return {"format_version": "v3", "query_id": topic, "title_query": TITLES[topic].capitalize() + "?",
            "nugget_bank": {q: {"question": q, "query_id": topic} for q in QUESTIONS[topic]}}


def ragtime26_bank(topic: str) -> dict:
    """A RAGTIME 2026 nugget bank line (`metadata.topic_id`, a list of nuggets with answers and aggregator)."""
    return {"metadata": {"team_id": "proctor", "topic_id": topic, "run_id": "bank", "run_desc": "test bank"},
            "nugget_bank": [{"question": q, "aggregator_type": agg, "importance": imp,
                             "answers": [{"answer": a, "references": [doc(topic, 0, "ragtime26")]} for a in answers]}
                            for q, agg, imp, answers in RAGTIME_BANK[topic]]}


# --- the test judges: rules on the prompt's text, and the values they imply -------------------------------

def self_rating(prompt: str) -> str:
    """Grade 5 when the sentence holds the question's answer word, 2 when it names the topic's subject, else 0."""
    question = prompt.split("Question: ", 1)[1].split("\n", 1)[0]
    context = prompt.split("Context: ", 1)[1].lower()
    return str(grade(question, context))


def grade(question: str, sentence: str) -> int:
    """The test judge's grade of a sentence for a question (of either bank; a RAGTIME question's word is its
    first answer)."""
    words = {(t, q): w for t, qs in QUESTIONS.items() for q, w in qs.items()}
    words.update({(t, q): answers[0] for t, qs in RAGTIME_BANK.items() for q, _, _, answers in qs})
    topic, word = next((t, w) for (t, q), w in words.items() if q == question)
    return 5 if word in sentence.lower() else 2 if SUBJECT[topic] in sentence.lower() else 0


def assignment(prompt: str) -> str:
    """nuggetizer-style labels: support when the answer is in the passage, partial_support when only its first
    word is, else not_support (the nugget text is `QUESTION ANSWER`)."""
    passage = prompt.split("Passage: ", 1)[1].split("\n", 1)[0].lower()
    nuggets = ast.literal_eval(prompt.split("Nugget List: ", 1)[1].split("\n", 1)[0])
    return json.dumps([label(answer_of(n), passage) for n in nuggets])


def answer_of(nugget: str) -> str:
    """The answer an answer nugget (`QUESTION ANSWER`) names."""
    return next(a for qs in RAGTIME_BANK.values() for q, _, _, answers in qs for a in answers if nugget == f"{q} {a}")


def label(answer: str, passage: str) -> str:
    """The test judge's assignment of one answer to a passage."""
    if answer in passage:
        return "support"
    return "partial_support" if answer.split()[0] in passage and " " in answer else "not_support"
