"""An OpenAI-compatible HTTP client on `httpcore2`, the connection pool under `httpx2` (which the `openai` SDK
uses): JSON in, JSON out, small pools per server, without the SDK's per-request cost (request options, pydantic
models, raw-response wrappers: 3 to 4 times the CPU per request). The SDK stays where its features are needed
(the Batch API).

What the OpenAI backend relied on from the SDK is kept: the same base URL default (`OPENAI_BASE_URL`, else
api.openai.com), the same per-request timeout (connect, read, write and pool, each), proxies and CA files from
the environment (`HTTP(S)_PROXY`/`ALL_PROXY`/`NO_PROXY`, `SSL_CERT_FILE`/`SSL_CERT_DIR`), its redirects
(followed; the key never sent to another origin), and its errors' names and messages (`RateLimitError: Error
code: 429 - slow down`, `APIConnectionError: Connection error.`, `APITimeoutError: Request timed out.`), so
that stored failures, their grouping and the fail-fast rules read as before. Retries are the backend's
(`proctor.llm.openai_backend`)."""

from __future__ import annotations

import email.utils
import json
import os
import time
import urllib.request
import zlib
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore2 as httpcore

from proctor import __version__
from proctor.errors import UsageError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER = 120.0
"""Seconds: a server's `Retry-After` up to this long is waited for (the SDK's limit)."""
MAX_REDIRECTS = 20
REDIRECTS = (301, 302, 303, 307, 308)
SHARD_CONNECTIONS = 8
"""Connections per pool: a pool scans all its connections on every request and every reply, so `--concurrency`
connections are split among pools of at most this many (the least loaded pool takes the next request; at 64
connections this halves the client's CPU per request)."""
STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                404: "NotFoundError", 409: "ConflictError", 422: "UnprocessableEntityError", 429: "RateLimitError"}
"""The SDK's error class for each status (5xx: `InternalServerError`, others: `APIStatusError`)."""


class APIError(Exception):
    """A request that got no usable answer: `name` as the SDK names the error, `status` (None when no response
    came), and `retry_after`, the seconds the server asked to wait (None when it did not say)."""

    def __init__(self, name: str, message: str, status: int | None = None, retry_after: float | None = None,
                 content: str = "") -> None:
        super().__init__(message)
        self.name, self.status, self.retry_after, self.content = name, status, retry_after, content

    @property
    def retryable(self) -> bool:
        """No response, a timeout, 429 or 5xx: another attempt may help."""
        return self.status is None or self.status == 429 or self.status >= 500


class Response:
    """A response with a 2xx status: its status, content type and body."""

    def __init__(self, status: int, content_type: str, content: bytes) -> None:
        self.status, self.content_type, self.content = status, content_type, content

    def json(self) -> Any:
        """The body as JSON (ValueError when it is not)."""
        return json.loads(self.content)


def _tls() -> Any:
    """The TLS context (CA files from `SSL_CERT_FILE` / `SSL_CERT_DIR` as with the SDK); a bad one is a usage error."""
    import ssl

    try:
        return httpcore.default_ssl_context()
    except (OSError, ssl.SSLError) as e:
        raise UsageError(f"the TLS certificates (SSL_CERT_FILE={os.environ.get('SSL_CERT_FILE', '')!r}, "
                         f"SSL_CERT_DIR={os.environ.get('SSL_CERT_DIR', '')!r}) cannot be read: {e}") from None


