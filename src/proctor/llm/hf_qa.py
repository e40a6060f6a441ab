"""`hf-qa:PATH`: extractive question answering (000 §4.2.1: a model fine-tuned on SQuAD 2.0 extracts the
answer from the passage) with any transformers question-answering model in a local folder (never
downloaded). The reply is the best answer span of the passage, or "unanswerable" when the model's no-answer
score (start and end at the first token, as SQuAD 2.0 models are trained) beats every span; the `qa` method
then verifies the span against the answer key like any other answer. The prompt is not used: the model reads
the question and the passage, long passages in overlapping windows."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request
from proctor.llm.hf import CPU_BATCH, LoadedOnFirstUse, offline_torch

NO_ANSWER = "unanswerable"


class ExtractiveQABackend(LoadedOnFirstUse):
    """A local extractive QA model (e.g. a SQuAD 2.0 fine-tuned BERT/RoBERTa/DeBERTa)."""

    kind = "hf-qa"
    concurrency = 1
    uses_cache = True

    def __init__(self, path: str, *, device: str | None = None, batch_size: int = CPU_BATCH,
                 max_answer_tokens: int = 30,
                 stride: int = 128) -> None:
        self.torch, self.device = offline_torch("hf-qa", path, device)
        from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if not getattr(self.tokenizer, "is_fast", False):
            raise UsageError(f"hf-qa:{path}: needs a fast tokenizer (tokenizer.json) to map answers to the text")
        self._load = lambda: AutoModelForQuestionAnswering.from_pretrained(path, local_files_only=True).to(
            self.device).eval()
        self.model = os.path.basename(os.path.normpath(path))
        self.batch_size = batch_size
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        window = getattr(config, "max_position_embeddings", None) or 512
        self.max_input = min(384, int(window), self.tokenizer.model_max_length or window)
        self.stride = min(stride, self.max_input // 2)
        self.max_answer_tokens = max_answer_tokens

    def params(self) -> dict[str, Any]:
        """What changes the extracted spans."""
        return {"decoding": "extractive-span", "max_input": self.max_input, "stride": self.stride,
                "max_answer_tokens": self.max_answer_tokens, "no_answer": "null score (SQuAD 2.0)"}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        """Never cut: long passages are read in overlapping windows."""
        return context, False

    async def complete(self, requests: list[Request]) -> list[Reply]:
        """One span (or "unanswerable") per request."""
        return await asyncio.to_thread(self._run, requests)

    def _run(self, requests: list[Request]) -> list[Reply]:
        replies = []
        for request in requests:
            try:
                replies.append(Reply(text=self.answer(request.question, request.context)))
            except Exception as exc:  # one failing pair is a recorded failure, not a crash
                replies.append(Reply(error=f"{type(exc).__name__}: {exc}"))
        return replies

    def answer(self, question: str, context: str) -> str:
        """The best span of `context` answering `question`, or NO_ANSWER."""
        enc = self.tokenizer(question, context, truncation="only_second", max_length=self.max_input,
                             stride=self.stride, return_overflowing_tokens=True, return_offsets_mapping=True,
                             padding=True, return_tensors="pt")
        inputs = {k: enc[k].to(self.device) for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        with self.torch.no_grad():
            out = self.net(**inputs)
        best, null = None, None
        for w in range(enc["input_ids"].shape[0]):
            start, end = out.start_logits[w].tolist(), out.end_logits[w].tolist()
            null = max(null if null is not None else start[0] + end[0], start[0] + end[0])
            found = self._best_span(start, end, enc.sequence_ids(w), enc["offset_mapping"][w].tolist())
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        if best is None or (null is not None and null > best[0]):
            return NO_ANSWER
        return context[best[1]:best[2]].strip() or NO_ANSWER

    def _best_span(self, start: list[float], end: list[float], sequence: list[int | None],
                   offsets: list[list[int]]) -> tuple[float, int, int] | None:
        """(score, char start, char end) of the best span inside the passage part of one window."""
        best = None
        for i, part in enumerate(sequence):
            if part != 1:
                continue
            for j in range(i, min(i + self.max_answer_tokens, len(sequence))):
                if sequence[j] != 1:
                    break
                score = start[i] + end[j]
                if best is None or score > best[0]:
                    best = (score, offsets[i][0], offsets[j][1])
        return best

    async def aclose(self) -> None:
        """Nothing to release."""
        return None
