"""Question banks through the door (`proctor bank diff|impact|export`; `generate` is in
`proctor.api.bank_generation`): compare two bank files, see what changing bank A into B does to labels and
leaderboards, write a stored bank in the formats other tools read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from proctor.api.bank_generation import Log
from proctor.api.choices import check_choice
from proctor.api.results import JSON, DataResult, format_of, json_text
from proctor.errors import UsageError
from proctor.options.backend import BackendOptions
from proctor.options.banks import BANK_FORMATS as _FORMATS
from proctor.options.banks import BankExportOptions, BankImpactOptions
from proctor.options.model import names
from proctor.store import Store

if TYPE_CHECKING:
    from proctor.evaluate.leaderboard_files import LeaderboardFile
    from proctor.grading.engine import Summary
    from proctor.io.banks import Bank
    from proctor.records import GradeSet

BankFormat = Literal["items", "questions", "yaml", "nuggetizer", "autojudge"]
"""How `export_bank` writes: the workbench's `items` or older `questions` JSONL, editable YAML, nuggetizer's
nuggets JSONL (nuggets only), the TREC AutoJudge nugget bank."""
BANK_FORMATS: tuple[str, ...] = get_args(BankFormat)
assert BANK_FORMATS == _FORMATS  # the option's choices


def load_bank_file(path: str | Path, *, log: Log | None = None) -> Bank:
    """A bank file (JSONL either format, YAML, nuggetizer, AutoJudge); `log` receives its reader's notes
    (merged identical repeats)."""
    from proctor.io.bank_files import load_bank

    bank = load_bank(path)
    for line in bank.notes:
        (log or (lambda _: None))(line)
    return bank


@dataclass(frozen=True)
class BankDiff(DataResult):
    """Added, removed and reworded items between two banks (`result`, as `--format json` prints it); `render(fmt)`
    is what `proctor bank diff --format FMT` prints."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json", "md")
    json_field: ClassVar[str] = "result"
    result: dict[str, list[dict[str, Any]]]

    def as_text(self, fmt: str) -> str:
        """Lines a person reads (`text`) or Markdown."""
        from proctor.bank.diff import render_diff

        return render_diff(self.result, fmt)


def diff_banks(old: str | Path, new: str | Path, *, log: Log | None = None) -> BankDiff:
    """The diff of two bank files: added, removed and reworded items (same id with new text, or similar text
    under a new id)."""
    from proctor.bank.diff import diff_banks as diff

    return BankDiff(diff(load_bank_file(old, log=log).questions, load_bank_file(new, log=log).questions))


def bank_diff(old: str | Path, new: str | Path, *, log: Log | None = None) -> BankDiff:
    """The diff of two bank files (`diff_banks`): added, removed and reworded items."""
    return diff_banks(old, new, log=log)


def bank_impact(store: Store, old: str | Path, new: str | Path, **options: Any) -> BankImpact:
    """What changing bank A (`old`) into B (`new`) does in `store`: grade only what B adds, then the passages
    whose label changes and how every system's score and the leaderboard correlation move (`options` as for
    `impact_request`)."""
    return impact_request(old, new, **options).run(store)


@dataclass(frozen=True)
class BankImpact(DataResult):
    """What changing bank A into B did: B's grade set, the grading of what B adds (a summary, or None when
    nothing needed grading) and the comparison (`result`: changed labels, scores, correlations); `render(fmt)` is
    what `proctor bank impact --format FMT` prints."""

    formats: ClassVar[tuple[str, ...]] = ("md", "json")
    json_field: ClassVar[str] = "result"
    grade_set: GradeSet
    graded: Summary | None
    result: dict[str, Any]

    def as_text(self, fmt: str) -> str:
        """The impact as Markdown."""
        from proctor.analyze.bank_impact import render_impact

        return render_impact(self.result)


@dataclass(frozen=True)
class ImpactRequest:
    """A checked `proctor bank impact`: both banks read, the official leaderboard read, the backend for what B
    adds (None: B may add nothing ungraded)."""

    new_path: str
    old: Bank = field(repr=False)
    new: Bank = field(repr=False)
    backend: BackendOptions | None = None
    grade_set: str | None = None
    method: str | None = None
    model: str | None = None
    bank: str | None = None
    impact: BankImpactOptions = BankImpactOptions()
    official: LeaderboardFile | None = None
    progress: bool | None = None

    def run(self, store: Store) -> BankImpact:
        """Grade only what B adds (a grade set for B beside A's), then compare labels and leaderboards."""
        from proctor.analyze.bank_impact import bank_impact, prepare_impact
        from proctor.evaluate.sources import load_runs
        from proctor.gradesets.resolve import resolve_grade_set

        old_set = resolve_grade_set(store, self.grade_set, self.method, self.model, self.bank)
        new_set, graded = prepare_impact(store, old_set, self.new_path, self.new, self.backend,
                                         name=self.impact.name, progress=self.progress)
        result = bank_impact(store, old_set, new_set, {q["question_id"] for q in self.old.questions},
                             {q["question_id"] for q in self.new.questions}, load_runs(store, None),
                             options=self.impact, official=self.official)
        return BankImpact(new_set, graded, result)


