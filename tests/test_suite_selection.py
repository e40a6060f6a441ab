"""How the suite selects and guards its tests: tests that need the shared DL19 data skip when it is absent on a
developer's machine but fail on CI, where a skip would silently drop the checks against DL19; slow tests carry
a registered marker."""

from __future__ import annotations

import tomllib

import pytest

from conftest import ROOT, on_ci, require_shared


def test_absent_shared_data_skips_off_ci(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PROCTOR_SHARED"):
        require_shared(tmp_path / "absent.jsonl.gz")


@pytest.mark.parametrize("value", ["true", "TRUE", "1"])
def test_absent_shared_data_is_an_error_on_ci(tmp_path, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    assert on_ci()
    with pytest.raises(pytest.fail.Exception, match="CI is set and .*absent.jsonl.gz is not present"):
        require_shared(tmp_path / "absent.jsonl.gz")


@pytest.mark.parametrize("value", ["", "false", "0"])
def test_ci_unset_or_false_is_not_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    assert not on_ci()


def test_present_shared_data_is_returned(tmp_path, monkeypatch):
    monkeypatch.setenv("CI", "true")
    present = tmp_path / "present.jsonl.gz"
    present.write_bytes(b"")
    assert require_shared(present) == present



def test_the_slow_marker_is_registered_and_unknown_markers_are_refused():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert any(marker.startswith("slow:") for marker in options["markers"])
    assert "--strict-markers" in options["addopts"].split()


def test_the_files_handed_out_first_exist():
    from conftest import LONGEST_FIRST

    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    assert [name for name in LONGEST_FIRST if not (ROOT / "tests" / name).is_file()] == []
