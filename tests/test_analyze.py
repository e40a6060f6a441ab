"""`proctor analyze`: the files it writes, the sweep table, and the HTML report as a browser shows it."""

from __future__ import annotations

import json
import os
import struct

import pytest

from conftest import DL19
from demo_fixture import copy_store, demo_run_fixture  # noqa: F401  (a fixture)
from inprocess import run_cli
from proctor.analyze.html_report import Section, render
from proctor.analyze.tables import Table
from proctor.records import GradeSet
from proctor.store import Store
from test_review import BROWSER_ARGS, CHROMIUM  # Debian's headless shell of chromium where installed


@pytest.fixture(scope="module")
def demo_report(demo_run, tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    copy_store(demo_run.root / "demo.db", root / "demo.db")  # the grade set added below stays in this copy
    official = root / "official.json"
    official.write_text(json.dumps({"strong": 1, "partial": 2, "middling": 3, "weak": 4}))
    store = Store.open(root / "demo.db")
    with store.transaction():  # a grade set without grades: a note, never an empty plot
        store.grades.ensure_grade_set(GradeSet("self-rating", "empty-model", "v1", None, None))
    store.close()
    out = root / "report"
    result = run_cli("analyze", "--store", root / "demo.db", "--official", official, "--out", out,
                     "--measures", "P@3,nDCG@5,RR", "--budget", "3")
    assert result.code == 0, result.err
    return out


@pytest.mark.slow
def test_analyze_writes_every_part(demo_report):
    for name in ("report.md", "report.html", "correlations.tsv", "correlations.json", "agreement.md",
                 "agreement.json"):
        assert (demo_report / name).stat().st_size > 0, name
    plots = demo_report / "plots"
    pngs = sorted(plots.glob("*.png"))
    assert len(pngs) == 4 and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    assert sorted(p.name for p in plots.iterdir()) == sorted(
        p.with_suffix(s).name for p in pngs for s in (".png", ".pdf", ".svg"))  # vector files beside every PNG
    for png in pngs:
        assert png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-" and "<svg" in png.with_suffix(".svg").read_text()
        data = png.read_bytes()
        at = data.index(b"pHYs") + 4
        assert struct.unpack(">II", data[at:at + 8]) == (11811, 11811)  # 300 dpi, in pixels per metre
    rows = json.loads((demo_report / "correlations.json").read_text())
    assert {r["metric"] for r in rows} == {"EXAM-Qrels", "EXAM-Cover"}
    assert len(rows) == 5 * 2 + 1 + 5  # P@3 and RR per τ, nDCG once (it ignores τ), cover per τ
    report = (demo_report / "report.md").read_text()
    assert "**" in report and "Agreement with human judgments" in report and "plots/" in report
    assert "empty-model" in report and "has no grades" in report and "chosen with --plot-measure" in report
    assert "[PDF](plots/scatter_" in report and "[SVG](plots/scatter_" in report
    assert "| queries graded | pool pairs graded |" in report and "## Intervals — " in report
    assert "[PNG](plots/intervals_" in report and "| rank | system | score | ci\\_low | ci\\_high |" in report


def test_the_report_renders_what_it_wrote_as_text_and_json(tmp_path):
    from proctor.analyze.html_report import Figure
    from proctor.analyze.report import AnalysisReport
    from proctor.errors import UsageError
    from proctor.evaluate.coverage import Coverage, Floor

    coverage = Coverage({"scored": 2, "in_store": 43}, floor=Floor(10, 0.9)).judge()
    report = AnalysisReport(correlations=[{"method": "self-rating", "P@3 ρ": 0.5}], files=[tmp_path / "report.md"],
                    figures=[Figure("P@3", tmp_path / "plots" / "p3.png", "chosen")], slugs={"g1": "self-rating"},
                    coverage={"g1": coverage}, warnings=["g1: rests on 2 of 43 queries (fewer than 10)"],
                    plot_notes=["no plot for g2: no grades"])
    data = report.to_json()
    assert json.loads(report.render("json")) == data and json.loads(json.dumps(data)) == data
    assert data["coverage"]["g1"]["below_floor"] is True and data["figures"][0]["how"] == "chosen"
    assert data["files"] == [str(tmp_path / "report.md")] and data["correlations"][0]["P@3 ρ"] == 0.5
    assert report.render() == report.render("text") == (
        f"warning: g1: rests on 2 of 43 queries (fewer than 10)\nno plot for g2: no grades\nwrote 1 files:\n"
        f"  {tmp_path / 'report.md'}\n")
    with pytest.raises(UsageError, match="unknown format 'xml'"):
        report.render("xml")


def test_bold_only_where_values_differ_and_the_page_escapes_and_folds():
    table = Table(["a", "b"], [[0.5, 0.1], [0.5, 0.3]], caption="<script>alert(1)</script>")
    marked = table.with_best_per_column([0, 1])
    assert marked.bold == {(1, 1)} and table.bold == frozenset()  # column a is all 0.5: no best; a new table
    table = marked
    long = Table(["query", "τ"], [[f"q{i}", 0.1 * i] for i in range(40)])
    page = render("about <b>", [Section("short", "", [(None, table)]), Section("long", "", [(None, long)])], [], [])
    assert "<script>alert" not in page and "&lt;script&gt;" in page and "about &lt;b&gt;" in page
    assert page.count("<details>") == 1 and "40 rows" in page


@pytest.mark.slow
def test_html_report_renders_its_plots_in_chromium(demo_report, tmp_path):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    html = (demo_report / "report.html").read_text()
    assert "src=\"data:image/svg+xml;base64," in html and "plots/" not in html.split("<body>")[1].split("<img")[0]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((demo_report / "report.html").as_uri())
        images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
        figures = page.evaluate("Array.from(document.querySelectorAll('figure')).map(f => "
                                "[f.querySelectorAll('img').length, f.getBoundingClientRect().height])")
        notes = page.locator("p.note").all_inner_texts()
        tables = page.locator("table").count()
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert len(images) == 4 and all(done and w > 100 and h > 100 for done, w, h in images)  # intervals: the 4th
    assert len(figures) == 4 and all(n == 1 and height > 100 for n, height in figures)  # no empty figure
    assert any("empty-model" in n and "no grades" in n for n in notes)
    assert tables >= 3
    assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.usefixtures("stand_in_plots")  # asserts nothing about the plot files
def test_analyze_dl19(dl19_store, tmp_path):
    out = tmp_path / "dl19-report"
    result = run_cli("analyze", "--store", dl19_store, "--official", DL19 / "dl19-official-leaderboard.json",
                     "--out", out)
    assert result.code == 0, result.err
    rows = json.loads((out / "correlations.json").read_text())
    p20 = next(r for r in rows if r["measure"] == "P@20" and r["tau"] == 3)
    assert p20["kendall"] == pytest.approx(0.754, abs=0.001) and p20["n_systems"] == 36
    table = (out / "correlations.tsv").read_text().splitlines()
    assert table[0].startswith("method\tmodel\tτ\tP@20 ρ\tP@20 τ") and len(table) == 1 + 5
    per_query = (out / "per_query_self-rating-google-flan-t5-large.tsv").read_text().splitlines()
    assert len(per_query) == 1 + 43


def test_the_same_data_gives_the_same_plot_files(tmp_path):
    from proctor.analyze.plots import scatter

    files = []
    for name in ("a", "b"):
        path = tmp_path / name / "scatter.png"
        path.parent.mkdir()
        scatter(path, {"s1": 0.5, "s2": 0.3, "s3": 0.1}, {"P@20": {"s1": 0.4, "s2": 0.35, "s3": 0.2}}, "score", "t")
        files.append({p.suffix: p.read_bytes() for p in path.parent.iterdir()})
    assert files[0].keys() == {".png", ".pdf", ".svg"} and files[0] == files[1]


@pytest.mark.slow
def test_outputs_are_0644_titles_name_the_metric_once_and_text_columns_align_left(demo_report):
    files = [p for p in demo_report.rglob("*") if p.is_file()]
    assert files and {p.name: oct(p.stat().st_mode & 0o777) for p in files} == {p.name: "0o644" for p in files}
    page, markdown = (demo_report / "report.html").read_text(), (demo_report / "report.md").read_text()
    svgs = "".join(p.read_text() for p in (demo_report / "plots").glob("*.svg"))  # matplotlib keeps titles as comments
    assert "EXAM-Cover cover" not in page + markdown + svgs and "<!-- EXAM-Cover, τ=3 (Kendall" in svgs
    # text columns (ids, methods) left-aligned, numbers right-aligned, in the page and in the Markdown
    assert "<th>grade set</th>" in page and '<th class="num">grades</th>' in page
    assert '<th class="num">m=1</th>' in page and '<th>statistic</th>' in page  # numbers as text align right too
    assert "td.num,th.num{text-align:right" in page and "padding:3px 6px;text-align:left}" in page
    assert "| grade set | method |" in markdown and "|---|---|" in markdown


def test_count_axes_have_whole_ticks():
    from proctor.analyze.plots import _pyplot, distribution_figure

    fig = distribution_figure([0.1, 0.2, 0.2, 0.5], "few queries", "Kendall τ")
    ticks = fig.axes[0].get_yticks()
    _pyplot().close(fig)
    assert len(ticks) > 1 and all(float(t).is_integer() for t in ticks)
