"""When two ids or texts are the same: an id with an invisible or control character (a zero-width space, a word
joiner, a soft hyphen, a direction override) is refused where it is read, naming the file and line, so no id
looks like another; two texts that read the same but differ in code points (NFC 'é' vs NFD 'e' + U+0301) are
reported with the code points that differ. Every refusal leaves the store's dump as it was."""

from __future__ import annotations

import json
import unicodedata

import pytest

from conftest import store_dump
from proctor.io.fields import as_id

NFC = unicodedata.normalize("NFC", "café au lait")
NFD = unicodedata.normalize("NFD", "café au lait")

INVISIBLE_IDS = [
    ("queries", "q.tsv", "q1\tbees\nq\u200b9\thoney\n", 2, "U+200B"),  # zero-width space
    ("corpus", "c.jsonl", '{"id": "d1", "text": "a"}\n{"id": "d\\u2060x", "text": "b"}\n', 2, "U+2060"),  # joiner
    ("qrels", "j.txt", "q1 0 d101 1\nq1 0 d10\u00ad2 1\n", 2, "U+00AD"),  # soft hyphen
    ("runs", "r.run", "q1 Q0 d101 1 9.0 run\u202e\n", 1, "U+202E"),  # right-to-left override in the run name
    ("corpus", "c.tsv", "d7\u200d\ttext\n", 1, "U+200D"),  # zero-width joiner, TSV
    ("queries", "q.tsv", "\ufeffq1\tbees\nq\ufeff2\tmore\n", 2, "U+FEFF"),  # a BOM inside an id (a leading one is fine)
    ("queries", "q.tsv", "q\x01\tbees\n", 1, "U+0001"),  # a control character (refused before too)
]
"""(import kind, file name, content, the line refused, the code point named)."""


@pytest.mark.parametrize(("kind", "name", "content", "line", "point"), INVISIBLE_IDS,
                         ids=[f"{c[0]} {c[4]}" for c in INVISIBLE_IDS])
def test_an_id_with_an_invisible_character_is_refused_with_file_and_line(demo_store, cli, kind, name, content, line,
                                                                         point):
    path = demo_store.parent / name
    path.write_text(content, encoding="utf-8")
    before = store_dump(demo_store)
    result = cli("import", kind, path, "--store", demo_store)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert f"{path}:{line}:" in result.err and point in result.err, result.err
    assert store_dump(demo_store) == before


def test_a_bank_item_id_with_a_zero_width_space_is_refused(demo_store, cli):
    bank = demo_store.parent / "b.jsonl"
    bank.write_text(json.dumps({"query_id": "q1", "items": [{"question_id": "q1/\u200bx", "question_text": "Why?"}]})
                    + "\n")
    before = store_dump(demo_store)
    result = cli("import", "bank", bank, "--store", demo_store)
    assert result.code == 2 and f"{bank}:1:" in result.err and "U+200B" in result.err, result.err
    assert store_dump(demo_store) == before


def test_visible_ids_stay_ids():
    for value in ("q1", "tqa2:L_0002/T_0016/abc", "café", NFD.replace(" ", "_"), "日本語", "Ω-1", "a\u0301"):
        assert as_id(value, "query") == value


CONFLICTS = [
    ("corpus", "c.jsonl", lambda text: json.dumps({"id": "d101", "text": text}) + "\n", "passage"),
    ("queries", "q.tsv", lambda text: f"q1\t{text}\n", "query"),
]


@pytest.mark.parametrize(("kind", "name", "line", "what"), CONFLICTS, ids=[c[0] for c in CONFLICTS])
def test_a_text_conflict_in_another_normalization_shows_the_code_points(demo_store, cli, kind, name, line, what):
    path = demo_store.parent / name
    path.write_text(line(NFC), encoding="utf-8")
    assert cli("import", kind, path, "--store", demo_store, "--replace").code == 0
    path.write_text(line(NFD), encoding="utf-8")
    before = store_dump(demo_store)
    result = cli("import", kind, path, "--store", demo_store)
    assert result.code == 2 and f"{path}:1:" in result.err, result.err
    assert "U+00E9 vs U+0065 U+0301" in result.err and "another Unicode normalization" in result.err, result.err
    assert store_dump(demo_store) == before


def test_a_passage_given_twice_in_one_file_shows_the_code_points(demo_store, cli):
    path = demo_store.parent / "c.jsonl"
    path.write_text(json.dumps({"id": "d9", "text": NFC}) + "\n" + json.dumps({"id": "d9", "text": NFD}) + "\n")
    before = store_dump(demo_store)
    result = cli("import", "corpus", path, "--store", demo_store)
    assert result.code == 2 and f"{path}:2:" in result.err and "U+00E9 vs U+0065 U+0301" in result.err, result.err
    assert store_dump(demo_store) == before


def test_a_bank_question_in_another_normalization_shows_the_code_points(demo_store, cli):
    bank = demo_store.parent / "b.jsonl"
    for name, text in (("one", NFC), ("two", NFD)):
        bank.write_text(json.dumps({"query_id": "q1", "items": [{"question_id": "q1/x", "question_text": text}]})
                        + "\n")
        result = cli("import", "bank", bank, "--store", demo_store, "--name", name)
        if name == "one":
            assert result.code == 0, result.err
            before = store_dump(demo_store)
    assert result.code == 2 and "U+00E9 vs U+0065 U+0301" in result.err, result.err
    assert store_dump(demo_store) == before


DIFFERENCES = [
    (NFC, NFD, "they differ at character 4: U+00E9 vs U+0065 U+0301 (the same text in another Unicode normalization)"),
    ("bees", "bees\u200b", "they differ at character 5: nothing vs U+200B"),
    ("a b", "a\u00a0b", "they differ at character 2: U+0020 vs U+00A0"),
    ("x" * 20, "y" * 20, "they differ at character 1: " + " ".join(["U+0078"] * 8) + " … vs "
     + " ".join(["U+0079"] * 8) + " …"),
]


@pytest.mark.parametrize(("old", "new", "said"), DIFFERENCES)
def test_text_difference_names_the_differing_code_points(old, new, said):
    from proctor.errors import text_difference

    assert text_difference(old, new) == said


def test_every_format_character_of_unicode_is_refused_in_an_id():
    """The invisible characters are written out in `proctor.io.fields`; Python's Unicode database checks the list
    (a newer Unicode may add format characters: then this test names them)."""
    import sys

    missing = []
    for point in range(sys.maxunicode + 1):
        if unicodedata.category(chr(point)) == "Cf":
            try:
                as_id(f"q{chr(point)}1", "query")
            except ValueError:
                continue
            missing.append(f"U+{point:04X}")
    assert missing == []
