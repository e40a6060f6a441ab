"""DL19 as a TREC AutoJudge task, judged by Proctor's `embedded` variant with the track's own runner and
meta-evaluated with `auto-judge-evaluate` (needs ../shared/data/dl19, or DL19_DATA=DIR, and the `autojudge` extra).

Each of the 37 runs answers each of the 43 topics with its top K passages (default 3) as cited sentences
(one sentence per passage, citing it); the bank is the 430 DL19 questions the FLAN-T5 grades refer to, given
with --nugget-banks; the truth is the official DL19 leaderboard (nDCG@10 with NIST judgments), its ranks as
the score `official` (37 - rank). Writes everything under OUT (default /tmp/autojudge-dl19) and prints the
wall time of `auto-judge run` and the correlations as JSON.

    python benchmarks/autojudge_dl19.py [--top-k 3] [--out /tmp/autojudge-dl19]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = Path(os.environ.get("DL19_DATA", ROOT.parent / "shared" / "data" / "dl19"))
BIN = Path(sys.executable).parent
WORKFLOW = ROOT / "src" / "proctor" / "autojudge" / "workflow.yml"


def reports(top_k: int) -> dict[str, list[dict]]:
    """Run → one AutoJudge report per topic: the run's top K pool passages, rank order, one sentence each."""
    ranked: dict[tuple[str, str], list[tuple[int, str, str]]] = defaultdict(list)
    with gzip.open(DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz", "rt") as f:
        for line in f:
            qid, paragraphs = json.loads(line)
            for p in paragraphs:
                for r in (p.get("paragraph_data") or {}).get("rankings") or []:
                    ranked[(r["method"], qid)].append((r["rank"], p["paragraph_id"], " ".join(p["text"].split())))
    out: dict[str, list[dict]] = defaultdict(list)
    for (run, qid), rows in sorted(ranked.items()):
        top = sorted(rows)[:top_k]
        out[run].append({"metadata": {"team_id": "dl19", "run_id": run, "topic_id": qid, "type": "automatic"},
                         "references": [pid for _, pid, _ in top],
                         "responses": [{"text": text, "citations": [i]} for i, (_, _, text) in enumerate(top)]})
    return out


def bank_lines() -> list[dict]:
    """The DL19 questions as AutoJudge nugget banks (v3), through Proctor's own AutoJudge writer."""
    from proctor.io.bank_files import load_bank
    from proctor.io.nugget_banks import autojudge_lines

    queries = json.loads((DL19 / "dl19-queries.json").read_text())
    return autojudge_lines(load_bank(DL19 / "dl19-questions-graded.jsonl.gz").questions, queries)


def write_task(out: Path, top_k: int) -> dict[str, Path]:
    """Topics, reports (one file per run), bank and truth leaderboard under `out`."""
    paths = {"topics": out / "topics.jsonl", "responses": out / "responses", "bank": out / "bank.jsonl",
             "truth": out / "official.eval.txt"}
    paths["responses"].mkdir(parents=True, exist_ok=True)
    queries = json.loads((DL19 / "dl19-queries.json").read_text())
    paths["topics"].write_text("".join(json.dumps({"request_id": q, "title": t}) + "\n" for q, t in queries.items()))
    for run, records in reports(top_k).items():
        (paths["responses"] / f"{run}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    paths["bank"].write_text("".join(json.dumps(line) + "\n" for line in bank_lines()))
    official = json.loads((DL19 / "dl19-official-leaderboard.json").read_text())
    paths["truth"].write_text("".join(f"{run}\tall\tofficial\t{37 - rank}\n" for run, rank in official.items()))
    return paths


def main() -> int:
    """Build the task, run the embedded variant, meta-evaluate."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("/tmp/autojudge-dl19"))
    args = p.parse_args()
    paths = write_task(args.out, args.top_k)
    judged = args.out / "judged"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run([BIN / "auto-judge", "run", "--workflow", WORKFLOW, "--variant", "embedded",
                    "--rag-responses", paths["responses"], "--rag-topics", paths["topics"],
                    "--nugget-banks", paths["bank"], "--out-dir", judged], check=True, env=env)
    seconds = time.perf_counter() - start
    result = judged / "meta.jsonl"
    subprocess.run([BIN / "auto-judge-evaluate", "meta-evaluate", "--truth-leaderboard", paths["truth"],
                    "--truth-format", "ir_measures", "--eval-format", "ir_measures", "--on-missing", "skip",
                    "--input", judged / "embedded.eval.txt", "--output", result], check=True, env=env)
    rows = [json.loads(line) for line in result.read_text().splitlines() if line.strip()]
    print(json.dumps({"top_k": args.top_k, "runs": len(list(paths["responses"].iterdir())),
                      "auto_judge_run_seconds": round(seconds, 1), "meta_evaluate": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
