"""Proctor: evaluate search, generation and RAG systems with LLM-graded exam questions.

`import proctor` is cheap: the functions of the Python API (`proctor.api`, docs/api.md) and
`proctor.run_experiment` are loaded on first use."""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_API = ("open_store", "import_into", "grade", "LabelChoice", "qrels", "leaderboard", "correlate", "render",
        "as_rows", "to_frame", "info_text", "export_runs", "export_judgments")


def __getattr__(name: str) -> Any:
    """`proctor.leaderboard`, `proctor.run_experiment`, ...: the API, imported when first used."""
    if name in ("run_experiment", "load_experiment"):
        return getattr(import_module("proctor.experiment"), name)
    if name in _API:
        return getattr(import_module("proctor.api"), name)
    raise AttributeError(f"module 'proctor' has no attribute {name!r}")


__all__ = ["__version__", *_API, "run_experiment", "load_experiment"]
