"""Proctor: evaluate search, generation and RAG systems with LLM-graded exam questions.

`import proctor` is cheap: the functions of the Python API (`proctor.api`, docs/api.md) and
`proctor.run_experiment` are loaded on first use."""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_API = ("open_store", "import_files", "grade", "LabelChoice", "labels", "leaderboard", "correlate", "render",
        "as_rows", "to_frame", "info", "export")


_BUILT_ON_API = {"run_experiment": "proctor.experiment", "load_experiment": "proctor.experiment",
                 "experiment_request": "proctor.experiment", "review_app": "proctor.review.app",
                 "run_demo": "proctor.demo.run"}
"""The doors of the packages built on the API (experiments, the review app, the demo): `proctor run`, `review`
and `demo` call them here."""


def __getattr__(name: str) -> Any:
    """`proctor.leaderboard`, `proctor.run_experiment`, ...: the API, imported when first used."""
    if name in _BUILT_ON_API:
        return getattr(import_module(_BUILT_ON_API[name]), name)
    if name in _API:
        return getattr(import_module("proctor.api"), name)
    raise AttributeError(f"module 'proctor' has no attribute {name!r}")


__all__ = ["__version__", *_API, *_BUILT_ON_API]
