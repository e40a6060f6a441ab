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
from pathlib import Path


def prompt_grade(prompt: str) -> int:
    """The deterministic grade the server gives a prompt."""
    return int(hashlib.md5(prompt.encode()).hexdigest(), 16) % 6


def gullible_judge(prompt: str) -> str:
    """A judge that obeys instructions planted in the passage: the top grade when the prompt says the passage is
    "perfectly relevant", otherwise a low grade (0 or 1) fixed by the prompt."""
    if "perfectly relevant" in prompt:
        return "5"
    return str(int(hashlib.md5(prompt.encode()).hexdigest(), 16) % 2)


def no_faults(prompt: str, attempt: int) -> str:
    """Every request succeeds."""
    return "ok"


class FakeOpenAI:
    """`with FakeOpenAI(latency=0.05) as server: server.base_url ...`"""

    def __init__(self, latency: float = 0.0, faults: Callable[[str, int], str] = no_faults,
                 stall_seconds: float = 30.0, reply: Callable[[str], str] | None = None,
                 models: list[str] | None = None, key: str | None = None, retry_after: str | None = None) -> None:
        self.latency, self.faults, self.stall_seconds = latency, faults, stall_seconds
        self.retry_after = retry_after
        """When set, 429 responses carry `Retry-After: VALUE`."""
        self.models = models
        """What GET /models lists (default: the model any request names is served; the list is empty)."""
        self.key = key
        """When set, requests without `Authorization: Bearer KEY` get 401."""
        self.model_lists = 0
        self.reply = reply or (lambda prompt: str(prompt_grade(prompt)))
        self.attempts: Counter = Counter()
        self.requests = 0
        self.decoding: list[dict] = []
        """Every chat request's body without its messages (what was asked for: max_tokens, logprobs, ...)."""
        self.lock = threading.Lock()
        self._counted = threading.Condition(self.lock)
        self.port = 0
        self._ready = threading.Event()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.hold_batches = False
        """While True, batches stay `in_progress` (a detached grade finds them unfinished)."""
        self.holding = False
        """While True, chat replies wait (after `latency`): requests stay in flight until a test lets them go,
        however slowly the machine runs."""
        self.hold_uploads = False
        """While True, file uploads wait (a `grade` is caught in its submit step); `uploading` is set by the first."""
        self.uploading = threading.Event()
        self.uploads = 0

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

    def wait_for_requests(self, count: int, timeout: float = 60.0) -> bool:
        """Block until the server has received `count` chat requests (without polling); False on timeout."""
        with self._counted:
            return self._counted.wait_for(lambda: self.requests >= count, timeout)

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
                method, path = (request_line.decode().split() + ["", ""])[:2]
                if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
                    status, payload = "401 Unauthorized", {"error": {"message": "bad key", "type": "auth"}}
                elif method == "GET" and path.rstrip("/").endswith("/models"):
                    self.model_lists += 1
                    status, payload = "200 OK", {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models or []]}
                elif path.startswith(("/v1/files", "/v1/batches")):
                    status, payload = await self._batch_api(method, path, headers, body)
                else:
                    status, payload = await self._handle(body)
                if isinstance(payload, bytes):
                    kind, data = "application/octet-stream", payload
                else:
                    kind = "text/html" if isinstance(payload, str) else "application/json"
                    data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                wait = f"\r\nRetry-After: {self.retry_after}" if self.retry_after and status[:3] == "429" else ""
                writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(data)}{wait}"
                             f"\r\nConnection: keep-alive\r\n\r\n".encode() + data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def _batch_api(self, method: str, path: str, headers: dict, body: bytes) -> tuple[str, dict | bytes]:
        """The OpenAI files and batches endpoints: upload, create, retrieve, download; a batch is run through
        the chat handler line by line and completes unless `hold_batches` is set."""
        parts = path.strip("/").split("/")
        if method == "POST" and parts == ["v1", "files"]:
            self.uploads += 1
            self.uploading.set()
            while self.hold_uploads:
                await asyncio.sleep(0.02)
            content = _multipart_file(headers.get("content-type", ""), body)
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = content
            return "200 OK", {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                              "filename": "input.jsonl", "purpose": "batch", "status": "processed"}
        if method == "GET" and len(parts) == 4 and parts[1] == "files" and parts[3] == "content":
            if parts[2] not in self.files:
                return "404 Not Found", {"error": {"message": "no such file"}}
            return "200 OK", self.files[parts[2]]
        if method == "POST" and parts == ["v1", "batches"]:
            request = json.loads(body)
            batch_id = f"batch-{len(self.batches) + 1}"
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": request["endpoint"],
                                      "input_file_id": request["input_file_id"], "completion_window": "24h",
                                      "status": "in_progress", "created_at": 0, "output_file_id": None,
                                      "error_file_id": None, "request_counts": {"total": 0, "completed": 0,
                                                                                "failed": 0}}
            return "200 OK", self.batches[batch_id]
        if method == "GET" and len(parts) == 3 and parts[1] == "batches" and parts[2] in self.batches:
            batch = self.batches[parts[2]]
            if batch["status"] == "in_progress" and not self.hold_batches:
                await self._run_batch(batch)
            return "200 OK", batch
        return "404 Not Found", {"error": {"message": f"no route {method} {path}"}}

    async def _run_batch(self, batch: dict) -> None:
        out, errors = [], []
        for n, text in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            line = json.loads(text)
            status, payload = await self._handle(json.dumps(line["body"]).encode())
            code = int(status.split()[0])
            result = {"id": f"r{n}", "custom_id": line["custom_id"], "error": None,
                      "response": {"status_code": code, "request_id": f"q{n}", "body": payload}}
            (out if code == 200 else errors).append(json.dumps(result) + "\n")
        for key, lines in (("output_file_id", out), ("error_file_id", errors)):
            if lines:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(lines).encode()
                batch[key] = file_id
        batch["status"] = "completed"
        batch["request_counts"] = {"total": len(out) + len(errors), "completed": len(out), "failed": len(errors)}

    async def _handle(self, body: bytes) -> tuple[str, dict | str]:
        request = json.loads(body)
        prompt = request["messages"][-1]["content"]
        with self.lock:
            self.requests += 1
            self._counted.notify_all()
            self.decoding.append({k: v for k, v in request.items() if k != "messages"})
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
        action = self.faults(prompt, attempt)
        if self.latency:
            await asyncio.sleep(self.latency)
        while self.holding:
            await asyncio.sleep(0.005)
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


