"""Fail fast: check an OpenAI-compatible endpoint before any pair is sent (reachable, key accepted, model
listed), and stop a run after a handful of consecutive connection or authentication failures — with the
real error, instead of retrying every remaining pair for hours."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from proctor.errors import ProctorError, UsageError
from proctor.llm.base import Reply

CONSECUTIVE_FATAL = 5
"""A run stops after this many consecutive replies that failed for a reason no retry can fix."""

_FATAL = re.compile(r"APIConnectionError|ConnectError|Connection (error|refused)|HTTP 40[134]\b"
                    r"|AuthenticationError|PermissionDeniedError|NotFoundError")


class BackendUnavailable(ProctorError):
    """The backend cannot answer: not reachable, key refused, model unknown (grades so far are kept). A message
    that names a parameter (`base_url`) writes it as a `{name}` marker listed in `params`, as `UsageError` does."""

    def __init__(self, message: str, *, params: tuple[str, ...] = ()) -> None:
        self.template, self.params = message, params
        super().__init__(self.spelled({}))

    def spelled(self, names: Mapping[str, str]) -> str:
        """The message with each parameter named by `names`."""
        return UsageError(self.template, params=self.params).spelled(names)


def is_fatal(error: str) -> bool:
    """True for failures that every further request would repeat: no connection, key refused, no such model."""
    return bool(_FATAL.search(error))


async def check_endpoint(backend: Any) -> None:
    """For `openai` backends: the server answers, accepts the key and lists the model (servers without a
    model list pass on the first reply instead); other backends are local and need no check."""
    fleet = getattr(backend, "fleet", None)
    if getattr(backend, "kind", None) != "openai" or fleet is None:
        return
    clients = [server.client for server in fleet.servers]
    refusals: list[str] = []
    for client in clients:  # a fleet passes when one of its servers passes (the others are taken out later)
        try:
            await _check_client(client, backend.model)
            return
        except BackendUnavailable as exc:
            refusals.append(str(exc))
    raise BackendUnavailable(refusals[0] if len(refusals) == 1
                             else f"none of the {len(refusals)} servers can grade: " + "; ".join(refusals))


async def _check_client(client: Any, model: str) -> None:
    from proctor.llm.http_client import APIError

    where = getattr(client, "base_url", "the server")
    try:
        models = await client.models()
    except APIError as exc:
        if exc.status == 404:
            return  # no /models route (some proxies): the first request answered is the check
        if exc.status in (401, 403):
            raise BackendUnavailable(f"{where}: the API key was refused (HTTP {exc.status}: {_short(exc)}); "
                                     "set OPENAI_API_KEY or PROCTOR_API_KEY") from None
        if exc.status is not None:
            return  # a server error on the model list says nothing about completions
        raise BackendUnavailable(f"{where}: cannot reach the server ({exc.name}: {_short(exc)}"
                                 f"{_cause(exc)}); check {{base_url}} and that the server is running",
                                 params=("base_url",)) from None
    except ValueError:
        return  # a list that is no JSON says nothing about completions either
    if models and model not in models:
        listed = ", ".join(models[:10]) + (" …" if len(models) > 10 else "")
        raise BackendUnavailable(f"{where}: model {model!r} is not served there (it lists: {listed})")


class Breaker:
    """Counts consecutive fatal failures; trips on the first one before any reply was answered, and after
    `limit` in a row later."""

    def __init__(self, limit: int = CONSECUTIVE_FATAL) -> None:
        self.limit = limit
        self.answered = False
        self.consecutive = 0
        self.error: str | None = None

    def observe(self, reply: Reply) -> None:
        """Count one reply."""
        if reply.error is not None and is_fatal(reply.error):
            self.consecutive += 1
            if not self.answered or self.consecutive >= self.limit:
                self.error = reply.error
        else:  # the server answered (a failed parse or a 5xx is still an answer)
            self.answered, self.consecutive = True, 0

    @property
    def tripped(self) -> bool:
        """True once the run should stop."""
        return self.error is not None

    def message(self, model: str, then: str = "stopped (grades so far are saved; run the same command again to "
                "resume once the server answers)") -> str:
        """What the user reads when the run stops (`then`: what became of the run)."""
        before = ("the first request failed" if not self.answered
                  else f"{self.consecutive} requests in a row failed")
        return f"{model}: {before}: {self.error}; {then}"


def _short(exc: Exception) -> str:
    return str(exc).replace("\n", " ")[:200]


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f": {_short(cause)}" if cause is not None and str(cause) else ""
