"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol (HTTP/1.1, keep-alive),
with configurable latency and injected faults. Used by tests and benchmarks; it stops by itself when the
context manager exits."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable


def prompt_grade(prompt: str) -> int:
    """The deterministic grade the server gives a prompt."""
    return int(hashlib.md5(prompt.encode()).hexdigest(), 16) % 6


def no_faults(prompt: str, attempt: int) -> str:
    """Every request succeeds."""
    return "ok"


class FakeOpenAI:
    """`with FakeOpenAI(latency=0.05) as server: server.base_url ...`"""

    def __init__(self, latency: float = 0.0, faults: Callable[[str, int], str] = no_faults,
                 stall_seconds: float = 30.0, reply: Callable[[str], str] | None = None,
                 models: list[str] | None = None, key: str | None = None) -> None:
        self.latency, self.faults, self.stall_seconds = latency, faults, stall_seconds
        self.models = models
        """What GET /models lists (default: the model any request names is served; the list is empty)."""
        self.key = key
        """When set, requests without `Authorization: Bearer KEY` get 401."""
        self.model_lists = 0
        self.reply = reply or (lambda prompt: str(prompt_grade(prompt)))
        self.attempts: Counter = Counter()
        self.requests = 0
        self.lock = threading.Lock()
        self.port = 0
        self._ready = threading.Event()

    def __enter__(self) -> FakeOpenAI:
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._client, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._tasks: set[asyncio.Task] = set()
        await self._stop.wait()
        server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                headers = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
                    status, payload = "401 Unauthorized", {"error": {"message": "bad key", "type": "auth"}}
                elif request_line.startswith(b"GET") and b"/models" in request_line:
                    self.model_lists += 1
                    status, payload = "200 OK", {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models or []]}
                else:
                    status, payload = await self._handle(body)
                kind = "text/html" if isinstance(payload, str) else "application/json"
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(data)}"
                             f"\r\nConnection: keep-alive\r\n\r\n".encode() + data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def _handle(self, body: bytes) -> tuple[str, dict | str]:
        request = json.loads(body)
        prompt = request["messages"][-1]["content"]
        with self.lock:
            self.requests += 1
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
        action = self.faults(prompt, attempt)
        if self.latency:
            await asyncio.sleep(self.latency)
        if action == "429":
            return "429 Too Many Requests", {"error": {"message": "slow down", "type": "rate_limit"}}
        if action == "401":
            return "401 Unauthorized", {"error": {"message": "key revoked", "type": "auth"}}
        if action == "500":
            return "500 Internal Server Error", {"error": {"message": "boom", "type": "server_error"}}
        if action == "stall":
            await asyncio.sleep(self.stall_seconds)
        if action == "html":  # a proxy's error page with status 200
            return "200 OK", "<html><body><h1>502 Bad Gateway</h1></body></html>"
        content = {"empty": "", "text": "I cannot tell from this.", "unanswerable": "unanswerable"}.get(
            action, self.reply(prompt))
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        if request.get("logprobs") and content:
            # the reply's first character is the most likely token; its neighbours get the rest
            top = [{"token": content[:1], "logprob": -0.2, "bytes": None}]
            top += [{"token": t, "logprob": -2.0, "bytes": None} for t in ("4", "x") if t != content[:1]]
            choice["logprobs"] = {"content": [{"token": content[:1], "logprob": -0.2, "bytes": None,
                                               "top_logprobs": top}]}
        return "200 OK", {
            "id": "cmpl-1", "object": "chat.completion", "created": 0, "model": request.get("model", "fake"),
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 1, "total_tokens": len(prompt) // 4 + 1},
        }
