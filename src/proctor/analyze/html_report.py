"""The HTML page of `proctor analyze`, rendered from a Jinja2 template (`templates/report.html.j2`) with
autoescaping on: every id, caption and note is data, never markup. Long tables are collapsible."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

from proctor.analyze.tables import Table

COLLAPSE_ROWS = 15
"""Tables with more rows than this are folded (<details>) on the page."""


@dataclass
class Section:
    """One section of the report: its Markdown, and its parts as data for the page."""

    title: str
    markdown: str
    tables: list[tuple[str | None, Table]] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def collapsed(self) -> bool:
        """Long (per-query) tables are folded."""
        return any(len(t.rows) > COLLAPSE_ROWS for _, t in self.tables)


@dataclass
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
