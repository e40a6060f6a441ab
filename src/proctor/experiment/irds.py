"""ir_datasets ids as inputs (`irds:ID`): placeholder until the optional support lands."""

from __future__ import annotations

from pathlib import Path

from proctor.experiment.schema import Experiment, Source


def materialise(experiment: Experiment) -> dict[Source, list[Path]]:
    """Files holding the ir_datasets inputs of an experiment."""
    return {}
