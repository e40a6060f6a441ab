"""The HTML page of `proctor analyze`, rendered from a Jinja2 template (`templates/report.html.j2`) with
autoescaping on: every id, caption and note is data, never markup. Long tables are collapsible."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from proctor.analyze.tables import Table

COLLAPSE_ROWS = 15
"""Tables with more rows than this are folded (<details>) on the page."""


@dataclass(frozen=True)
class Section:
    """One section of the report: its Markdown, and its parts as data for the page (frozen: lists given are kept
    as tuples)."""

    title: str
    markdown: str
    tables: Sequence[tuple[str | None, Table]] = ()
    paragraphs: Sequence[str] = ()
    notes: Sequence[str] = ()

    def __post_init__(self) -> None:
        for name in ("tables", "paragraphs", "notes"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def collapsed(self) -> bool:
        """Long (per-query) tables are folded."""
        return any(len(t.rows) > COLLAPSE_ROWS for _, t in self.tables)


@dataclass(frozen=True)
class Figure:
    """A plot: its title, how its configuration was chosen, and its files (PNG, PDF, SVG)."""

    title: str
    png: Path
    how: str = ""

    def files(self) -> list[Path]:
        """PNG, PDF and SVG."""
        return [self.png, self.png.with_suffix(".pdf"), self.png.with_suffix(".svg")]


def render(about: str, sections: list[Section], figures: list[Figure], plot_notes: list[str]) -> str:
    """The self-contained page (plots embedded as SVG data)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("proctor.analyze", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    shown = [{"title": f.title, "how": f.how, "files": [p.name for p in f.files()],
              "src": "data:image/svg+xml;base64," + base64.b64encode(f.png.with_suffix(".svg").read_bytes()).decode()}
             for f in figures]
    return env.get_template("report.html.j2").render(about=about, sections=sections, figures=shown,
                                                     plot_notes=plot_notes)