class Client:
    """One server: `await client.post("/chat/completions", body)`, `await client.models()`; `connections` at
    most (in pools of `SHARD_CONNECTIONS`)."""

    def __init__(self, base_url: str | None, api_key: str, timeout: float, connections: int) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        self.headers = [(b"Authorization", f"Bearer {api_key}".encode()), (b"Accept", b"application/json"),
                        (b"User-Agent", f"proctor/{__version__}".encode())]
        shards = -(-connections // SHARD_CONNECTIONS)
        # one TLS context for every connection (each would load the CA file again); none for plain http
        tls = _tls() if self.base_url.lower().startswith("https://") else None
        self.pools = [_pool(self.base_url, -(-connections // shards), tls) for _ in range(shards)]
        self.load = [0] * shards
        """Requests in flight per pool: the next goes to the least loaded."""

    async def post(self, path: str, body: dict[str, Any]) -> Response:
        """POST a JSON body; the 2xx response, or APIError."""
        data = json.dumps(body, ensure_ascii=False).encode()
        headers = [*self.headers, (b"Content-Type", b"application/json"), (b"Content-Length", b"%d" % len(data))]
        return await self._send(b"POST", path, headers, data)

    async def get(self, path: str) -> Response:
        """GET; the 2xx response, or APIError."""
        return await self._send(b"GET", path, self.headers, b"")

    async def models(self) -> list[str]:
        """The ids of the models the server lists (APIError when it cannot be asked)."""
        page = (await self.get("/models")).json()
        return [m["id"] for m in page.get("data") or [] if isinstance(m, dict) and "id" in m] \
            if isinstance(page, dict) else []

    async def _send(self, method: bytes, path: str, headers: list, data: bytes) -> Response:
        """The response, redirects followed as the SDK follows them (307/308 keep the method and body, 301/302/303
        become a GET; the key is not sent to another origin)."""
        url = self.base_url + path
        for _ in range(MAX_REDIRECTS + 1):
            status, head, content = await self._request(method, url, headers, data)
            location = head.get(b"location")
            if status not in REDIRECTS or not location:
                break
            target = urljoin(url, location.decode("latin-1"))
            if urlsplit(target)[:2] != urlsplit(url)[:2]:
                headers = [h for h in headers if h[0] != b"Authorization"]
            if status in (301, 302, 303) and method != b"GET":
                method, data = b"GET", b""
                headers = [h for h in headers if h[0] not in (b"Content-Type", b"Content-Length")]
            url = target
        else:
            raise APIError("APIConnectionError", f"Connection error. (more than {MAX_REDIRECTS} redirects)")
        if status >= 300:
            raise status_error(status, content, head)
        return Response(status, head.get(b"content-type", b"").decode("latin-1"), content)

    async def _request(self, method: bytes, url: str, headers: list, data: bytes
                       ) -> tuple[int, dict[bytes, bytes], bytes]:
        """One request through the least loaded pool: (status, headers by lower-case name, decoded body)."""
        shard = min(range(len(self.pools)), key=self.load.__getitem__)
        self.load[shard] += 1
        try:
            response = await self.pools[shard].request(method, url, headers=headers, content=data,
                                                       extensions={"timeout": self.timeout})
        except httpcore.TimeoutException as exc:
            raise APIError("APITimeoutError", "Request timed out.") from exc
        except Exception as exc:  # refused, reset, a protocol error: the SDK's APIConnectionError
            raise APIError("APIConnectionError", "Connection error.") from exc
        finally:
            self.load[shard] -= 1
        head = {k.lower(): v for k, v in response.headers}
        try:  # none is asked for; a server that compresses anyway is read too
            content = _decoded(response.content, head.get(b"content-encoding", b""))
        except zlib.error as exc:
            raise APIError("APIConnectionError", f"Connection error. (undecodable body: {exc})") from exc
        return response.status, head, content

    async def aclose(self) -> None:
        """Close every connection."""
        for pool in self.pools:
            await pool.aclose()


def status_error(status: int, content: bytes, headers: dict[bytes, bytes]) -> APIError:
    """The error of a non-2xx response, named and worded as the SDK's: `Error code: N - message`."""
    name = STATUS_NAMES.get(status, "InternalServerError" if status >= 500 else "APIStatusError")
    message = f"Error code: {status}"
    text = content.decode("utf-8", "replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    error = body.get("error", body) if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else None
    if isinstance(detail, str) and detail:
        message += f" - {detail}"
    return APIError(name, message, status, retry_after(headers), text)


def retry_after(headers: dict[bytes, bytes]) -> float | None:
    """The seconds a response asks to wait (`retry-after-ms`, `retry-after` in seconds or as a date)."""
    for name, divisor in ((b"retry-after-ms", 1000), (b"retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue
    date = headers.get(b"retry-after")
    parsed = email.utils.parsedate_tz(date.decode("latin-1")) if date else None
    return None if parsed is None else email.utils.mktime_tz(parsed) - time.time()


def _decoded(content: bytes, encoding: bytes) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in (b"gzip", b"deflate"):
        return zlib.decompress(content, 16 + zlib.MAX_WBITS if encoding == b"gzip" else zlib.MAX_WBITS)
    return content


def _pool(base_url: str, connections: int, ssl_context: Any) -> Any:
    """A connection pool for the server, through the proxy the environment names for it (if any)."""
    if not base_url.lower().startswith(("http://", "https://")):
        raise UsageError(f"{{base_url}} {base_url!r}: not an http:// or https:// URL", params=("base_url",))
    scheme, host = urlsplit(base_url).scheme.lower(), urlsplit(base_url).hostname or ""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass_environment(host, proxies):
        if not proxy.lower().startswith(("http://", "https://")):
            raise UsageError(f"proxy {proxy!r} (from the environment) for {base_url}: only http:// and https:// "
                             "proxies are supported")
        return httpcore.AsyncHTTPProxy(proxy_url=proxy, ssl_context=ssl_context, max_connections=connections)
    return httpcore.AsyncConnectionPool(ssl_context=ssl_context, max_connections=connections)
