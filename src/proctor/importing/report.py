"""What one import did: the `Tally` an importer notes in while it runs (skips, notes, what it replaced) and the
frozen `ImportReport` made of it at the end (what `proctor import` prints)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from proctor.errors import InputError
from proctor.outputs import format_of, json_text


@dataclass(frozen=True)
class ImportReport:
    """What one import added (counts of items read) and what it skipped. Frozen: made once, when the import of
    its file is done (`Tally.report`)."""

    kind: str
    path: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped_unknown_queries: int = 0
    skipped_what: str = "lines"
    """What `skipped_unknown_queries` counts: lines, or a bank's items (several to a line)."""
    skipped_records: list[InputError] = field(default_factory=list)
    unchanged: bool = False
    bank: str | None = None
    imported_at: str = ""
    replaced: dict[str, int] = field(default_factory=dict)
    """What `--replace` replaced: rows per table, and the grades that became stale."""
    bookkeeping: int = 0
    """Changes the import made and undid (not a change of the store)."""
    notes: list[str] = field(default_factory=list)
    """What the reader merged or noticed (printed before the summary)."""

    def summary(self) -> str:
        """One line for the terminal."""
        parts = ", ".join(f"{n} {what}" for what, n in self.counts.items())
        skipped = self.skipped_unknown_queries
        extra = f"; skipped {skipped} {self.skipped_what} of unknown queries" if skipped else ""
        if self.skipped_records:
            extra += f"; skipped {len(self.skipped_records)} malformed records"
        if self.bank:
            extra += f"; bank {self.bank}"
        if self.replaced:
            extra += "; replaced " + ", ".join(f"{n} {what}" for what, n in self.replaced.items())
        same = " (already imported: nothing changed)" if self.unchanged else ""
        return f"{self.path}: {self.kind}: {parts}{extra}{same}"

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    """The formats `render` writes, the default first."""

    def to_json(self) -> dict[str, Any]:
        """The counts, skips (each record's message), notes and the summary line as plain JSON data."""
        return {"kind": self.kind, "path": self.path, "counts": dict(self.counts),
                "skipped_unknown_queries": self.skipped_unknown_queries, "skipped_what": self.skipped_what,
                "skipped_records": [str(problem) for problem in self.skipped_records], "unchanged": self.unchanged,
                "bank": self.bank, "imported_at": self.imported_at, "replaced": dict(self.replaced),
                "bookkeeping": self.bookkeeping, "notes": list(self.notes), "summary": self.summary()}

    def render(self, fmt: str | None = None) -> str:
        """`text` (what `proctor import` prints: skipped records, notes, the summary line) or `json`."""
        if format_of(self, fmt) == "json":
            return json_text(self.to_json())
        lines = [f"skipped: {problem}" for problem in self.skipped_records] + self.notes + [self.summary()]
        return "\n".join(lines) + "\n"


@dataclass
class Tally:
    """What an importer notes while it runs, beside the counts it returns: skipped lines and records, notes, what
    it replaced (`proctor.import_checks` adds to `replaced` and `notes`)."""

    kind: str
    path: str
    imported_at: str
    skipped_unknown_queries: int = 0
    skipped_what: str = "lines"
    skipped_records: list[InputError] = field(default_factory=list)
    bank: str | None = None
    replaced: dict[str, int] = field(default_factory=dict)
    bookkeeping: int = 0
    notes: list[str] = field(default_factory=list)
    reading: Callable[[], None] = field(default=lambda: None, repr=False)
    """Called once the reader runs (its process forked): the file's digest is computed from then on."""

    def report(self, counts: dict[str, int], *, unchanged: bool) -> ImportReport:
        """The frozen report of the import: `counts` and what was noted (copied: the tally is not shared)."""
        return ImportReport(self.kind, self.path, dict(counts), self.skipped_unknown_queries, self.skipped_what,
                            list(self.skipped_records), unchanged, self.bank, self.imported_at, dict(self.replaced),
                            self.bookkeeping, list(self.notes))
