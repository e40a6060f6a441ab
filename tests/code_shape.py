"""What the code's shape tests and `benchmarks/code_shape.py` count: flags declared outside an option model,
literal defaults written more than once, functions with ten or more parameters, `raise`s below the command line
that name `--flags`, and imports past the door from the packages built on it. Each finder returns stable keys
(module and function, never line numbers) so a test can compare them with a list."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = SRC / "proctor"
MODEL_ADAPTER = "proctor.options.model"
BUILT_ON_THE_DOOR = ("proctor.review", "proctor.experiment", "proctor.autojudge")
DOOR = ("proctor.api", "proctor.options", "proctor.errors", "proctor.papers", "proctor.records")
"""What a package built on the door may import besides itself: the API, the option models, error types, how
messages cite the papers, and the plain records the API's results are made of."""


@cache
def modules() -> dict[str, ast.Module]:
    """{module name: syntax tree} of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _scopes(tree: ast.Module):
    """(node, name of the function or class it is in) for every node."""
    def walk(node: ast.AST, scope: str):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else scope
            yield child, inner
            yield from walk(child, inner)
    yield from walk(tree, "<module>")


def flags_outside_models() -> set[str]:
    """`module flag` for every command-line option added by `add_argument` outside the options adapter."""
    found = set()
    for name, tree in modules().items():
        if name == MODEL_ADAPTER:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and str(first.value).startswith("-"):
                    found.add(f"{name} {first.value}")
    return found


def literal_defaults() -> dict[str, set[str]]:
    """{`name=value`: the modules and functions (or option models) that write that literal default}: function
    parameters, `add_argument(default=...)` and option model fields; None and booleans are not counted. A copy
    of what the modules' one walk found (two tests ask)."""
    return {key: set(places) for key, places in _literal_defaults().items()}


@cache
def _literal_defaults() -> dict[str, set[str]]:
    """`literal_defaults`, found once per process (read only)."""
    found: dict[str, set[str]] = defaultdict(set)

    def note(param: str, value_node: ast.AST, where: str) -> None:
        value = _literal(value_node)
        if value is not None and not isinstance(value, bool):
            found[f"{param}={value!r}"].add(where)

    for name, tree in modules().items():
        for node, scope in _scopes(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
                pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
                for param, value in pairs:
                    note(param.arg, value, f"{name}.{node.name}")
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument" and node.args:
                dest = str(_literal(node.args[0]) or "").lstrip("-").replace("-", "_")
                for kw in node.keywords:
                    if kw.arg == "default":
                        note(dest, kw.value, f"{name}.{scope}")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == \
                    "add_options":  # a command's own default for a model's option is a second default
                for kw in node.keywords:
                    if kw.arg:
                        note(kw.arg, kw.value, f"{name}.{scope}")
            elif (isinstance(node, ast.AnnAssign) and name.startswith("proctor.options")
                  and isinstance(node.target, ast.Name) and isinstance(node.value, ast.Call) and node.value.args):
                note(node.target.id, node.value.args[0], f"{name}.{scope}")
    return found


def defaults_written_twice() -> set[str]:
    """`name=value` for every literal default written in more than one place."""
    return {key for key, where in literal_defaults().items() if len(where) > 1}


def option_names() -> set[str]:
    """The field names of every option model (a frozen dataclass in `proctor.options`)."""
    found = set()
    for name, tree in modules().items():
        if name.startswith("proctor.options"):
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name.endswith(("Options", "Choice")):
                    found |= {s.target.id for s in node.body
                              if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return found


def option_defaults_outside_models() -> set[str]:
    """`name=value in module.function` for every literal default of a model's option written outside the options
    models (the model is where an option's one default lives; a function or command takes it from there)."""
    options = option_names()
    return {f"{key} in {where}" for key, places in literal_defaults().items() if key.split("=")[0] in options
            for where in places if not where.startswith("proctor.options")}


def functions_with_ten_parameters() -> set[str]:
    """`module.function` for every public function or method taking ten or more parameters (self aside)."""
    found = set()
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
                a = node.args
                params = [p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
                if len(params) >= 10:
                    found.add(f"{name}.{node.name}")
    return found


FLAG = re.compile(r"(?<![\w-])--[a-z]")


def shell_words_below_the_cli() -> set[str]:
    """`module.function` for every `raise` outside `proctor.cli` whose message names a `--flag`."""
    found = set()
    for name, tree in modules().items():
        if name.startswith("proctor.cli"):
            continue
        for node, scope in _scopes(tree):
            if isinstance(node, ast.Raise) and any(
                    isinstance(s, ast.Constant) and isinstance(s.value, str) and FLAG.search(s.value)
                    for s in ast.walk(node)):
                found.add(f"{name}.{scope}")
    return found


def imports_past_the_door() -> set[str]:
    """`package imports module` for every import from a package built on the door past it."""
    found = set()
    for name, tree in modules().items():
        if not name.startswith(BUILT_ON_THE_DOOR):
            continue
        own = ".".join(name.split(".")[:2])
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = [node.module or ""]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("proctor.") and not target.startswith((own, *DOOR)):
                    found.add(f"{own} imports {target}")
    return found


def public_api_names() -> list[str]:
    """The names `proctor.api` offers."""
    import sys

    sys.path.insert(0, str(SRC))
    from proctor import api

    return list(api.__all__)
