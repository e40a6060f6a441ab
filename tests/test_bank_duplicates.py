"""Bank files: an item repeated identically inside one line is merged with a note; a repeat with other
content, or on another line, stays an error naming file and line."""

from __future__ import annotations

import json

import pytest

from conftest import DL19, require_shared
from proctor.errors import InputError
from proctor.io.banks import read_bank

NUGGET = {"query_id": "q1", "nugget_id": "q1/n1", "nugget_text": "Active margins are"}


def _write(tmp_path, *lines: list[dict]):
    path = tmp_path / "bank.jsonl"
    path.write_text("".join(json.dumps({"query_id": "q1", "query_text": "margins", "items": items}) + "\n"
                            for items in lines))
    return path


def test_identical_repeats_in_one_line_are_merged_with_a_note(tmp_path):
    other = {**NUGGET, "nugget_id": "q1/n2", "nugget_text": "Plates meet"}
    bank = read_bank(_write(tmp_path, [NUGGET, other, NUGGET, NUGGET]))
    assert [q["question_id"] for q in bank.questions] == ["q1/n1", "q1/n2"]
    assert bank.notes == [f"{tmp_path / 'bank.jsonl'}:1: id 'q1/n1' appears 3 times with identical content; "
                          "kept once"]


@pytest.mark.parametrize("lines, message", [
    ([[NUGGET, {**NUGGET, "nugget_text": "Passive margins are"}]], r"bank\.jsonl:1: id 'q1/n1' given twice in this "
     "line with different content"),
    ([[NUGGET], [NUGGET]], r"bank\.jsonl:2: id 'q1/n1' also on line 1"),
])
def test_conflicting_or_cross_line_repeats_stay_errors(tmp_path, lines, message):
    with pytest.raises(InputError, match=message):
        read_bank(_write(tmp_path, *lines))


def test_the_shared_dl19_nugget_file_imports(tmp_path, cli):
    path = require_shared(DL19 / "dl19-nuggets.jsonl.gz")
    result = cli("import", "bank", path, "--store", tmp_path / "s.db")
    assert result.code == 0, result.err
    assert "appears 3 times with identical content; kept once" in result.err
    assert "43 queries" in result.err
