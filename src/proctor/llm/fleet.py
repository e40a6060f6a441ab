"""A fleet of OpenAI-compatible servers (vLLM replicas) behind one backend: each request goes to the healthy
server with the fewest outstanding requests; a server whose request fails at the transport or server level
(connection refused or reset, timeout, 429, 5xx) is taken out for a cooldown that doubles with every
failure in a row (0.5 s up to 30 s), then tried again with one probe request; its first success puts it
back. Per-server figures for the summary."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

COOLDOWN_BASE = 0.5
COOLDOWN_MAX = 30.0


@dataclass
class Server:
    """One server of the fleet, its client and its figures."""

    url: str | None
    client: Any
    outstanding: int = 0
    requests: int = 0
    failures: int = 0
    seconds: float = 0.0
    strikes: int = 0
    """Failures in a row; > 0 means taken out."""
    down_until: float = 0.0
    probing: bool = False
    taken_out: int = 0

    def figures(self) -> dict[str, Any]:
        """JSON-ready figures of this server."""
        ok = self.requests - self.failures
        return {"url": self.url, "requests": self.requests, "failures": self.failures,
                "mean_seconds": round(self.seconds / ok, 4) if ok else None, "taken_out": self.taken_out,
                "healthy": self.strikes == 0}


class Fleet:
    """Least-outstanding-requests choice over healthy servers, with cooldown and one probe per server."""

    def __init__(self, servers: list[Server]) -> None:
        self.servers = servers

    def pick(self) -> Server:
        """The server for the next request (its outstanding count already raised)."""
        now = time.monotonic()
        chosen = None
        for server in self.servers:
            if server.strikes and not server.probing and server.down_until <= now:
                server.probing = True  # one probe; the others wait for its result
                chosen = server
                break
        if chosen is None:
            healthy = [s for s in self.servers if not s.strikes]
            if healthy:
                chosen = min(healthy, key=lambda s: s.outstanding)
            else:
                chosen = min(self.servers, key=lambda s: s.down_until)
        chosen.outstanding += 1
        return chosen

    def release(self, server: Server, started: float, fault: bool, counted: bool = True) -> None:
        """Record how a request to `server` ended; a transport or server fault takes the server out (a request
        abandoned by its caller, `counted=False`, only frees its place)."""
        now = time.monotonic()
        server.outstanding -= 1
        server.probing = False
        if not counted:
            return
        server.requests += 1
        if fault:
            server.failures += 1
            server.taken_out += server.strikes == 0
            server.strikes += 1
            server.down_until = now + min(COOLDOWN_MAX, COOLDOWN_BASE * 2 ** (server.strikes - 1))
        else:
            server.strikes, server.down_until = 0, 0.0
            server.seconds += now - started

    def another_healthy(self, server: Server) -> bool:
        """Whether a retry can go elsewhere at once (no backoff needed)."""
        return any(s is not server and not s.strikes for s in self.servers)

    def figures(self) -> list[dict[str, Any]]:
        """Per-server figures."""
        return [s.figures() for s in self.servers]


def split_urls(base_url: str | None) -> list[str | None]:
    """`URL1,URL2,...` as a list (one None: the SDK's default server)."""
    if not base_url:
        return [None]
    urls = [u.strip() for u in base_url.split(",")]
    return urls
