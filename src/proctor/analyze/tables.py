"""A small table model rendered the same way to Markdown, HTML and TSV (reports show one table three ways)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from proctor.markdown import escape


@dataclass(frozen=True)
class Table:
    """Header, rows of cells, and which cells to emphasise (best per column); frozen (the header and rows given are
    kept as tuples)."""

    header: Sequence[str]
    rows: Sequence[Sequence[object]] = ()
    bold: frozenset[tuple[int, int]] = frozenset()
    caption: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", tuple(self.header))
        object.__setattr__(self, "rows", tuple(tuple(row) for row in self.rows))
        object.__setattr__(self, "bold", frozenset(self.bold))

    def with_best_per_column(self, columns: Iterable[int]) -> Table:
        """The same table with the largest number in each of `columns` emphasised (ties all marked) where the
        column's values differ; a column whose numbers are all equal has no best and stays plain."""
        bold = set(self.bold)
        for c in columns:
            values = [r[c] for r in self.rows if isinstance(r[c], float)]
            if len(set(values)) < 2:
                continue
            best = max(values)
            bold |= {(i, c) for i, r in enumerate(self.rows) if isinstance(r[c], float) and r[c] == best}
        return replace(self, bold=frozenset(bold))

    def cells(self) -> list[list[tuple[str, bool]]]:
        """Every row as (text, emphasised) cells, as the report template shows them."""
        return [[(self._cell(v), (i, c) in self.bold) for c, v in enumerate(row)] for i, row in enumerate(self.rows)]

    def numeric(self) -> list[bool]:
        """Per column: True when every value is a number or a number's text (right-aligned); text columns are
        left-aligned."""
        return [all(_is_number(r[c]) for r in self.rows if r[c] is not None)
                and any(r[c] is not None for r in self.rows) for c in range(len(self.header))]

    def _cell(self, value: object) -> str:
        return f"{value:.3f}" if isinstance(value, float) else "—" if value is None else str(value)

    def markdown(self) -> str:
        """GitHub-flavoured Markdown (every cell escaped); emphasised cells in bold."""
        lines = [f"*{escape(self.caption)}*", ""] if self.caption else []
        lines.append("| " + " | ".join(escape(h) for h in self.header) + " |")
        lines.append("|" + "|".join("---:" if number else "---" for number in self.numeric()) + "|")
        for i, row in enumerate(self.rows):
            cells = [f"**{escape(self._cell(v))}**" if (i, c) in self.bold else escape(self._cell(v))
                     for c, v in enumerate(row)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def tsv(self) -> str:
        """Header and rows, full precision, `best` cells not marked."""
        def cell(v: object) -> str:
            return "" if v is None else repr(v) if isinstance(v, float) else str(v)
        return "\n".join(["\t".join(self.header)] + ["\t".join(cell(v) for v in r) for r in self.rows]) + "\n"


def _is_number(value: object) -> bool:
    """A number, or text that shows one (`0.2370`, `nan`, `—` for none)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value == "—"
        return True
    return False
