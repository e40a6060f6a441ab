"""`openai:MODEL`: any OpenAI-compatible chat-completions server (vLLM, SGLang, TGI, Ollama, llama.cpp
server, OpenRouter, OpenAI) through the `openai` SDK's async client.

Bounded in-flight requests (`--concurrency`), a per-request timeout, capped exponential backoff with jitter
on 429/5xx/connection errors/timeouts, optional RPM/TPM limits. The API key comes only from the
environment (`OPENAI_API_KEY`, or `PROCTOR_API_KEY`) and is never stored or logged."""

from __future__ import annotations

import asyncio
import math
import os
from dataclasses import dataclass
from typing import Any

from proctor.llm.base import Reply, Request, fit_by_chars
from proctor.llm.limits import RateLimiter, backoff_delay


@dataclass
class OpenAIOptions:
    """Connection and decoding options."""

    base_url: str | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    rpm: float | None = None
    tpm: float | None = None
    temperature: float = 0.0
    max_context_chars: int = 12000
    probabilities: bool = False
    """Ask for the log-probabilities of the first token and read a 0-5 grade distribution from them."""


class OpenAIBackend:
    """Chat completions, one request per call, `concurrency` calls in flight."""

    kind = "openai"
    batch_size = 1
    uses_cache = True

    def __init__(self, model: str, options: OpenAIOptions) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.options = options
        self.concurrency = options.concurrency
        api_key = os.environ.get("PROCTOR_API_KEY") or os.environ.get("OPENAI_API_KEY") or "no-key"
        self.client = AsyncOpenAI(base_url=options.base_url, api_key=api_key, max_retries=0,
                                  timeout=options.timeout)
        self.gate = asyncio.Semaphore(options.concurrency)
        self.requests = RateLimiter(options.rpm)
        self.tokens = RateLimiter(options.tpm)

    def params(self) -> dict[str, Any]:
        return {"temperature": self.options.temperature, "probabilities": self.options.probabilities}

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return fit_by_chars(before, context, after, self.options.max_context_chars)

    async def complete(self, requests: list[Request]) -> list[Reply]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def _one(self, request: Request) -> Reply:
        import openai

        retryable = (openai.RateLimitError, openai.APIConnectionError, openai.APITimeoutError,
                     openai.InternalServerError)
        last_error = "no attempt"
        body = chat_body(self.model, request, self.options)
        for attempt in range(self.options.max_retries + 1):
            await self.requests.acquire()
            await self.tokens.acquire(len(request.text()) / 4 + request.max_tokens)
            try:
                async with self.gate:
                    raw = await self.client.chat.completions.with_raw_response.create(**body)
                    response = raw.parse()
            except retryable as exc:
                last_error = f"{type(exc).__name__}: {_short(exc)}"
            except openai.APIStatusError as exc:
                if exc.status_code >= 500 or exc.status_code == 429:
                    last_error = f"HTTP {exc.status_code}: {_short(exc)}"
                else:
                    return Reply(error=f"HTTP {exc.status_code}: {_short(exc)}", attempts=attempt + 1)
            except openai.OpenAIError as exc:
                last_error = f"{type(exc).__name__}: {_short(exc)}"
            else:
                if not hasattr(response, "choices"):  # a 200 that is no chat completion (a proxy's error page)
                    last_error = _not_a_completion(raw)
                    if attempt < self.options.max_retries:
                        await asyncio.sleep(backoff_delay(attempt, self.options.backoff_base, self.options.backoff_max))
                    continue
                return reply_of(response, self.options.probabilities, attempts=attempt + 1)
            if attempt < self.options.max_retries:
                await asyncio.sleep(backoff_delay(attempt, self.options.backoff_base, self.options.backoff_max))
        return Reply(error=f"gave up after {self.options.max_retries + 1} attempts: {last_error}",
                     attempts=self.options.max_retries + 1)

    async def aclose(self) -> None:
        await self.client.close()


def chat_body(model: str, request: Request, options: OpenAIOptions) -> dict[str, Any]:
    """The chat-completions request body for one request (also the `body` of a batch-file line)."""
    messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
        {"role": "user", "content": request.prompt}]
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": options.temperature,
                            "max_tokens": request.max_tokens}
    if options.probabilities:
        body.update(logprobs=True, top_logprobs=10)
    return body


def reply_of(response: Any, probabilities: bool, attempts: int = 1) -> Reply:
    """The reply a chat completion (an SDK object) carries: its text, tokens and grade distribution."""
    choice = response.choices[0] if response.choices else None
    text = choice.message.content if choice and choice.message else None
    usage = response.usage.total_tokens if response.usage else 0
    distribution = grade_distribution(choice) if probabilities and choice else None
    return Reply(text=text or "", probabilities=distribution, tokens=usage or 0, attempts=attempts)


def grade_distribution(choice: Any) -> dict[int, float] | None:
    """The distribution over the grade tokens "0".."5" among the first token's top log-probabilities
    (renormalised); None when the server sent none or no grade token is among them."""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    found: dict[int, float] = {}
    for candidate in content[0].top_logprobs or []:
        token = candidate.token.strip()
        if len(token) == 1 and token in "012345":
            found[int(token)] = found.get(int(token), 0.0) + math.exp(candidate.logprob)
    total = sum(found.values())
    return {g: p / total for g, p in sorted(found.items())} if total > 0 else None


def _not_a_completion(raw: Any) -> str:
    """What came back instead of a chat completion: status, content type and the first bytes."""
    body = raw.http_response.text[:80].replace("\n", " ")
    kind = raw.headers.get("content-type") or "without content type"
    return f"HTTP {raw.status_code} {kind}, not a chat completion: {body!r}"


def _short(exc: Exception) -> str:
    text = str(exc).replace("\n", " ")
    return text[:200]
