"""`hf:PATH`: Hugging Face transformers from a local folder — seq2seq models (FLAN-T5, the papers' model)
and causal LMs. Greedy decoding, CPU or CUDA; `HF_HUB_OFFLINE` is set and nothing is ever downloaded.

Speed without changing replies: the engine hands the pairs out shortest prompt first over the whole plan
(`sorts_by_length`, `grading.plan.Plan.by_length`) and each batch is sorted again, so a batch pads little;
`--dtype` (`auto`: bfloat16 on a CUDA device that supports it, float32 elsewhere) enters the grade set's
parameters when it is not float32, so float32 grade sets keep the ids they always had. On CUDA a forward pass
takes as many prompts as fit in `CUDA_TOKENS` padded tokens (512 prompts of a 512-token window, more of shorter
ones, at most `CUDA_MOST`) unless `--batch-size` says otherwise; out of memory, the backend halves its pass and
tries again, and keeps the smaller pass (a prompt that does not fit alone is a recorded failure, the run goes
on). With `probabilities=True` a rating request (`Request.rating`) is read in one forward pass: the distribution
over the tokens "0".."5" at the first generated position, and the reply text is that position's most likely
token (as the openai backend's one-token reply); other requests are generated."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request
from proctor.options.backend import check_dtype

GRADE_TOKENS = tuple(str(g) for g in range(6))
CPU_BATCH = 8
"""Prompts per forward pass by default on the CPU (the earlier default)."""
CUDA_TOKENS = 512 * 512
"""Padded tokens per forward pass by default on CUDA (halved on out-of-memory): on one H100, FLAN-T5-large's
shape graded fastest at the largest passes tried (bare loops, bfloat16: 67 prompts/s at 64 a pass, 212 at 256,
288-316 at 512, 382 at 1,024; Proctor with this budget 346; `benchmarks/bench_gpu.py`)."""
CUDA_MOST = 2048
"""Prompts per forward pass at most by default on CUDA (short prompts), and per call from the engine."""
LENGTHS_KEPT = 20_000
"""Token counts `fit` remembers before it starts afresh (memory stays bounded over a large pool)."""
_FIRST_STEP_PROCESSORS = ("repetition_penalty", "encoder_repetition_penalty", "no_repeat_ngram_size",
                          "encoder_no_repeat_ngram_size", "bad_words_ids", "forced_bos_token_id", "suppress_tokens",
                          "begin_suppress_tokens", "sequence_bias", "guidance_scale")
"""Generation settings that would change the first step's grade-token scores inside `generate`: a model whose
generation config sets one of them is read through `generate`."""


def offline_torch(kind: str, path: str, device: str | None) -> tuple[Any, str]:
    """torch and the device for a local model folder, with every download switched off (refused when the
    folder does not exist)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    if not os.path.isdir(path):
        raise UsageError(f"{kind}:{path}: no such model folder (Proctor never downloads models)")
    import torch

    return torch, device or ("cuda" if torch.cuda.is_available() else "cpu")


def resolve_dtype(torch: Any, name: str | None, device: str) -> str:
    """The dtype a `--dtype` value means on `device` (`auto`: bfloat16 on CUDA that supports it, else float32)."""
    if check_dtype(name or "auto") != "auto":
        return name  # type: ignore[return-value]
    return "bfloat16" if device.startswith("cuda") and torch.cuda.is_bf16_supported() else "float32"


class LoadedOnFirstUse:
    """A local model's weights (`net`), loaded on first use, or ahead of the grading clock by `load`."""

    _load: Callable[[], Any]
    _net: Any = None

    @property
    def net(self) -> Any:
        """The model's weights, loaded on first use (building the backend loads only the tokenizer: a dry run,
        a grade set's id)."""
        if self._net is None:
            self._net = self._load()
        return self._net

    def load(self) -> float:
        """Load the weights now; the seconds it took (0 when they were loaded already). The engine calls it
        before its clock starts, so the grading rate is the model's, and the load is reported on its own."""
        start = time.perf_counter()
        if self._net is None:
            self.net  # noqa: B018 (loads it)
            self.warm_up()
        return time.perf_counter() - start

    def warm_up(self) -> None:
        """Nothing by default (a backend on a GPU sets up its kernels here, inside the load's seconds)."""


