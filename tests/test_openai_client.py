"""Proctor's own OpenAI-compatible HTTP client (`proctor.llm.http_client`) and the backend's retries, against
the local test server: errors named and worded exactly as the `openai` SDK words them (the SDK is the oracle),
429/5xx/timeouts retried with backoff up to `--max-retries`, a server's `Retry-After` waited for, other 4xx
final at once, proxies from the environment."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fake_openai import FakeOpenAI
from proctor.errors import UsageError
from proctor.llm.base import Request
from proctor.llm.http_client import APIError, Client, retry_after
from proctor.llm.openai_backend import OpenAIBackend, OpenAIOptions

BODY = {"model": "m", "messages": [{"role": "user", "content": "rate this"}], "temperature": 0.0, "max_tokens": 16}


async def _ours(base_url: str, timeout: float = 5.0) -> str:
    client = Client(base_url, "key", timeout, 4)
    try:
        reply = await client.post("/chat/completions", BODY)
        return reply.json()["choices"][0]["message"]["content"]
    except APIError as exc:
        return f"{exc.name}: {exc}"
    finally:
        await client.aclose()


async def _sdks(base_url: str, timeout: float = 5.0) -> str:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="key", max_retries=0, timeout=timeout)
    try:
        reply = await client.chat.completions.create(**BODY)
        return reply.choices[0].message.content or ""
    except openai.OpenAIError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        await client.close()


@pytest.mark.parametrize("fault", ["ok", "429", "500", "401", "stall", "refused"])
def test_replies_and_errors_read_as_the_sdks(fault):
    with FakeOpenAI(faults=lambda prompt, attempt: fault, stall_seconds=3) as server:
        url = "http://127.0.0.1:9/v1" if fault == "refused" else server.base_url
        ours, sdks = (asyncio.run(ask(url, timeout=0.5)) for ask in (_ours, _sdks))
    assert ours == sdks
    expected = {"ok": "", "429": "RateLimitError: Error code: 429 - slow down", "refused":
                "APIConnectionError: Connection error.", "stall": "APITimeoutError: Request timed out."}
    assert fault not in expected or (ours == expected[fault] if expected[fault] else ours.isdigit())


def _backend(server: FakeOpenAI, **options) -> OpenAIBackend:
    return OpenAIBackend("m", OpenAIOptions(**{"base_url": server.base_url, "max_retries": 2, "backoff_max": 0.01,
                                               "timeout": 5.0, **options}))


def _ask(backend: OpenAIBackend, prompt: str = "rate this"):
    async def run():
        try:
            return await backend.complete([Request("q", "p", "i", prompt, "question?", "context")])
        finally:
            await backend.aclose()

    return asyncio.run(run())[0]


def test_a_429_is_retried_after_the_wait_the_server_asks_for():
    with FakeOpenAI(faults=lambda prompt, attempt: "429" if attempt == 1 else "ok", retry_after="0.6") as server:
        started = time.monotonic()
        reply = _ask(_backend(server))
    assert reply.error is None and reply.text.isdigit() and reply.attempts == 2
    assert time.monotonic() - started >= 0.6  # not the 0.01 s backoff
    with FakeOpenAI(faults=lambda prompt, attempt: "429" if attempt == 1 else "ok") as server:
        started = time.monotonic()
        reply = _ask(_backend(server))
    assert reply.attempts == 2 and time.monotonic() - started < 0.5  # no Retry-After: the capped backoff


def test_server_errors_and_timeouts_give_up_after_max_retries_and_other_4xx_at_once():
    with FakeOpenAI(faults=lambda prompt, attempt: "500") as server:
        reply = _ask(_backend(server))
        assert server.requests == 3
    assert reply.error == "gave up after 3 attempts: InternalServerError: Error code: 500 - boom"
    with FakeOpenAI(faults=lambda prompt, attempt: "stall", stall_seconds=2) as server:
        reply = _ask(_backend(server, timeout=0.3, max_retries=1))
        assert server.requests == 2
    assert reply.error == "gave up after 2 attempts: APITimeoutError: Request timed out."
    with FakeOpenAI(faults=lambda prompt, attempt: "401") as server:
        reply = _ask(_backend(server))
        assert server.requests == 1  # a refused key is not asked again
    assert reply.error == "HTTP 401: Error code: 401 - key revoked" and reply.attempts == 1
    with FakeOpenAI(faults=lambda prompt, attempt: "html" if attempt == 1 else "ok") as server:
        reply = _ask(_backend(server))
    assert reply.error is None and reply.attempts == 2  # a 200 that is no completion is asked again


def test_retry_after_in_its_three_forms():
    assert retry_after({b"retry-after-ms": b"1500", b"retry-after": b"9"}) == 1.5
    assert retry_after({b"retry-after": b"2"}) == 2.0
    date = email.utils.formatdate(time.time() + 30, usegmt=True).encode()
    assert 25 < retry_after({b"retry-after": date}) <= 31  # type: ignore[operator]
    assert retry_after({b"retry-after": b"soon"}) is None and retry_after({}) is None


def test_requests_go_through_the_proxy_the_environment_names(monkeypatch):
    with FakeOpenAI() as proxy:  # a forward proxy gets the absolute URL; the test server answers it itself
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        reply = asyncio.run(_ours("http://judge.invalid/v1"))
        assert reply.isdigit() and proxy.requests == 1
        monkeypatch.setenv("NO_PROXY", "judge.invalid")
        assert asyncio.run(_ours("http://judge.invalid/v1")) == "APIConnectionError: Connection error."
        assert proxy.requests == 1
    monkeypatch.setenv("HTTP_PROXY", "socks5://127.0.0.1:1080")
    monkeypatch.delenv("NO_PROXY")
    with pytest.raises(UsageError, match="only http:// and https:// proxies"):
        Client("http://judge.invalid/v1", "key", 1.0, 1)


def test_connections_are_split_among_small_pools_and_requests_go_to_the_least_loaded():
    async def run(server: FakeOpenAI) -> list[int]:
        client = Client(server.base_url, "key", 5.0, 64)
        assert len(client.pools) == 8  # pools of at most 8 connections (each scans its own on every request)
        try:
            server.holding = True  # none answered until the load is read, however slowly the machine runs
            asking = [asyncio.ensure_future(client.post("/chat/completions", BODY)) for _ in range(16)]
            assert await asyncio.to_thread(server.wait_for_requests, 16, 30)  # all sent
            load = list(client.load)
            server.holding = False
            await asyncio.gather(*asking)
            assert client.load == [0] * 8
            return load
        finally:
            await client.aclose()

    with FakeOpenAI() as server:
        assert asyncio.run(run(server)) == [2] * 8
    assert len(Client("http://x.invalid/v1", "key", 1.0, 4).pools) == 1


@contextlib.contextmanager
def _redirecting(status: int, target: str):
    """A server that answers every request with `status` and `Location: TARGET + path` (another origin)."""

    class Handler(BaseHTTPRequestHandler):
        def _redirect(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(status)
            self.send_header("Location", target + self.path.removeprefix("/v1"))
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _redirect

        def log_message(self, *args) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("status", "key"), [(307, None), (308, None), (308, "key"), (302, None)])
def test_redirects_are_followed_as_the_sdk_follows_them(status, key):
    """307/308 keep the POST, 302 turns it into a GET (the test server then has no such route); the key is not
    sent to the other origin (a server that wants it refuses)."""
    with FakeOpenAI(key=key) as server, _redirecting(status, server.base_url) as url:
        ours, sdks = (asyncio.run(ask(url)) for ask in (_ours, _sdks))
    assert ours == sdks
    assert ours.isdigit() if status in (307, 308) and key is None else not ours.isdigit()
