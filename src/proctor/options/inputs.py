"""The import and export options: how files go into a store (`proctor import`, `api.import_files`) and what an
export writes (`proctor export`, `api.export`), one field each."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.model import NOT_IN_TOML, Checked, option

RESPONSE_FORMATS = ("auto", "jsonl", "rag24", "rag25", "text-dir")
"""The formats `import responses` reads (`auto`: detected)."""
ON_ERROR = ("fail", "skip")
"""What a malformed record does to an import."""


@dataclass(frozen=True, kw_only=True)
class ImportOptions(Checked):
    """Every import option (`proctor import`)."""

    with_grades: bool = option(True, flag="--no-grades", action="store_false", toml=NOT_IN_TOML,
                               help="exampp: import everything but the grades")
    bank_name: str | None = option(
        flag="--name", metavar="NAME", toml=NOT_IN_TOML,
        help="bank: the bank's name in the store (default: the file name); a changed file under a known name adds a "
        "version")
    grades_bank: str | None = option(
        flag="--bank", metavar="NAME[@VERSION]", toml=NOT_IN_TOML,
        help="exampp: the bank the recorded grades graded (every graded question must be in it); their grade sets "
        "then name that bank version")
    """exampp: attach the imported grades to this bank (`NAME[@VERSION]`), which must hold every graded question."""
    response_format: str = option("auto", flag="--format", choices=RESPONSE_FORMATS, toml=NOT_IN_TOML,
                                  help="responses: input format")
    word_budget: int | None = option(
        metavar="N", toml=NOT_IN_TOML,
        help="responses: keep the first N words of every response (the same budget for all systems)")
    on_error: str = option(
        "fail", choices=ON_ERROR, toml=NOT_IN_TOML,
        help="responses, bank (JSONL): a malformed record fails the import (default) or is skipped and reported with "
        "its file and line")
    replace: bool = option(
        False, action="store_true", toml=NOT_IN_TOML,
        help="replace what the store holds where the file contradicts it (a run is replaced whole); the grades made "
        "from a replaced text become stale")
    """Replace what the store holds where the file contradicts it (otherwise such a file is refused)."""
    skip_unknown_queries: bool = option(
        False, action="store_true", toml=NOT_IN_TOML,
        help="skip (and count) lines of queries the store does not know instead of failing")
    keep_query_texts: bool = option(False, cli=False, toml=NOT_IN_TOML)
    """bank: where the store holds a query's text, a bank's other wording of it stays the bank's (not refused)."""


@dataclass(frozen=True, kw_only=True)
class ExportOptions(Checked):
    """What an export writes where (the grade sets it takes are chosen as every reading command chooses them)."""

    out: str | None = option(
        toml=NOT_IN_TOML,
        help="exampp: output file (.jsonl or .jsonl.gz); runs: output folder (created when missing); judgments: "
        "output file (default: standard output)")
    grades: bool = option(True, flag="--no-grades", action="store_false", toml=NOT_IN_TOML,
                          help="passages, judgments and rankings only")
    grade_sets: tuple[str, ...] | None = option(
        flag="--grade-set", action="append", metavar="ID", toml=NOT_IN_TOML,
        help="export this grade set's grades (repeat for several; default: the store's only grade set)")


__all__ = ["ExportOptions", "ImportOptions"]
