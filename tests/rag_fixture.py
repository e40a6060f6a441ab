"""A hand-made RAG fixture: 3 runs x 2 topics of TREC RAG 2024 answers with citations, a nugget bank with
vital/okay nuggets, a small corpus (one cited passage, d9, missing), and the replies a local test server
gives to nuggetizer's assignment prompt and to the citation-support prompt (original text, written for
these tests). The scores these replies give were computed by hand in the tests."""

from __future__ import annotations

import ast
import json
from pathlib import Path

QUERIES = {"t1": "how do bees make honey", "t2": "why is the sky blue"}
NUGGETS = {  # id: (topic, text, importance)
    "t1-a": ("t1", "Bees collect nectar from flowers", "vital"),
    "t1-b": ("t1", "Bees evaporate water from the nectar", "vital"),
    "t1-c": ("t1", "Honey is stored in wax combs", "okay"),
    "t2-d": ("t2", "Rayleigh scattering makes the sky blue", "vital"),
    "t2-e": ("t2", "Blue light has a short wavelength", "okay"),
}
CORPUS = {"d1": "Worker bees gather nectar and fan it until the water evaporates.",
          "d2": "Short blue wavelengths are scattered more strongly by air molecules.",
          "d3": "Honeycomb cells are made of beeswax."}
# (run, topic): [(sentence, cited documents, the server's support verdict)]
ANSWERS = {
    ("r1", "t1"): [("R1 says bees gather nectar.", ["d1"], "Full Support"), ("R1 adds they dry it.", [], None)],
    ("r1", "t2"): [("R1 says blue light scatters.", ["d2"], "Partial Support"),
                   ("R1 cites a lost page.", ["d9"], None)],
    ("r2", "t1"): [("R2 explains nectar and drying.", ["d1", "d2"], "Full Support"),
                   ("R2 mentions wax combs.", ["d3"], "No Support")],
    ("r2", "t2"): [("R2 names Rayleigh scattering.", ["d9", "d3"], "Full Support")],
    ("r3", "t1"): [("R3 talks about flowers.", [], None), ("R3 likes honey.", [], None)],
    ("r3", "t2"): [("R3 says the sky is blue.", ["d2"], "No Support"), ("R3 credits Rayleigh.", ["d1"], "Full Support"),
                   ("R3 ends here.", [], None)],
}
# (run, topic): {nugget id: nuggetizer's label}
ASSIGNMENTS = {
    ("r1", "t1"): {"t1-a": "support", "t1-b": "partial_support", "t1-c": "not_support"},
    ("r1", "t2"): {"t2-d": "not_support", "t2-e": "support"},
    ("r2", "t1"): {"t1-a": "support", "t1-b": "support", "t1-c": "support"},
    ("r2", "t2"): {"t2-d": "partial_support", "t2-e": "partial_support"},
    ("r3", "t1"): {"t1-a": "not_support", "t1-b": "not_support", "t1-c": "partial_support"},
    ("r3", "t2"): {"t2-d": "support", "t2-e": "not_support"},
}


def answer_text(key: tuple[str, str]) -> str:
    """The whole answer as nuggetizer builds it: the sentences joined by spaces."""
    return " ".join(s for s, _, _ in ANSWERS[key])


def write(folder: Path) -> dict[str, Path]:
    """Queries, corpus, bank (YAML) and answers (TREC RAG 2024 JSONL) under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"queries": folder / "queries.tsv", "corpus": folder / "corpus.jsonl", "bank": folder / "rag.yaml",
             "answers": folder / "answers.jsonl"}
    paths["queries"].write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    paths["corpus"].write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in CORPUS.items()))
    bank = {"bank": "rag", "queries": [
        {"query_id": q, "query_text": QUERIES[q],
         "nuggets": [{"id": n, "text": t, "importance": imp} for n, (tq, t, imp) in NUGGETS.items() if tq == q]}
        for q in QUERIES]}
    paths["bank"].write_text(json.dumps(bank))
    lines = []
    for (run, topic), sentences in ANSWERS.items():
        refs = sorted({d for _, cited, _ in sentences for d in cited})
        lines.append({"run_id": run, "topic_id": topic, "topic": QUERIES[topic], "references": refs,
                      "response_length": sum(len(s.split()) for s, _, _ in sentences),
                      "answer": [{"text": s, "citations": [refs.index(d) for d in cited]}
                                 for s, cited, _ in sentences]})
    paths["answers"].write_text("".join(json.dumps(line) + "\n" for line in lines))
    return paths


def reply(prompt: str) -> str:
    """The server's known replies: nuggetizer labels for assignment prompts, verdicts for support prompts."""
    if prompt.startswith("Based on the query and passage, label each of the"):
        passage = prompt.split("\nPassage: ", 1)[1].split("\nNugget List: ", 1)[0]
        nuggets = ast.literal_eval(prompt.split("\nNugget List: ", 1)[1].split("\n", 1)[0])
        key = next(k for k in ANSWERS if answer_text(k) == passage)
        by_text = {NUGGETS[n][1]: label for n, label in ASSIGNMENTS[key].items()}
        return repr([by_text[n] for n in nuggets])
    statement = prompt.split("\nStatement: ", 1)[1].split("\n", 1)[0]
    return next(verdict for sentences in ANSWERS.values() for s, _, verdict in sentences if s == statement) or ""
