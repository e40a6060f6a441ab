"""The review app's guard, checked on every request before any route runs:

- a token (when the server has one; required for any host but loopback): `Authorization: Bearer T`, the
  `proctor_token` cookie, or `?token=T` once (which sets the cookie and redirects without it); no token is
  401, a wrong one 403;
- on loopback without a token, the Host header must name loopback (no DNS rebinding);
- only GET, HEAD and POST; every POST carries the CSRF token of the browser's session (form field `csrf`)
  and, when the browser sends an Origin, the server's own (403 otherwise);
- every response forbids scripts, styles and images from anywhere but the app itself (Content-Security-Policy)
  and inline scripts altogether, so text from the store cannot run even if it were not escaped.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import FormData
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

SESSION_COOKIE = "proctor_session"
TOKEN_COOKIE = "proctor_token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh random access token."""
    return secrets.token_urlsafe(24)


class Guard(BaseHTTPMiddleware):
    """Token, Host, method and session checks (see the module's docstring)."""

    def __init__(self, app, token: str | None, secret: bytes) -> None:
        super().__init__(app)
        self.token, self.secret = token, secret

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.method not in ("GET", "HEAD", "POST"):
            return _secure(PlainTextResponse("method not allowed", status_code=405))
        refused = self._refuse(request)
        if refused is not None:
            return _secure(refused)
        if self.token and request.query_params.get("token") is not None:
            rest = {k: v for k, v in request.query_params.items() if k != "token"}
            response = RedirectResponse(request.url.path + ("?" + urlencode(rest) if rest else ""), status_code=303)
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
            return _secure(response)
        session = request.cookies.get(SESSION_COOKIE)
        fresh = not session or len(session) != 32
        if fresh:
            session = secrets.token_hex(16)
        request.state.csrf = self.csrf(session or "")
        response = await call_next(request)
        if fresh:
            response.set_cookie(SESSION_COOKIE, session or "", httponly=True, samesite="strict")
        return _secure(response)

    def _refuse(self, request: Request) -> Response | None:
        if self.token:
            given = _bearer(request) or request.cookies.get(TOKEN_COOKIE) or request.query_params.get("token")
            if not given:
                return PlainTextResponse("401: this review server needs its access token (?token=...)",
                                         status_code=401)
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return PlainTextResponse("403: wrong access token", status_code=403)
        else:
            host = urlsplit("//" + (request.headers.get("host") or "")).hostname or ""
            if host not in LOOPBACK_NAMES:
                return PlainTextResponse("403: unexpected Host header", status_code=403)
        origin = request.headers.get("origin")
        if request.method == "POST" and origin and urlsplit(origin).netloc != request.headers.get("host"):
            return PlainTextResponse("403: cross-site request refused", status_code=403)
        return None

    def csrf(self, session: str) -> str:
        """The CSRF token of a browser session."""
        return hmac.new(self.secret, session.encode(), hashlib.sha256).hexdigest()


async def checked_form(request: Request) -> FormData:
    """The POSTed form once its CSRF token matches the session's (else PermissionError)."""
    form = await request.form()
    token = str(form.get("csrf") or request.headers.get("x-csrf-token") or "")
    if not token or not hmac.compare_digest(token.encode(), request.state.csrf.encode()):
        raise PermissionError("missing or wrong CSRF token: reload the page and try again")
    return form


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None


def _secure(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response
