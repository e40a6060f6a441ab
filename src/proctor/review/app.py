"""`proctor review`: the review app (Starlette + Jinja2, served by uvicorn). `create_app` builds it over one
store; `serve` checks the bind address and token and runs it. See docs/review.md."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

from proctor.api import commands
from proctor.errors import UsageError
from proctor.options.backend import BackendOptions
from proctor.options.review import ReviewOptions
from proctor.review.jobs import Jobs
from proctor.review.pages import Cache, Thresholds
from proctor.review.state import ReviewState

HERE = Path(__file__).parent
DEFAULTS = ReviewOptions()
"""Every option of the review app at its default."""


def create_app(store_path: str | Path, *, config: commands.BackendConfig | None = None, token: str | None = None,
               official: commands.LeaderboardFile | None = None, thresholds: Thresholds | None = None,
               depth: int = ReviewOptions.depth):
    """The ASGI app over one store (writable: reviewers' drafts, audit and judgments are stored in it)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from proctor.review.routes import ROUTES, error_handlers
    from proctor.review.security import Guard

    store = commands.review_store(store_path)
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    state = ReviewState(store, config, official, thresholds or Thresholds(), Cache(depth),
                        Jobs(Path(store_path), config))
    app = Starlette(routes=[*ROUTES, Mount("/static", StaticFiles(directory=HERE / "static"), name="static")],
                    middleware=[Middleware(Guard, token=token, secret=secrets.token_bytes(32))],
                    exception_handlers=error_handlers())
    app.state.review = state
    app.state.templates = env
    return app


def check_bind(host: str, token: str | None, generate: bool) -> str | None:
    """The token to require: refused (UsageError) for a non-loopback host without one unless `generate`."""
    from proctor.review.security import is_loopback, new_token

    if token is not None and len(token) < 16:
        raise UsageError("{token} must be at least 16 characters", params=("token",))
    if token is None and not is_loopback(host):
        if not generate:
            raise UsageError(f"{{host}} {host} exposes the review app beyond this machine: give {{token}} T "
                             "(or {generate_token}) so that every request must carry it",
                             params=("host", "token", "generate_token"))
        token = new_token()
    return token


def serve(store_path: str | Path, host: str, port: int, token: str | None, **options) -> None:
    """Run the server until interrupted (prints the address to open)."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:  # a clear message before any work
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UsageError(f"{{host}} {host} {{port}} {port}: cannot listen there ({exc.strerror or exc})",
                             params=("host", "port")) from None
    app = create_app(store_path, token=token, **options)
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    print(f"proctor review: serving {store_path} at {address}", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


def review_app(store_path: str | Path, options: ReviewOptions = DEFAULTS,
               backend: BackendOptions | None = None) -> None:
    """`proctor review` (`proctor.review_app`): check the bind address and token (`check_bind`), read the official
    leaderboard for the impact view, then serve the app over the store until interrupted. `options.llm` (with
    `backend`'s options) grades what is new; without it the app cannot grade."""
    token = check_bind(options.host, options.token, options.generate_token)
    config = commands.review_backend(backend, options.llm) if options.llm else None
    board = commands.official_board(options.official) if options.official else None
    serve(store_path, options.host, options.port, token, config=config, official=board,
          thresholds=Thresholds(options.min_grade, options.judged_relevant), depth=options.depth)
