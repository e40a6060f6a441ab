"""Generated answers of three systems of clearly different quality for the demo queries (original text,
written for these tests), in the formats `proctor import responses` reads."""

from __future__ import annotations

import json
from pathlib import Path

GOOD = {
    "q1": "Bees make honey from nectar they collect from flowers. Worker bees carry the nectar to the hive and add "
          "enzymes. They spread it in the wax cells of the honeycomb and fan their wings to evaporate the water. "
          "When the honey is thick they seal the cells with wax.",
    "q2": "The sky is blue because of Rayleigh scattering. Air molecules scatter short wavelengths of sunlight, "
          "such as blue light, much more than long red wavelengths. At sunset the light travels a longer path "
          "through the atmosphere, the blue is scattered away, and the sky looks red and orange.",
    "q3": "Ocean tides are caused mainly by the gravity of the Moon, which raises two bulges of water. As the "
          "Earth rotates, most coasts see two high tides each day. When the Sun and Moon align, their pulls add "
          "up and cause spring tides.",
    "q4": "A refrigerator keeps food cold by pumping heat out of the cabinet. A refrigerant evaporates in coils "
          "inside and absorbs heat. The compressor squeezes the refrigerant gas, and the warm coils at the back "
          "release the heat removed from inside.",
}
MEDIOCRE = {
    "q1": "Honey is a sweet food that people have eaten for thousands of years. Bees live in hives. Honey can "
          "be used in tea and baking.",
    "q2": "The sky can be many colours during the day. Weather and clouds change how it looks. Some people "
          "enjoy watching the sky.",
    "q3": "The ocean rises and falls along the coast. Tide tables tell you when the water is high or low. "
          "Surfers and fishers watch the tide.",
    "q4": "Refrigerators are kitchen appliances that keep food fresh. You should not overfill them. Modern "
          "fridges are quiet and efficient.",
}
BAD = {
    "q1": "The stock market closed higher today after a strong quarter for technology companies.",
    "q2": "Football season starts in August and fans are excited about the new players.",
    "q3": "Our bakery sells fresh bread and cakes every morning from seven o'clock.",
    "q4": "The history of the printing press begins with Johannes Gutenberg in the fifteenth century.",
}
SYSTEMS = {"gen-good": GOOD, "gen-mediocre": MEDIOCRE, "gen-bad": BAD}


def write_jsonl(path: Path) -> Path:
    """All three systems as plain JSONL."""
    path.write_text("".join(json.dumps({"run_id": run, "query_id": qid, "text": text}) + "\n"
                            for run, answers in SYSTEMS.items() for qid, text in answers.items()))
    return path


def write_text_dir(root: Path) -> Path:
    """One folder per system, one Markdown file per query."""
    for run, answers in SYSTEMS.items():
        (root / run).mkdir(parents=True, exist_ok=True)
        for qid, text in answers.items():
            (root / run / f"{qid}.md").write_text(text)
    return root


def rag24_record(run: str, qid: str) -> dict:
    """A TREC RAG 2024 answer record citing demo passages."""
    sentences = GOOD[qid].split(". ")
    references = [f"d{qid[1]}01", f"d{qid[1]}02"]
    return {"run_id": run, "topic_id": qid, "topic": f"topic {qid}", "references": references,
            "response_length": len(GOOD[qid].split()),
            "answer": [{"text": s.rstrip(".") + ".", "citations": [i % 2] if i else [0, 1]}
                       for i, s in enumerate(sentences)]}


def rag25_record(run: str, qid: str) -> dict:
    """A TREC RAG 2025 answer record."""
    record = rag24_record(run, qid)
    return {"metadata": {"team_id": "proctor", "run_id": run, "narrative_id": qid, "narrative": f"narrative {qid}",
                         "type": "automatic"},
            "references": record["references"], "answer": record["answer"]}