def run_batch_file(base_url: str, source: Path, target: Path, style: str = "openai") -> int:
    """A batch worker (as `vllm run_batch` or the OpenAI Batch API): every request line of `source` sent to
    the server, every result written to `target` in OpenAI's format (`style="openai"`), vLLM 0.4/0.5's
    (`"vllm-0.4"`: the completion itself as the response) or as an error line (`"error"`); returns lines."""
    import httpx2 as httpx

    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    with httpx.Client(base_url=base_url.removesuffix("/v1"), timeout=60) as client:
        for n, line in enumerate(lines):
            if style == "error":
                out.append({"id": f"r{n}", "custom_id": line["custom_id"], "response": None,
                            "error": {"code": "server_error", "message": "worker lost"}})
                continue
            reply = client.post(line["url"], json=line["body"])
            body = reply.json()
            if style == "vllm-0.4":
                response = body
            else:
                response = {"status_code": reply.status_code, "request_id": f"req-{n}", "body": body}
            out.append({"id": f"r{n}", "custom_id": line["custom_id"], "response": response, "error": None})
    target.write_text("".join(json.dumps(o) + "\n" for o in out), encoding="utf-8")
    return len(out)


def _multipart_file(content_type: str, body: bytes) -> bytes:
    """The content of the part named `file` of a multipart/form-data body."""
    boundary = content_type.partition("boundary=")[2].strip('"').encode()
    for part in body.split(b"--" + boundary):
        head, _, content = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return content.removesuffix(b"\r\n")
    raise ValueError("no file part")
