"""A command imports only what it runs: `proctor leaderboard` loads neither the other commands nor the grading
engine, bank generation, numpy or yaml; `proctor.api` loads each name's module on first use, and every command's
parser is still complete (`--help`, `proctor --help`)."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from conftest import ROOT, seed_demo
from proctor import api
from proctor.cli import COMMANDS, build_parser

NOT_FOR_A_LEADERBOARD = ("numpy", "yaml", "asyncio", "proctor.grading.engine", "proctor.bank.generate",
                         "proctor.importing", "proctor.cli.grade_cmd", "proctor.cli.analyze_cmd",
                         "proctor.api.bank_generation", "proctor.api.grading")


def _loaded_after(code: str, *watched: str) -> list[str]:
    """Which of `watched` a fresh interpreter (this one has loaded everything) holds after running `code`."""
    probe = f"import sys\n{code}\nprint('LOADED', *[m for m in {watched!r} if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"})
    line = next((line for line in proc.stdout.splitlines() if line.startswith("LOADED")), None)
    assert line is not None, proc.stderr
    return line.split()[1:]


def test_a_leaderboard_imports_only_what_it_runs(tmp_path):
    store = str(seed_demo(tmp_path))
    args = ["leaderboard", "--store", store, "--measure", "P@10", "--qrels", "official"]
    code = f"from proctor.cli import main\nassert main({args!r}) == 0"
    assert _loaded_after(code, *NOT_FOR_A_LEADERBOARD) == []
    assert _loaded_after("from proctor.cli import build_parser\nbuild_parser(['grade'])",
                         "proctor.cli.grade_cmd", "proctor.cli.leaderboard_cmd") == ["proctor.cli.grade_cmd"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_chosen_command_has_its_whole_parser(command):
    full = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    alone = build_parser([command])._subparsers._group_actions[0].choices  # noqa: SLF001
    assert list(alone) == list(full)  # every command still a choice, in the same order
    assert alone[command].format_help() == full[command].format_help()
    assert alone[command].get_default("func") is full[command].get_default("func")  # None where subcommands run
    assert alone[command].description


def test_the_command_list_names_every_command_with_its_help():
    text = build_parser().format_help()
    for name, sub in build_parser()._subparsers._group_actions[0].choices.items():  # noqa: SLF001
        assert name in COMMANDS and name in text
        assert sub.description  # registered by its module, not a placeholder
    assert build_parser(["--version"]).format_help() == text
    assert build_parser(["--help", "leaderboard"]).format_help() == text  # the list, not one command


def test_the_api_names_are_those_type_checkers_see():
    tree = ast.parse((ROOT / "src" / "proctor" / "api" / "__init__.py").read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {(node.module, alias.name) for node in guarded.body for alias in node.names}
    assert imported == {(module, name) for name, module in api._WHERE.items()}  # noqa: SLF001
    assert sorted(api.__all__) == sorted(name for _, name in imported)
    for name in api.__all__:
        assert getattr(api, name) is getattr(sys.modules[api._WHERE[name]], name)  # noqa: SLF001


def test_a_function_keeps_its_name_when_its_module_is_imported_first():
    code = ("import proctor.api.labels, proctor.api.agreement, proctor.api.ppi"
            "\nfrom proctor import api\nimport types\n"
            "assert all(callable(getattr(api, n)) and not isinstance(getattr(api, n), types.ModuleType) "
            "for n in ('labels', 'agreement', 'ppi'))")
    assert _loaded_after(code, "proctor.api.labels") == ["proctor.api.labels"]


def test_an_unknown_api_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        api.no_such_name  # noqa: B018
    assert "leaderboard" in dir(api)
