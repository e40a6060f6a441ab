"""`openai:MODEL`: any OpenAI-compatible chat-completions server (vLLM, SGLang, TGI, Ollama, llama.cpp
server, OpenRouter, OpenAI) through the `openai` SDK's async client.

Bounded in-flight requests (`--concurrency`), a per-request timeout, capped exponential backoff with jitter
on 429/5xx/connection errors/timeouts, optional RPM/TPM limits. The API key comes only from the
environment (`OPENAI_API_KEY`, or `PROCTOR_API_KEY`) and is never stored or logged."""

from __future__ import annotations

import asyncio
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from proctor.llm.base import Reply, Request, fit_by_chars
from proctor.llm.fleet import Fleet, Server, split_urls
from proctor.llm.limits import RateLimiter, backoff_delay
from proctor.options.backend import BackendOptions


@dataclass(frozen=True, kw_only=True)
class OpenAIOptions(BackendOptions):
    """Connection and decoding options: the backend options (`proctor.options.backend`; `base_url` may name
    several servers, a fleet) and two that no flag sets."""

    backoff_base: float = 0.5
    temperature: float = 0.0


PROBABILITY_TOKENS = 1
"""With `probabilities`: the reply tokens asked for — only the first is read (its top log-probabilities)."""
TOP_LOGPROBS = 10
"""With `probabilities`: the alternatives asked for at that token, so that the six grade tokens are among them
even when the most likely token is another ("The", a space)."""


class OpenAIBackend:
    """Chat completions, one request per call, `concurrency` calls in flight."""

    kind = "openai"
    batch_size = 1
    uses_cache = True

    def __init__(self, model: str, options: OpenAIOptions) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.options = options
        api_key = os.environ.get("PROCTOR_API_KEY") or os.environ.get("OPENAI_API_KEY") or "no-key"
        urls = split_urls(options.base_url)
        self.fleet = Fleet([Server(url, AsyncOpenAI(base_url=url, api_key=api_key, max_retries=0,
                                                    timeout=options.timeout)) for url in urls])
        self.concurrency = options.concurrency * len(urls)
        """`--concurrency` requests in flight per server."""
        self.gate = asyncio.Semaphore(self.concurrency)
        self.requests = RateLimiter(options.rpm)
        self.tokens = RateLimiter(options.tpm)

    @property
    def client(self) -> Any:
        """The first server's client."""
        return self.fleet.servers[0].client

    def stats(self) -> list[dict[str, Any]]:
        """Per-server figures (requests, failures, mean seconds, times taken out)."""
        return self.fleet.figures()

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.options.temperature,
                                  "probabilities": self.options.probabilities}
        if self.options.probabilities:  # the one-token reply is part of what makes the grade (its text fallback)
            params["reply_tokens"] = PROBABILITY_TOKENS
        return params

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return fit_by_chars(before, context, after, self.options.max_context_chars)

    async def complete(self, requests: list[Request]) -> list[Reply]:
        if len(requests) == 1:  # the engine's batches: no task of its own needed
            return [await self._one(requests[0])]
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def _one(self, request: Request) -> Reply:
        last_error = "no attempt"
        body = chat_body(self.model, request, self.options)
        for attempt in range(self.options.max_retries + 1):
            await self.requests.acquire()
            await self.tokens.acquire(len(request.text()) / 4 + request.max_tokens)
            async with self.gate:
                server = self.fleet.pick()
                started = time.monotonic()
                try:
                    reply, error = await self._attempt(server, body, attempt + 1)
                except BaseException:  # cancelled (Ctrl-C): the server did nothing wrong
                    self.fleet.release(server, started, fault=False, counted=False)
                    raise
                self.fleet.release(server, started, fault=error is not None)
            if reply is not None:
                return reply
            last_error = error or last_error
            if attempt < self.options.max_retries and not self.fleet.another_healthy(server):
                await asyncio.sleep(backoff_delay(attempt, self.options.backoff_base, self.options.backoff_max))
        return Reply(error=f"gave up after {self.options.max_retries + 1} attempts: {last_error}",
                     attempts=self.options.max_retries + 1)

    async def _attempt(self, server: Server, body: dict[str, Any], attempts: int) -> tuple[Reply | None, str | None]:
        """One request to one server: (the reply, None), or (None, the error) when another attempt may help."""
        import openai

        retryable = (openai.RateLimitError, openai.APIConnectionError, openai.APITimeoutError,
                     openai.InternalServerError)
        try:
            raw = await server.client.chat.completions.with_raw_response.create(**body)
            response = raw.parse()
        except retryable as exc:
            return None, f"{type(exc).__name__}: {_short(exc)}"
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code == 429:
                return None, f"HTTP {exc.status_code}: {_short(exc)}"
            return Reply(error=f"HTTP {exc.status_code}: {_short(exc)}", attempts=attempts), None
        except openai.OpenAIError as exc:
            return None, f"{type(exc).__name__}: {_short(exc)}"
        if not hasattr(response, "choices"):  # a 200 that is no chat completion (a proxy's error page)
            return None, _not_a_completion(raw)
        return reply_of(response, self.options.probabilities, attempts=attempts), None

    async def aclose(self) -> None:
        for server in self.fleet.servers:
            await server.client.close()


def chat_body(model: str, request: Request, options: OpenAIOptions) -> dict[str, Any]:
    """The chat-completions request body for one request (also the `body` of a batch-file line)."""
    messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
        {"role": "user", "content": request.prompt}]
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": options.temperature,
                            "max_tokens": request.max_tokens}
    if options.probabilities:  # only the first token is read: ask for that one
        body.update(max_tokens=PROBABILITY_TOKENS, logprobs=True, top_logprobs=TOP_LOGPROBS)
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