def impact_request(old: str | Path, new: str | Path, *, llm: str | None = None, backend: BackendOptions | None = None,
                   impact: BankImpactOptions | None = None, progress: bool | None = None, log: Log | None = None,
                   **fields: Any) -> ImpactRequest:
    """`proctor bank impact A B`, read and checked before the store is opened: the bank files (their notes to
    `log`), the official leaderboard for the correlation (`impact.official`), and the backend (`llm`, `backend`
    and/or its fields) for B's questions without a grade. `fields` may also name A's grade set (`grade_set`, or
    the one `method`/`model`/`bank` narrow to) and fields of `impact` (`BankImpactOptions`: `measure`,
    `min_grade`, `official`, `name`, `listed`). Carry it out with `.run(store)`."""

    from proctor.evaluate.leaderboard_files import read_official
    from proctor.llm.config import BackendConfig

    chosen = {k: fields.pop(k, None) for k in ("grade_set", "method", "model", "bank")}
    impact = replace(impact or BankImpactOptions(),
                     **{k: fields.pop(k) for k in list(fields) if k in names(BankImpactOptions)})
    old_bank, new_bank = load_bank_file(old, log=log), load_bank_file(new, log=log)
    board = read_official(impact.official) if impact.official else None
    config = None
    if llm:
        config = BackendConfig.of(backend, llm, **fields)
    return ImpactRequest(str(new), old_bank, new_bank, config, **chosen, impact=impact, official=board,
                         progress=progress)


@dataclass(frozen=True)
class BankExport:
    """What `export_bank` wrote: `items` questions and nuggets into `out` as `fmt`; `questions_left_out` are the
    questions nuggetizer's format cannot hold; `render("text")` is what `proctor bank export` says."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    out: str
    fmt: BankFormat
    items: int
    questions_left_out: int = 0

    def to_json(self) -> JSON:
        """`{out, fmt, items, questions_left_out}`."""
        return {"out": self.out, "fmt": self.fmt, "items": self.items, "questions_left_out": self.questions_left_out}

    def render(self, fmt: str | None = None) -> str:
        """`text` (`said()`, one line each) or `json`."""
        if format_of(self, fmt) == "json":
            return json_text(self.to_json())
        return "".join(line + "\n" for line in self.said())

    def said(self) -> list[str]:
        """The questions left out (nuggetizer), and what was written where."""
        left_out = self.questions_left_out
        return ([f"nuggetizer's format holds nuggets only: {left_out} questions left out"] if left_out else []) + [
            f"wrote {self.items} items to {self.out} ({self.fmt})"]


def export_bank(store: Store, out: str, fmt: BankFormat = BankExportOptions.bank_format, *,  # type: ignore[assignment]
                bank: str | None = None) -> BankExport:
    """Write the store's banks (every bank's latest version, or `bank`: `NAME[@VERSION]`) to `out` as `fmt`."""
    from proctor.bank.generate import write_bank
    from proctor.bank.manual import bank_lines, yaml_text
    from proctor.outputs import file_target, write_text

    check_choice("fmt", fmt, BankFormat)
    version = store.banks.bank_version(bank) if bank else None
    questions = store.banks.bank_questions(*version) if version else store.banks.bank_questions()
    texts = {k: v for k, v in store.corpus.queries().items() if v}
    if not questions:
        raise UsageError(f"{store.path}: no bank questions" + (f" in bank {bank!r}" if bank else ""))
    left_out = 0
    if fmt == "yaml":
        write_text(file_target(out), yaml_text(questions, texts, version[0] if version else None))
    elif fmt in ("nuggetizer", "autojudge"):
        from proctor.io.nugget_banks import autojudge_lines, nuggetizer_lines

        lines = (nuggetizer_lines if fmt == "nuggetizer" else autojudge_lines)(questions, texts)
        if not lines:
            raise UsageError(f"{store.path}: no nuggets to write in nuggetizer's format (it holds no questions)")
        if fmt == "nuggetizer":
            left_out = len(questions) - sum(len(line.get("nuggets", [])) for line in lines)
        write_bank(lines, out)
    else:
        write_bank(bank_lines(questions, texts, fmt), out)
    return BankExport(out, fmt, len(questions), left_out)
