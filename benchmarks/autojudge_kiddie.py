"""Every variant Proctor's shipped workflows offer, run on the starter kit's kiddie dataset exactly as TIRA's code
submission runs it — the documented `--command` through bash with `$inputDataset` and `$outputDir` set (the
globs expanded by the shell), the installed `auto-judge` program, the workflows laid out by the root
Dockerfile's COPY lines, the LLM injected as OPENAI_BASE_URL / OPENAI_MODEL — then `auto-judge-evaluate
meta-evaluate` of each leaderboard against kiddie's truth, with run_kiddie.sh's options. Prints the figures.

The LLM is the suite's local OpenAI-compatible test server with a deterministic fake judge
(`tests/tira_shape.track_llm`: question and nugget sets named after the topic title, every grade, label and
verdict fixed by a hash of the prompt). So the figures of `llm`, `nuggets`, `umbrela` and `citations` measure
the plumbing, not a judge: their correlations are those of hash-fixed grades. `embedded` grades with the real
all-MiniLM-L6-v2; only its questions ("What is TITLE?", "Why does TITLE matter?") come from the fake.
Kiddie's truth is itself a placeholder ("kiddie_fake"): four runs of clearly falling quality.

Usage: python benchmarks/autojudge_kiddie.py [--out DIR]   (NLTK_DATA: a stub is made when NLTK has no data)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import tira_shape  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402

BIN = Path(sys.executable).parent
STATISTICS = ("kendall", "spearman", "tauap_b", "pearson", "kendall@10")


def nltk_data(folder: Path) -> str:
    """NLTK_DATA: the environment's, else a stub (an empty English stopword list and a punkt folder)."""
    if os.environ.get("NLTK_DATA"):
        return os.environ["NLTK_DATA"]
    (folder / "corpora" / "stopwords").mkdir(parents=True, exist_ok=True)
    (folder / "corpora" / "stopwords" / "english").write_text("")
    (folder / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    return str(folder)


def run_variant(workflow: str, variant: str, dataset: Path, out: Path, judges: Path, env: dict[str, str]) -> float:
    """One TIRA-shape run through bash; its wall time in seconds."""
    command = tira_shape.tira_command(workflow, variant).replace(tira_shape.JUDGES, str(judges))
    start = time.perf_counter()
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                          env={**env, "inputDataset": str(dataset), "outputDir": str(out)})
    if done.returncode != 0:
        sys.exit(f"{workflow} --variant {variant} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def meta_evaluate(board: Path, env: dict[str, str]) -> list[dict]:
    """`auto-judge-evaluate meta-evaluate` against kiddie's truth, as the kit's run_kiddie.sh runs it."""
    result = board.with_suffix(".meta.jsonl")
    done = subprocess.run([str(BIN / "auto-judge-evaluate"), "meta-evaluate", "--truth-leaderboard",
                           str(tira_shape.KIDDIE_TRUTH), "--truth-format", "ir_measures", "--truth-header",
                           "--eval-format", "ir_measures", "--on-missing", "default", "--input", str(board),
                           "--output", str(result)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"meta-evaluate {board} failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in result.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the outputs (default: a temporary one)")
    args = parser.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="kiddie-"))
    dataset = tira_shape.kiddie_dataset(root / "input")
    judges = tira_shape.image_judges(root / "image")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT / "src"),
           "HF_HUB_OFFLINE": "1", "NLTK_DATA": nltk_data(root / "nltk_data")}
    rows = []
    with FakeOpenAI(reply=tira_shape.track_llm) as server:
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_MODEL="fake-judge", OPENAI_API_KEY="none")
        for workflow, variant in tira_shape.offered_variants():
            out = root / "output" / f"{workflow.removesuffix('.yml')}-{variant}"
            before = server.requests
            seconds = run_variant(workflow, variant, dataset, out, judges, env)
            for row in meta_evaluate(out / f"{variant}.eval.txt", env):
                rows.append({"workflow": workflow, "variant": variant, "seconds": seconds,
                             "requests": server.requests - before, **row})
    print(f"kiddie (5 topics, 4 runs) in TIRA's command shape; outputs in {root}")
    print("| workflow | variant | measure | " + " | ".join(STATISTICS) + " | LLM requests | wall s |")
    print("|---" * (len(STATISTICS) + 5) + "|")
    for r in rows:
        values = " | ".join(f"{r[s]:.3f}" if isinstance(r.get(s), int | float) else "–" for s in STATISTICS)
        print(f"| {r['workflow']} | {r['variant']} | {r['EvalMeasure']} | {values} | {r['requests']} | "
              f"{r['seconds']:.1f} |")


if __name__ == "__main__":
    main()
