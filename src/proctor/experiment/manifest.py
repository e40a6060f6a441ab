"""`run.json`: what an experiment run did — enough to reproduce it: Proctor version, the experiment file's
hash, every input file's hash, per step its content hash, status, timings and the commands it stands for,
per grader the grade set (id, method, model, bank, prompt version, parameters) and the LLM usage."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any

from proctor import __version__
from proctor.api.experiments import write_text

MANIFEST = "run.json"
FORMAT = 1


def read_manifest(out: Path) -> dict[str, Any]:
    """The manifest of the last run in `out` (empty when there is none or it cannot be read)."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == FORMAT else {}


def new_manifest(experiment, inputs: dict[str, str], previous: dict[str, Any]) -> dict[str, Any]:
    """A manifest for this run, keeping the previous run's step records (updated as steps run)."""
    return {"format": FORMAT, "proctor_version": __version__, "python": sys.version.split()[0],
            "platform": platform.platform(), "experiment": {"file": str(experiment.path), "name": experiment.name,
                                                            "sha256": experiment.digest},
            "store": str(experiment.store), "out": str(experiment.out), "inputs": inputs,
            "steps": dict(previous.get("steps", {})), "commands": [], "seconds": 0.0}


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Write `run.json` atomically."""
    write_text(out / MANIFEST, json.dumps(manifest, indent=2, default=str) + "\n")


def usage(summaries: list) -> dict[str, Any]:
    """LLM usage of one grading step, summed over its method steps, with each step's summary."""
    return {"graded_now": sum(s.graded for s in summaries), "failures": sum(s.failures for s in summaries),
            "llm_calls": sum(s.calls for s in summaries), "cache_hits": sum(s.cached for s in summaries),
            "tokens": sum(s.tokens for s in summaries), "steps": [s.as_dict() for s in summaries]}
