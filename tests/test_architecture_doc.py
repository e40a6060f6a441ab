"""docs/architecture.md names real things: every file it names exists, every `file.py:name` is defined there,
and every dotted name (`gradesets.resolve.resolve_grade_set`) imports — so the map breaks a test when the code
moves."""

from __future__ import annotations

import importlib
import re

from conftest import ROOT

DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "src" / "proctor"
PACKAGES = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
MODULES = {p.stem for p in PACKAGE.glob("*.py")}
CODE = re.compile(r"`([^`\s]+)`")
FILE = re.compile(r"^(?:src/proctor/)?((?:[a-z_]+/)*[a-z_]+\.(?:py|yaml|yml))(?::([A-Za-z_]\w*))?$")


def _names() -> list[str]:
    return CODE.findall(DOC.read_text(encoding="utf-8"))


def _file(path: str) -> str | None:
    """The text of `path` under src/proctor, the repository, or (a name given inside its package's row) the one
    file of the package that ends so."""
    for base in (PACKAGE, ROOT):
        if (base / path).is_file():
            return (base / path).read_text(encoding="utf-8")
    found = [p for p in PACKAGE.rglob(path.split("/")[-1]) if p.as_posix().endswith("/" + path)]
    return found[0].read_text(encoding="utf-8") if len(found) == 1 else None


def test_every_file_the_map_names_exists_and_defines_what_it_says():
    missing = []
    for name in _names():
        match = FILE.match(name)
        if match is None or "NAME" in name:
            continue
        text, defined = _file(match.group(1)), match.group(2)
        if text is None or (defined and not re.search(rf"^\s*(?:async def |def |class )?{defined}\b *[:=(]", text,
                                                      re.M)):
            missing.append(name)
    assert missing == []


def _resolves(dotted: str) -> bool:
    parts = dotted.removeprefix("proctor.").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module("proctor." + ".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_dotted_name_the_map_names_imports():
    dotted = [n for n in _names() if re.fullmatch(r"(proctor\.)?[a-z_]+(\.[A-Za-z_]\w*)+", n) and not FILE.match(n)
              and n.removeprefix("proctor.").split(".")[0] in PACKAGES | MODULES]
    assert len(dotted) > 20
    assert [n for n in dotted if not _resolves(n)] == []


def test_the_layer_table_mirrors_the_architecture_test():
    from test_architecture import LAYERS

    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| packages and top-level modules | holds |"):].split("\n\n")[0]
    rows = [line.split(" | ")[0] for line in table.splitlines()[2:]]
    assert [tuple(CODE.findall(row)) for row in rows] == list(LAYERS)
