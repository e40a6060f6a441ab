"""The package as a user installs it from a wheel: `python -m build --wheel` holds every file of the package
that is not Python (templates, static files, demo.toml, the AutoJudge workflow), and the wheel installed in
a fresh virtual environment runs `proctor --help` and the demo.

The fresh environment gets the wheel only; its dependencies are this interpreter's installed packages, seen
through a path file (as `--system-site-packages` would show them), so the test downloads nothing. Path
files of those packages are not processed, so an editable Proctor installed there stays invisible: what
runs is the wheel's code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from venv import EnvBuilder

import pytest

from conftest import ROOT

PACKAGE = ROOT / "src" / "proctor"
pytestmark = pytest.mark.slow  # builds the wheel; one test installs it into a fresh virtualenv (~20 s)


def _data_files() -> set[str]:
    """Every file of the package that is not Python, as the wheel names it (proctor/...)."""
    return {str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = source / "dist"
    # --no-isolation: the build backend installed here (no download); -x: setuptools builds wheels itself
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "-x", "--outdir", dist,
                            source], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (path,) = dist.glob("proctor-*.whl")
    return path


def test_the_wheel_holds_every_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = _data_files()
    assert {"proctor/demo/demo.toml", "proctor/analyze/templates/report.html.j2",
            "proctor/review/static/review.js", "proctor/methods/templates/self-rating.yaml",
            "proctor/bank/templates/generate.yaml"} <= data
    assert data - names == set(), "package files missing from the wheel (add them to package-data)"
    assert any(n.endswith(".dist-info/entry_points.txt") for n in names)


def fresh_venv(folder: Path) -> tuple[Path, Path]:
    """A fresh virtual environment in `folder`/venv (no pip) that sees this interpreter's installed packages
    through a path file: its python and its site-packages folder."""
    venv = folder / "venv"
    EnvBuilder(with_pip=False).create(venv)  # what `python -m venv --without-pip` does, without a process
    python = venv / "bin" / "python"
    site = Path(sysconfig.get_path("purelib", "venv", vars={"base": str(venv), "platbase": str(venv)}))
    assert site.is_dir(), site  # the venv's own site-packages: the path file below is read from there
    ours = sysconfig.get_paths()
    (site / "dependencies.pth").write_text("\n".join(dict.fromkeys([ours["purelib"], ours["platlib"]])) + "\n")
    return python, site


def test_the_wheel_in_a_fresh_venv_runs_help_and_the_demo(wheel, tmp_path):
    python, site = fresh_venv(tmp_path)
    venv = python.parent.parent
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
                                "--no-index", "--no-compile", "--disable-pip-version-check", wheel],
                               capture_output=True, text=True)  # no byte-compiling: what runs compiles itself
    assert installed.returncode == 0, installed.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["HF_HUB_OFFLINE"] = "1"
    where = subprocess.run([python, "-c", "import proctor; print(proctor.__file__)"], capture_output=True, text=True,
                           env=env, cwd=tmp_path)
    assert where.returncode == 0 and where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    proctor = venv / "bin" / "proctor"
    shown = subprocess.run([proctor, "--help"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert shown.returncode == 0 and "demo" in shown.stdout and "leaderboard" in shown.stdout, shown.stderr
    out = tmp_path / "demo"
    demo = subprocess.run([proctor, "demo", "--out", out], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert (out / "demo.toml").is_file() and (out / "run.json").is_file() and (out / "demo.db").is_file()
    assert any((out / "leaderboards").iterdir())


def test_the_wheel_installs_with_the_autojudge_extras(wheel, tmp_path):
    """docs/autojudge.md's wheel line, `pip install './proctor-….whl[autojudge,embed]'`: the extras resolve
    against the installed packages (seen through a path file), so nothing but Proctor is left to install."""
    python, _ = fresh_venv(tmp_path)
    shutil.copy(wheel, tmp_path / wheel.name)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--dry-run", "--no-index",
                           "--disable-pip-version-check", f"./{wheel.name}[autojudge,embed]"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Would install proctor-0.1.0" in done.stdout, done.stdout[-2000:]
