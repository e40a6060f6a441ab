"""Inputs and outputs through the door: importing files into a store (`proctor import`) and exporting it as an
exam_pp file, TREC run files or qrels (`proctor export`). Each is a request checked before the store is opened,
then carried out on a store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from proctor.api.choices import check_choice
from proctor.api.results import JSON, format_of, json_text
from proctor.errors import UsageError
from proctor.importing import KINDS, ImportReport
from proctor.importing import import_files as _import_files
from proctor.options.banks import BankExportOptions
from proctor.options.inputs import ImportOptions
from proctor.outputs import file_target
from proctor.records import GradeSet
from proctor.store import Store

ImportKind = Literal["queries", "runs", "qrels", "corpus", "bank", "exampp", "responses"]
ResponseFormat = Literal["auto", "jsonl", "rag24", "rag25", "text-dir"]
OnError = Literal["fail", "skip"]
ExportKind = Literal["exampp", "runs", "judgments"]
IMPORT_KINDS: tuple[str, ...] = KINDS
EXPORT_KINDS: tuple[str, ...] = get_args(ExportKind)


@dataclass(frozen=True)
class ImportRequest:
    """A checked `proctor import`: files of one kind and the `ImportOptions`."""

    kind: ImportKind
    paths: tuple[Path, ...]
    options: ImportOptions

    def run(self, store: Store) -> list[ImportReport]:
        """Import the files into `store` in one transaction (all or nothing); one report per file."""
        return _import_files(store, self.kind, list(self.paths), self.options)


def import_request(kind: ImportKind, paths: Sequence[str | Path], options: ImportOptions | None = None,
                   **fields: Any) -> ImportRequest:
    """`proctor import KIND FILES`, checked before any store is opened: the `ImportOptions` (`options`, and/or
    its fields by name): `with_grades` (exampp), `bank_name` (bank: its name in the store), `grades_bank`
    (exampp: the bank its grades graded), `response_format` and `word_budget` (responses), `on_error`
    (responses, bank: a malformed record fails or is skipped), `replace` (what the store holds where a file
    contradicts it), `skip_unknown_queries`, `keep_query_texts` (bank: the store's query texts stay where the bank
    words a query otherwise)."""
    check_choice("kind", kind, ImportKind)
    options = replace(options or ImportOptions(), **fields)  # its choices checked when built
    if options.grades_bank and kind != "exampp":
        raise UsageError("{grades_bank} applies to `import exampp` only (bank files take {bank_name})",
                         params=("grades_bank", "bank_name"))
    return ImportRequest(kind, tuple(map(Path, paths)), options)


def import_files(store: Store, kind: ImportKind, paths: Sequence[str | Path], options: ImportOptions | None = None,
                 **fields: Any) -> list[ImportReport]:
    """Import files of one kind into `store`, all or nothing (`options`: the `ImportOptions`, and/or its fields
    by name); one report per file."""
    return import_request(kind, paths, options, **fields).run(store)


def import_into(store: Store, kind: ImportKind, paths: Sequence[str | Path], **options: Any) -> list[ImportReport]:
    """`import_files` by its former name."""
    return import_files(store, kind, paths, **options)


@dataclass(frozen=True)
class ExportRequest:
    """A checked `proctor export`: what to write where, and (exampp) which grade sets."""

    kind: ExportKind
    out: Path | None = None
    grade_sets: tuple[str, ...] = ()
    method: str | None = None
    model: str | None = None
    bank: str | None = None
    grades: bool = True

    def run(self, store: Store) -> Exported:
        """Write the export (atomically: a failed export leaves nothing half-written)."""
        if self.kind == "runs":
            written = export_runs(store, self.out)  # type: ignore[arg-type]
            return Exported(self.kind, self.out, len(written), sum(written.values()))
        if self.kind == "judgments":
            text = export_judgments(store)
            if self.out is not None:
                from proctor.outputs import write_text

                write_text(self.out, text)
            return Exported(self.kind, self.out, text.count("\n"), text=text)
        sets = self._grade_sets(store)
        return Exported(self.kind, self.out, _write_exampp(store, self.out, sets), grade_sets=sets)  # type: ignore[arg-type]

    def _grade_sets(self, store: Store) -> list[GradeSet]:
        from proctor.gradesets.resolve import resolve_grade_set

        if not self.grades:
            return []
        if self.grade_sets:
            chosen = [resolve_grade_set(store, g) for g in self.grade_sets]
        elif store.grades.grade_sets() or self.method or self.model or self.bank:
            chosen = [resolve_grade_set(store, None, self.method, self.model, self.bank)]
        else:
            return []
        return _with_members(store, chosen)


def _with_members(store: Store, chosen: list[GradeSet]) -> list[GradeSet]:
    """The grade sets to export, each ensemble's members before it (an ensemble is derived from them: without
    them an import could never read it), each once."""
    by_id = {s.id: s for s in store.grades.grade_sets()}
    out: dict[str, GradeSet] = {}
    for grade_set in chosen:
        out.update((m, by_id[m]) for m in grade_set.members if m in by_id)
        out[grade_set.id] = grade_set
    return list(out.values())


@dataclass(frozen=True)
class Exported:
    """What an export wrote: `count` queries (exampp), run files (runs) or judgments (judgments), `lines` of run
    files, the grade sets written (exampp) and the qrels `text` (judgments); `render("text")` is what `proctor
    export` says (written to a file) or prints (judgments to standard output)."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    kind: ExportKind
    out: Path | None
    count: int
    lines: int = 0
    grade_sets: list[GradeSet] = field(default_factory=list)
    text: str = ""

    def to_json(self) -> JSON:
        """`{kind, out, count, lines, grade_sets}` (the grade sets' ids; the qrels text is `text`)."""
        return {"kind": self.kind, "out": None if self.out is None else str(self.out), "count": self.count,
                "lines": self.lines, "grade_sets": [s.id for s in self.grade_sets]}

    def render(self, fmt: str | None = None) -> str:
        """`text`: the qrels (judgments without `out`), else `said()` one line each; or `json`."""
        if format_of(self, fmt) == "json":
            return json_text(self.to_json())
        return self.text if self.kind == "judgments" and self.out is None else "".join(f"{s}\n" for s in self.said())

    def said(self) -> list[str]:
        """What was written where (nothing when the judgments went to standard output)."""
        if self.kind == "exampp":
            return [f"wrote {self.count} queries to {self.out}"
                    + (f" with grade set(s) {', '.join(s.id for s in self.grade_sets)}" if self.grade_sets else "")]
        if self.kind == "runs":
            return [f"wrote {self.count} run files ({self.lines} lines) to {self.out}"]
        return [f"wrote {self.count} judgments to {self.out}"] if self.out is not None else []


