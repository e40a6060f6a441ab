"""`hf:PATH`: Hugging Face transformers from a local folder — seq2seq models (FLAN-T5, the papers' model)
and causal LMs. Batches are sorted by length, greedy decoding, CPU or CUDA; `HF_HUB_OFFLINE` is set and
nothing is ever downloaded. With `probabilities=True` a rating is read in one forward pass: the
distribution over the tokens "0".."5" at the first generated position."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request

GRADE_TOKENS = tuple(str(g) for g in range(6))


def offline_torch(kind: str, path: str, device: str | None) -> tuple[Any, str]:
    """torch and the device for a local model folder, with every download switched off (refused when the
    folder does not exist)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    if not os.path.isdir(path):
        raise UsageError(f"{kind}:{path}: no such model folder (Proctor never downloads models)")
    import torch

    return torch, device or ("cuda" if torch.cuda.is_available() else "cpu")


class HFBackend:
    """A local transformers model."""

    kind = "hf"
    concurrency = 1
    uses_cache = True

    def __init__(self, path: str, *, device: str | None = None, batch_size: int = 8, probabilities: bool = False,
                 max_input_tokens: int | None = None) -> None:
        self.torch, self.device = offline_torch("hf", path, device)
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        config = AutoConfig.from_pretrained(path, local_files_only=True)
        self.seq2seq = bool(getattr(config, "is_encoder_decoder", False))
        loader = AutoModelForSeq2SeqLM if self.seq2seq else AutoModelForCausalLM
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        if not self.seq2seq:
            self.tokenizer.padding_side = "left"
        self._load = lambda: loader.from_pretrained(path, local_files_only=True).to(self.device).eval()
        self._net: Any = None
        self.model = os.path.basename(os.path.normpath(path))
        self.batch_size = batch_size
        self.probabilities = probabilities
        window = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None) or 512
        window = min(int(window), self.tokenizer.model_max_length or window)
        # A causal model writes its reply into the same window: keep room for it.
        self.max_new = 32
        self.max_input = max_input_tokens or (window if self.seq2seq else window - self.max_new)
        self.grade_ids = [self.tokenizer.encode(t, add_special_tokens=False)[-1] for t in GRADE_TOKENS]

    @property
    def net(self) -> Any:
        """The model's weights, loaded on first use (a dry run needs only the tokenizer, to count tokens)."""
        if self._net is None:
            self._net = self._load()
        return self._net

    def params(self) -> dict[str, Any]:
        return {"decoding": "greedy", "probabilities": self.probabilities, "max_input": self.max_input}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        fixed = len(self.tokenizer.encode(before + after, add_special_tokens=True))
        budget = self.max_input - fixed - 8  # headroom for the tokens decoding adds at the seams
        ids = self.tokenizer.encode(context, add_special_tokens=False)
        if len(ids) <= budget:
            return context, False
        return self.tokenizer.decode(ids[:max(0, budget)], skip_special_tokens=True), True

    async def complete(self, requests: list[Request]) -> list[Reply]:
        return await asyncio.to_thread(self._run, requests)

    def _run(self, requests: list[Request]) -> list[Reply]:
        order = sorted(range(len(requests)), key=lambda i: len(requests[i].text()))
        replies: list[Reply | None] = [None] * len(requests)
        prompts = [requests[i].text() for i in order]
        try:
            texts, dists, counts = self._generate(prompts, min(self.max_new, max(r.max_tokens for r in requests)))
        except Exception as exc:  # a failing batch becomes recorded failures, not a crash
            return [Reply(error=f"{type(exc).__name__}: {exc}") for _ in requests]
        for slot, i in enumerate(order):
            replies[i] = Reply(text=texts[slot], probabilities=dists[slot] if dists else None, tokens=counts[slot])
        return replies  # type: ignore[return-value]

    def _generate(self, prompts: list[str], max_new: int):
        torch = self.torch
        batch = self.tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=self.max_input,
                               return_token_type_ids=False)
        enc = {key: batch[key].to(self.device) for key in ("input_ids", "attention_mask")}
        with torch.no_grad():
            out = self.net.generate(**enc, max_new_tokens=max_new, do_sample=False, num_beams=1,
                                    output_scores=self.probabilities, return_dict_in_generate=True,
                                    pad_token_id=self.tokenizer.pad_token_id)
        sequences = out.sequences if self.seq2seq else out.sequences[:, enc["input_ids"].shape[1]:]
        texts = self.tokenizer.batch_decode(sequences, skip_special_tokens=True)
        dists = None
        if self.probabilities:
            first = torch.log_softmax(out.scores[0].float(), dim=-1)[:, self.grade_ids].exp()
            first = first / first.sum(dim=-1, keepdim=True)
            dists = [{g: float(p) for g, p in enumerate(row.tolist())} for row in first]
        counts = [int(m.sum()) for m in enc["attention_mask"]]
        return [t.strip() for t in texts], dists, counts

    async def aclose(self) -> None:
        return None