class HFBackend(LoadedOnFirstUse):
    """A local transformers model."""

    kind = "hf"
    concurrency = 1
    uses_cache = True
    sorts_by_length = True

    def __init__(self, path: str, *, device: str | None = None, batch_size: int | None = None,
                 probabilities: bool = False, max_input_tokens: int | None = None, dtype: str | None = None) -> None:
        self.torch, self.device = offline_torch("hf", path, device)
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        self.dtype = resolve_dtype(self.torch, dtype, self.device)
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        self.seq2seq = bool(getattr(config, "is_encoder_decoder", False))
        loader = AutoModelForSeq2SeqLM if self.seq2seq else AutoModelForCausalLM
        self.path = path
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        if not self.seq2seq:
            self.tokenizer.padding_side = "left"
        weights = getattr(self.torch, self.dtype)
        self._load = lambda: loader.from_pretrained(path, local_files_only=True, dtype=weights).to(self.device).eval()
        self.model = os.path.basename(os.path.normpath(path))
        cuda = self.device.startswith("cuda")
        self.batch_size = batch_size or (CUDA_MOST if cuda else CPU_BATCH)
        self.fits = self.batch_size
        """The most prompts a forward pass takes (halved on each out-of-memory error)."""
        self.budget: int | None = CUDA_TOKENS if cuda and not batch_size else None
        """The most padded tokens a forward pass takes (None: `fits` alone bounds it; halved with it)."""
        self.probabilities = probabilities
        window = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None) or 512
        window = min(int(window), self.tokenizer.model_max_length or window)
        # A causal model writes its reply into the same window: keep room for it.
        self.max_new = 32
        self.max_input = max_input_tokens or (window if self.seq2seq else window - self.max_new)
        self.grade_ids = [self.tokenizer.encode(t, add_special_tokens=False)[-1] for t in GRADE_TOKENS]
        self._lengths: dict[tuple[str, bool], int] = {}
        self._fitting: Any = None

    def warm_up(self) -> None:
        """On CUDA, one short pass (CUDA's kernels, handles and memory pool set up before the grading clock)."""
        if self.device.startswith("cuda"):
            ids = self.tokenizer(["warm-up"], return_token_type_ids=False, return_attention_mask=False)["input_ids"]
            try:
                self._answer([Request("", "", "", "warm-up", "", "", 2)], ids)
            except Exception:  # the first real pass meets the same error and records it (out of memory: halves)
                self._free_memory()

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"decoding": "greedy", "probabilities": self.probabilities,
                                  "max_input": self.max_input}
        if self.dtype != "float32":  # float32 is what every earlier release used: those ids stay
            params["dtype"] = self.dtype
        return params

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        fixed = self._length(before + after, True)
        budget = self.max_input - fixed - 8  # headroom for the tokens decoding adds at the seams
        if self._length(context, False) <= budget:
            return context, False
        ids = self.fitting.encode(context, add_special_tokens=False)
        return self.fitting.decode(ids[:max(0, budget)], skip_special_tokens=True), True

    @property
    def fitting(self) -> Any:
        """A copy of the tokenizer for `fit`, which the engine calls while a pass runs on another thread: one
        tokenizer shared by both threads makes each wait on the other (each call sets its truncation)."""
        if self._fitting is None:
            from transformers import AutoTokenizer

            self._fitting = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        return self._fitting

    def _length(self, text: str, special: bool) -> int:
        """Tokens in `text`, remembered (a passage comes once per question, an instruction once per passage)."""
        key = (text, special)
        if key not in self._lengths:
            if len(self._lengths) >= LENGTHS_KEPT:
                self._lengths.clear()
            self._lengths[key] = len(self.fitting.encode(text, add_special_tokens=special))
        return self._lengths[key]

    async def complete(self, requests: list[Request]) -> list[Reply]:
        return await asyncio.to_thread(self._run, requests)

    def _run(self, requests: list[Request]) -> list[Reply]:
        """Replies in request order; the prompts tokenised once, sorted by length and sent in forward passes of at
        most `fits` prompts and `budget` padded tokens, both halved on out-of-memory (a prompt that does not fit
        alone fails; the run goes on)."""
        if not requests:  # the tokenizer refuses an empty batch
            return []
        ids = self.tokenizer([r.text() for r in requests], truncation=True, max_length=self.max_input,
                             return_token_type_ids=False, return_attention_mask=False)["input_ids"]
        order = sorted(range(len(requests)), key=lambda i: len(ids[i]))
        replies: list[Reply | None] = [None] * len(requests)
        start = 0
        while start < len(order):
            part = self._pass(order, start, ids)
            out_of_memory = False
            try:
                answered = self._answer([requests[i] for i in part], [ids[i] for i in part])
            except self.torch.cuda.OutOfMemoryError as exc:  # freed below, once the traceback is let go
                out_of_memory, answered = True, [Reply(error=f"{type(exc).__name__}: {exc}") for _ in part]
            except Exception as exc:  # a failing pass becomes recorded failures, not a crash
                answered = [Reply(error=f"{type(exc).__name__}: {exc}") for _ in part]
            if out_of_memory:
                self._free_memory()
                if len(part) > 1:
                    self._halve(part, ids)
                    continue
            for i, reply in zip(part, answered, strict=True):
                replies[i] = reply
            start += len(part)
        return replies  # type: ignore[return-value]

    def _pass(self, order: list[int], start: int, ids: list[list[int]]) -> list[int]:
        """The next forward pass from `start`: at most `fits` prompts whose padded tokens (the count times the
        longest, the last one: `order` is sorted by length) stay within `budget`; at least one."""
        end = min(len(order), start + self.fits)
        if self.budget is not None:
            stop = start + 1
            while stop < end and (stop + 1 - start) * len(ids[order[stop]]) <= self.budget:
                stop += 1
            end = stop
        return order[start:end]

    def _halve(self, part: list[int], ids: list[list[int]]) -> None:
        """Halve the pass that ran out of memory (and the token budget), and say so."""
        self.fits = max(1, len(part) // 2)
        if self.budget is None:
            print(f"proctor: hf:{self.model}: out of memory with {len(part)} prompts a pass; {self.fits} from now "
                  "on", file=sys.stderr, flush=True)
            return
        tokens = len(part) * max(len(ids[i]) for i in part)
        self.budget = max(1, tokens // 2)
        print(f"proctor: hf:{self.model}: out of memory with {len(part)} prompts ({tokens} padded tokens) a pass; "
              f"at most {self.fits} prompts and {self.budget} tokens from now on", file=sys.stderr, flush=True)

    def _free_memory(self) -> None:
        if self.device.startswith("cuda"):
            self.torch.cuda.empty_cache()

    def _answer(self, requests: list[Request], ids: list[list[int]]) -> list[Reply]:
        """One forward pass (or one `generate`) over a batch of prompts (`ids`: their tokens, cut to the window)."""
        batch = self.tokenizer.pad({"input_ids": ids}, return_tensors="pt", return_attention_mask=True)
        enc = {key: batch[key].to(self.device) for key in ("input_ids", "attention_mask")}
        counts = [len(row) for row in ids]
        with self.torch.inference_mode():
            if self.probabilities and all(r.rating for r in requests) and self.one_pass:
                first = self._first_scores(enc)
                texts = self.tokenizer.batch_decode(first.argmax(dim=-1)[:, None], skip_special_tokens=True)
            else:
                texts, first = self._generate(enc, min(self.max_new, max(r.max_tokens for r in requests)))
        dists = self._distributions(first) if first is not None else [None] * len(requests)
        return [Reply(text=text.strip(), probabilities=dist, tokens=int(count))
                for text, dist, count in zip(texts, dists, counts, strict=True)]

    @property
    def one_pass(self) -> bool:
        """Whether the first step's scores are the model's own logits (no generation setting changes them)."""
        config = self.net.generation_config
        return not any(getattr(config, name, None) not in (None, 1.0, 0, [], {}) for name in _FIRST_STEP_PROCESSORS)

    def _first_scores(self, enc: dict[str, Any]) -> Any:
        """The logits of the first generated token, from one forward pass."""
        net = self.net
        if self.seq2seq:
            begin = net.generation_config.decoder_start_token_id
            if begin is None:
                begin = net.config.decoder_start_token_id
            start = self.torch.full((enc["input_ids"].shape[0], 1), begin, dtype=enc["input_ids"].dtype,
                                    device=self.device)
            return net(**enc, decoder_input_ids=start).logits[:, -1, :]
        positions = enc["attention_mask"].long().cumsum(-1) - 1  # as `generate` numbers left-padded prompts
        positions.masked_fill_(enc["attention_mask"] == 0, 1)
        return net(**enc, position_ids=positions).logits[:, -1, :]

    def _generate(self, enc: dict[str, Any], max_new: int) -> tuple[list[str], Any]:
        """Greedy replies, and the first step's scores when grade probabilities are asked for."""
        out = self.net.generate(**enc, max_new_tokens=max_new, do_sample=False, num_beams=1,
                                output_scores=self.probabilities, return_dict_in_generate=True,
                                pad_token_id=self.tokenizer.pad_token_id)
        sequences = out.sequences if self.seq2seq else out.sequences[:, enc["input_ids"].shape[1]:]
        return self.tokenizer.batch_decode(sequences, skip_special_tokens=True), (
            out.scores[0] if self.probabilities else None)

    def _distributions(self, scores: Any) -> list[dict[int, float]]:
        """The distribution over the grade tokens of each row of first-step scores (renormalised)."""
        first = self.torch.log_softmax(scores.float(), dim=-1)[:, self.grade_ids].exp()
        first = first / first.sum(dim=-1, keepdim=True)
        return [{g: float(p) for g, p in enumerate(row)} for row in first.tolist()]

    async def aclose(self) -> None:
        return None
