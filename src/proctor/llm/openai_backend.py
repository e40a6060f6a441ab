"""`openai:MODEL`: any OpenAI-compatible chat-completions server (vLLM, SGLang, TGI, Ollama, llama.cpp
server, OpenRouter, OpenAI) through Proctor's own HTTP client (`proctor.llm.http_client`: httpx's connection
pool without the `openai` SDK's per-request cost; the SDK's client is made only for the Batch API).

Bounded in-flight requests (`--concurrency`), a per-request timeout, capped exponential backoff with jitter
on 429/5xx/connection errors/timeouts (or the wait a 429/5xx's `Retry-After` asks for), optional RPM/TPM
limits. The API key comes only from the environment (`OPENAI_API_KEY`, or `PROCTOR_API_KEY`) and is never
stored or logged."""

from __future__ import annotations

import asyncio
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from proctor.llm.base import Reply, Request, fit_by_chars
from proctor.llm.fleet import Fleet, Server, split_urls
from proctor.llm.http_client import MAX_RETRY_AFTER, APIError, Client, Response
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
    """Chat completions, one request per call, `concurrency` calls in flight (`proctor.llm.http_client`)."""

    kind = "openai"
    batch_size = 1
    uses_cache = True

    def __init__(self, model: str, options: OpenAIOptions) -> None:
        self.model = model
        self.options = options
        self.api_key = os.environ.get("PROCTOR_API_KEY") or os.environ.get("OPENAI_API_KEY") or "no-key"
        urls = split_urls(options.base_url)
        self.concurrency = options.concurrency * len(urls)
        """`--concurrency` requests in flight per server."""
        self.fleet = Fleet([Server(url, Client(url, self.api_key, options.timeout, options.concurrency))
                            for url in urls])
        self.gate = asyncio.Semaphore(self.concurrency)
        self.requests = RateLimiter(options.rpm)
        self.tokens = RateLimiter(options.tpm)
        self._sdk: Any = None

    @property
    def client(self) -> Any:
        """The `openai` SDK's client of the first server (the Batch API's files and batches), made when asked."""
        if self._sdk is None:
            from openai import AsyncOpenAI

            self._sdk = AsyncOpenAI(base_url=self.fleet.servers[0].url, api_key=self.api_key, max_retries=0,
                                    timeout=self.options.timeout)
        return self._sdk

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
        """Attempts until a reply, a final error or `max_retries` retries: between two attempts at the same
        server the wait the server asked for (`Retry-After`, up to two minutes), else capped exponential backoff
        with full jitter; a retry that can go to another healthy server of a fleet goes at once."""
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
            assert error is not None
            last_error = str(error)
            if attempt < self.options.max_retries and not self.fleet.another_healthy(server):
                await asyncio.sleep(self._wait(error, attempt))
        return Reply(error=f"gave up after {self.options.max_retries + 1} attempts: {last_error}",
                     attempts=self.options.max_retries + 1)

    def _wait(self, error: Failure, attempt: int) -> float:
        if error.retry_after is not None and 0 < error.retry_after <= MAX_RETRY_AFTER:
            return error.retry_after
        return backoff_delay(attempt, self.options.backoff_base, self.options.backoff_max)

    async def _attempt(self, server: Server, body: dict[str, Any], attempts: int
                       ) -> tuple[Reply | None, Failure | None]:
        """One request to one server: (the reply, None), or (None, the failure) when another attempt may help."""
        try:
            response = await server.client.post("/chat/completions", body)
        except APIError as exc:
            if not exc.retryable:
                return Reply(error=f"HTTP {exc.status}: {_short(exc)}", attempts=attempts), None
            return None, Failure(f"{exc.name}: {_short(exc)}", exc.retry_after)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            return None, Failure(_not_a_completion(response))  # a 200 that is no chat completion (an error page)
        return reply_of(data, self.options.probabilities, attempts=attempts), None

    async def aclose(self) -> None:
        for server in self.fleet.servers:
            await server.client.aclose()
        if self._sdk is not None:
            await self._sdk.close()


class Failure(str):
    """A failed attempt that another may mend: its error text, and the wait the server asked for."""

    retry_after: float | None

    def __new__(cls, text: str, retry_after: float | None = None) -> Failure:
        failure = super().__new__(cls, text)
        failure.retry_after = retry_after
        return failure


def chat_body(model: str, request: Request, options: OpenAIOptions) -> dict[str, Any]:
    """The chat-completions request body for one request (also the `body` of a batch-file line)."""
    messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
        {"role": "user", "content": request.prompt}]
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": options.temperature,
                            "max_tokens": request.max_tokens}
    if options.probabilities:  # only the first token is read: ask for that one
        body.update(max_tokens=PROBABILITY_TOKENS, logprobs=True, top_logprobs=TOP_LOGPROBS)
    return body


def reply_of(response: dict[str, Any], probabilities: bool, attempts: int = 1) -> Reply:
    """The reply a chat completion (as JSON) carries: its text, tokens and grade distribution."""
    choices = response.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else None
    message = choice.get("message") if choice else None
    text = message.get("content") if isinstance(message, dict) else None
    usage = response.get("usage")
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else 0
    distribution = grade_distribution(choice) if probabilities and choice else None
    return Reply(text=text if isinstance(text, str) else "", probabilities=distribution, tokens=tokens or 0,
                 attempts=attempts)


def grade_distribution(choice: dict[str, Any]) -> dict[int, float] | None:
    """The distribution over the grade tokens "0".."5" among the first token's top log-probabilities
    (renormalised); None when the server sent none or no grade token is among them."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    found: dict[int, float] = {}
    for candidate in content[0].get("top_logprobs") or []:
        token = str(candidate.get("token", "")).strip()
        if len(token) == 1 and token in "012345":
            found[int(token)] = found.get(int(token), 0.0) + math.exp(candidate["logprob"])
    total = sum(found.values())
    return {g: p / total for g, p in sorted(found.items())} if total > 0 else None


def _not_a_completion(response: Response) -> str:
    """What came back instead of a chat completion: status, content type and the first bytes."""
    body = response.content[:80].decode("utf-8", "replace").replace("\n", " ")
    kind = response.content_type or "without content type"
    return f"HTTP {response.status} {kind}, not a chat completion: {body!r}"


def _short(exc: Exception) -> str:
    text = str(exc).replace("\n", " ")
    return text[:200]
