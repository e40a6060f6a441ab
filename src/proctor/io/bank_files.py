"""Load a bank file of any format: Workbench JSONL (`proctor.io.banks`) or human-editable YAML
(`proctor.io.yaml_banks`)."""

from __future__ import annotations

from pathlib import Path

from proctor.io.banks import Bank, read_bank
from proctor.io.yaml_banks import read_yaml_bank


def load_bank(path: str | Path) -> Bank:
    """A bank from a workbench JSONL file (either format) or a human-editable YAML file."""
    if str(path).removesuffix(".gz").endswith((".yaml", ".yml")):
        return read_yaml_bank(path)
    return read_bank(path)