def export_request(kind: ExportKind, out: str | Path | None = None, *, grade_sets: Sequence[str] | None = None,
                   method: str | None = None, model: str | None = None, bank: str | None = None,
                   grades: bool = True) -> ExportRequest:
    """`proctor export KIND`, checked before the store is opened: `exampp` (needs `out`, a file: .jsonl or
    .jsonl.gz; the grades of `grade_sets`, or of the one grade set `method`/`model`/`bank` narrow to, unless
    `grades=False`), `runs` (needs `out`, a folder), `judgments` (to `out`, or only as the result's `text`)."""
    check_choice("kind", kind, ExportKind)
    if kind == "exampp" and not out:
        raise UsageError("export exampp needs {out} FILE", params=("out",))
    if kind == "runs" and not out:
        raise UsageError("export runs needs {out} DIR (one run file per run is written there)", params=("out",))
    target = file_target(out) if out and kind != "runs" else (Path(out) if out else None)
    return ExportRequest(kind, target, tuple(grade_sets or ()), method, model, bank, grades)


def export(store: Store, kind: ExportKind | Literal["bank"], out: str | Path | None = None, *,
           grade_sets: Sequence[str] | None = None, method: str | None = None, model: str | None = None,
           bank: str | None = None, grades: bool = True, fmt: str = BankExportOptions.bank_format) -> Any:
    """Export the store: `exampp` (to `out`, .jsonl or .jsonl.gz: passages, judgments, rankings and the grades
    of `grade_sets`, or of the one grade set `method`/`model`/`bank` narrow to, unless `grades=False`), `runs`
    (one TREC run file per run into the folder `out`), `judgments` (the qrels, to `out` or as the result's
    `text`) — an `Exported` — or `bank` (the store's banks, or `bank`, to `out` as `fmt`, one of
    `BANK_FORMATS`) — a `BankExport`. Nothing is left half-written."""
    if kind == "bank":
        from proctor.api.banks import export_bank

        if not out:
            raise UsageError("export bank needs {out} FILE", params=("out",))
        return export_bank(store, str(out), fmt, bank=bank)  # type: ignore[arg-type]
    return export_request(kind, out, grade_sets=grade_sets, method=method, model=model, bank=bank,
                          grades=grades).run(store)


def _write_exampp(store: Store, out: Path, sets: list[GradeSet]) -> int:
    """The exam_pp file, written to a temporary file and renamed; the number of queries written."""
    import os

    from proctor.exporting import write_exampp
    from proctor.outputs import temporary_path

    tmp = temporary_path(out)
    try:
        n = write_exampp(store, tmp, sets)
        if n == 0:  # an empty file, which `import exampp` refuses: say so instead, as runs and judgments do
            raise UsageError(f"{store.path}: no passages in the store: nothing to export")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def export_runs(store: Store, folder: str | Path) -> dict[str, int]:
    """Write every stored run as a TREC run file named as the run into `folder` (what `proctor export runs`
    does); returns the lines written per run."""
    from proctor.exporting import write_runs

    return write_runs(store, folder)


def export_judgments(store: Store) -> str:
    """The imported human judgments as a qrels text (`qid 0 docid rel`; what `proctor export judgments`
    prints)."""
    from proctor.exporting import judgment_lines

    lines = judgment_lines(store)
    if not lines:
        raise UsageError(f"{store.path}: no judgments in the store (import them with `proctor import qrels`)")
    return "".join(lines)
