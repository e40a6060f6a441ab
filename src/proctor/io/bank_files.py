"""Load a bank file of any format: Workbench JSONL (`proctor.io.banks`), human-editable YAML
(`proctor.io.yaml_banks`), nuggetizer or AutoJudge nugget banks (`proctor.io.nugget_banks`)."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import InputError
from proctor.io.banks import Bank, read_bank
from proctor.io.nugget_banks import read_autojudge, read_nuggetizer
from proctor.io.textfile import parse_json_line, read_lines
from proctor.io.yaml_banks import read_yaml_bank
from proctor.options.inputs import ImportOptions

BANK_FORMATS = ("workbench", "yaml", "nuggetizer", "autojudge")


def bank_format(path: str | Path) -> str:
    """`yaml` by the file name; else by the keys of the first JSON record: `nuggetizer` ({qid, nuggets}; a
    record with nuggets but no qid too, so that its reader says the qid is missing),
    `autojudge` (nugget_bank / claim_bank / format_version) or `workbench` (items / questions)."""
    if str(path).removesuffix(".gz").endswith((".yaml", ".yml")):
        return "yaml"
    for line, text in read_lines(path):
        if not text.strip():
            continue
        try:
            obj = parse_json_line(path, line, text)
        except InputError:
            continue  # a bad line: reported by the reader
        if isinstance(obj, dict):
            if {"nugget_bank", "claim_bank", "format_version"} & set(obj):
                return "autojudge"
            if "nuggets" in obj and not {"items", "questions"} & set(obj):
                return "nuggetizer"  # with or without its "qid" (the reader names what is missing)
        return "workbench"
    return "workbench"


def load_bank(path: str | Path, on_error: str = ImportOptions.on_error) -> Bank:
    """A bank from a workbench JSONL file (either format), a human-editable YAML file, a nuggetizer nuggets
    file or an AutoJudge nugget-bank file (detected); `on_error="skip"` leaves bad JSONL lines out."""
    fmt = bank_format(path)
    if fmt == "yaml":
        return read_yaml_bank(path)
    if fmt == "nuggetizer":
        return read_nuggetizer(path, on_error)
    if fmt == "autojudge":
        return read_autojudge(path, on_error)
    return read_bank(path, on_error)
