"""The robustness probe with a real local model on a small DL19 sample (needs ../shared/data/dl19 and an
OpenAI-compatible server, e.g. `python -m llama_cpp.server --model qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
--port 8101 --model_alias qwen2.5-coder-0.5b-instruct`). docs/robustness.md quotes its output.

Builds a store of two DL19 queries (6 judged-non-relevant and 2 relevant passages each, the first 3 questions of
each query in the v2 bank), grades it with self-rating, then probes every attack without and with both guards.
About (16 + SAMPLE x 10) x 3 prompts: keep SAMPLE small on a shared CPU.

    python benchmarks/probe_dl19.py OUT_DIR [BASE_URL] [MODEL] [SAMPLE]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from proctor.cli import main

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "dl19"
QUERIES = ("1115776", "47923")


def write_inputs(out: Path) -> dict[str, Path]:
    """Queries, corpus, qrels and a 3-question bank of the two queries."""
    texts = json.loads((DL19 / "dl19-queries.json").read_text())
    corpus, qrels = [], []
    with gzip.open(DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz", "rt") as lines:
        for line in lines:
            qid, paragraphs = json.loads(line)
            if qid not in QUERIES:
                continue
            judged = [(p, p["paragraph_data"]["judgments"][0]["relevance"]) for p in paragraphs
                      if p["paragraph_data"]["judgments"]]
            chosen = [(p, r) for p, r in judged if r == 0 and len(p["text"]) < 700][:6] + \
                [(p, r) for p, r in judged if r >= 2][:2]
            corpus += [{"id": p["paragraph_id"], "text": p["text"]} for p, _ in chosen]
            qrels += [f"{qid} 0 {p['paragraph_id']} {r}" for p, r in chosen]
    with gzip.open(DL19 / "dl19-questions-v2.jsonl.gz", "rt") as lines:
        bank = [{**b, "items": b["items"][:3]} for b in map(json.loads, lines) if b["query_id"] in QUERIES]
    files = {"queries": out / "queries.tsv", "corpus": out / "corpus.jsonl", "qrels": out / "qrels.txt",
             "bank": out / "bank.jsonl"}
    files["queries"].write_text("".join(f"{q}\t{texts[q]}\n" for q in QUERIES))
    files["corpus"].write_text("".join(json.dumps(c) + "\n" for c in corpus))
    files["qrels"].write_text("\n".join(qrels) + "\n")
    files["bank"].write_text("".join(json.dumps(b) + "\n" for b in bank))
    return files


def run(out: Path, base_url: str, model: str, sample: int) -> int:
    """Import, grade, probe; the report goes to OUT/probe.json and OUT/probe.md."""
    out.mkdir(parents=True, exist_ok=True)
    store = out / "dl19-probe.db"
    for kind, path in write_inputs(out).items():
        assert main(["import", kind, str(path), "--store", str(store)]) == 0
    backend = ["--llm", f"openai:{model}", "--base-url", base_url, "--concurrency", "1", "--timeout", "120"]
    assert main(["grade", "--store", str(store), "--method", "self-rating", *backend]) == 0
    from proctor import api

    opened = api.open_store(store)
    try:
        attacks = ["stuffing", "injection", "rubric-leak", "other-language"]
        report = api.probe(opened, opened.grades.grade_sets()[0].id, attacks, guards=["detect", "harden"],
                           sample=sample,
                           llm=f"openai:{model}", base_url=base_url, concurrency=1, timeout=120.0)
    finally:
        opened.close()
    (out / "probe.json").write_text(report.render("json"))
    (out / "probe.md").write_text(report.render("md"))
    print((out / "probe.md").read_text())
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(run(Path(args[0]), args[1] if len(args) > 1 else "http://127.0.0.1:8101/v1",
                 args[2] if len(args) > 2 else "qwen2.5-coder-0.5b-instruct", int(args[3]) if len(args) > 3 else 5))
