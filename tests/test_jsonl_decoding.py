"""JSONL lines decoded by jiter (`io.textfile._fast_json`) give exactly what `json.loads` with the duplicate-key rule
gives: the same values (types, floats to the bit, integers of any length), the same refusals with the same
messages; what jiter refuses (any repeated key, NaN, lone surrogates, ...) is read by `json.loads` as before."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest

from proctor.io import textfile
from proctor.io.textfile import _SLOW, _fast_json, iter_jsonl, jsonl_records


def _same(a: object, b: object) -> bool:
    """Equal values of the same types all the way down (floats by their bits: -0.0 is not 0.0, NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)  # type: ignore[arg-type]
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index, call-overload]
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))  # type: ignore[arg-type]
    return a == b


def _reference(text: str) -> object:
    """What the reader must give for one line: `json.loads` with the rule (a key given twice with different values
    refused, identical repeats merged), lone surrogates refused; `ValueError` for anything refused."""
    def unique(pairs):
        out = {}
        for key, value in pairs:
            if key in out and out[key] != value:
                raise ValueError("duplicate")
            out[key] = value
        return out
    value = json.loads(text, object_pairs_hook=unique)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate
    return value


def _both(tmp_path, monkeypatch, lines: list[bytes]) -> tuple[list, list]:
    """(values, refusal messages) of the lines read with the fast path and with `json.loads` alone."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    results = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(textfile, "_fast_json", lambda raw: _SLOW)
        skipped: list = []
        values = list(jsonl_records(path, skipped, on_error="skip"))
        results.append((values, [str(e) for e in skipped]))
    (fast_values, fast_refused), (slow_values, slow_refused) = results
    assert fast_refused == slow_refused
    assert len(fast_values) == len(slow_values)
    for (line_a, a), (line_b, b) in zip(fast_values, slow_values, strict=True):
        assert line_a == line_b and _same(a, b), (line_a, a, b)
    return fast_values, fast_refused


EDGES = [b'1', b'-0', b'-0.0', b'0.0', b'1e2', b'1E-7', b'1e-400', b'1e400', b'-1e400', b'4.9e-324',
         b'2.4703282292062327e-324', b'2.2250738585072011e-308', b'1.7976931348623157e308',
         b'1.7976931348623159e308', b'0.30000000000000004441', b'123456789012345678901234567890',
         b'-9007199254740993',
         b"1" * 4300, b"1" * 4301, b"-" + b"1" * 4301, b"1" * 4301 + b".5", b"0." + b"1" * 5000,
         b'NaN', b'Infinity', b'-Infinity', b'-NaN', b'nan', b'01', b'1.', b'.5', b'+1', b'0x10', b'1e',
         b'"\\ud800"', b'"\\udc00"', b'"\\ud83d\\ude00"', b'"\\ud800\\u0041"', b'"a\\ud800"', b'{"\\ud800": 1}',
         b'"\\uDBFF\\uDFFF"', b'"\\udfff\\ud800"', b'"\\u0000"', b'"\\/"', b'"\\x"', b'"a\tb"', b'"a\x01b"',
         b'"\x7f"', b'"\xc3\xa9"', b'\xef\xbb\xbf[1]', b'[1,]', b'{"a": 1,}', b'[1] x', b' [1]\t\r', b'[1]\x0c',
         b'[1 2]', b'{"a": 1, "a": 1}', b'{"a": 1, "a": 2}', b'{"a": {"b": [1]}, "a": {"b": [1]}}',
         b'{"a": 1.0, "a": 1}', b'{"a": [1, {"c": 2, "c": 2}], "a": [1, {"c": 2}]}', b'{"": 0}',
         b"[" * 300 + b"]" * 300, b"[" * 3000 + b"]" * 3000,
         b'true', b'True', b'null', b'', b'   ', b'\xc2\xa0', b'"\xe2\x80\xa8"', b'["\xe3\x80\x80"]']


def test_edge_lines_read_as_json_loads_reads_them(tmp_path, monkeypatch):
    values, refused = _both(tmp_path, monkeypatch, EDGES)
    assert len(refused) > 20 and len(values) > 20  # both kinds of line were there
    by_line = dict(values)
    assert struct.pack("<d", by_line[EDGES.index(b"-0.0") + 1]) == struct.pack("<d", -0.0)
    assert by_line[EDGES.index(b"NaN") + 1] != by_line[EDGES.index(b"NaN") + 1]  # read, by json.loads
    assert by_line[EDGES.index(b'{"a": 1, "a": 1}') + 1] == {"a": 1}  # an identical repeat is merged
    assert any("given twice with different values" in r for r in refused)
    assert any("lone UTF-16 surrogate" in r for r in refused)
    assert any("more than 4300 digits" in r for r in refused)


def test_the_fast_path_reads_plain_lines_and_leaves_the_rest():
    assert _fast_json(b'["q1", [{"paragraph_id": "p", "score": -0.0, "n": 12345678901234567890}]]\n') is not _SLOW
    for raw in (b'{"a": 1, "a": 1}', b"NaN", b'"\\ud800"', b"\xef\xbb\xbf[1]", b"", b'"\xff"', b"1" * 4301):
        assert _fast_json(raw) is _SLOW


def _number(r: random.Random) -> str:
    kind = r.randrange(5)
    if kind == 0:  # any finite double, as repr writes it
        x = struct.unpack("<d", r.getrandbits(64).to_bytes(8, "little"))[0]
        return repr(x) if math.isfinite(x) else "0"
    if kind == 1:  # long mantissas: rounding decided past the 17th digit
        digits = "".join(r.choice("0123456789") for _ in range(r.randrange(1, 40)))
        return f"{r.choice(['', '-'])}{r.randrange(10)}.{digits}e{r.choice(['', '+', '-'])}{r.randrange(0, 330)}"
    if kind == 2:
        return str(r.randrange(-10 ** r.randrange(1, 60), 10 ** r.randrange(1, 60)))
    if kind == 3:
        return r.choice(["-0.0", "0.0", "-0", "1E400", "-1e-400", "5e-324", "NaN", "-Infinity"])
    return f"{r.uniform(-1e6, 1e6)!r}"


def _string(r: random.Random) -> str:
    chars = []
    for _ in range(r.randrange(0, 12)):
        c = r.choice([r.randrange(0x20, 0x7F), r.randrange(0xA0, 0xD800), r.randrange(0xE000, 0x110000), 0x22, 0x5C,
                      r.randrange(0, 0x20), 0xD800 + r.randrange(0x800)])
        chars.append(chr(c))
    text = "".join(chars)
    lone = any(0xD800 <= ord(c) < 0xE000 for c in text)  # only as an escape: raw, its bytes are no UTF-8
    return json.dumps(text, ensure_ascii=lone or r.random() < 0.5)


def _value(r: random.Random, depth: int = 0) -> str:
    kind = r.randrange(6 if depth < 4 else 3)
    if kind == 0:
        return _number(r)
    if kind == 1:
        return _string(r)
    if kind == 2:
        return r.choice(["true", "false", "null"])
    if kind == 3:
        return "[" + ", ".join(_value(r, depth + 1) for _ in range(r.randrange(4))) + "]"
    pairs = []
    for _ in range(r.randrange(5)):
        key = r.choice(["a", "b", "id", "é", "\\u00e9", "\\ud83d\\ude00"])
        value = _value(r, depth + 1)
        pairs.append(f'"{key}": {value}')
        if r.random() < 0.15:  # a repeat: the same value or another
            pairs.append(f'"{key}": {value if r.random() < 0.5 else _value(r, depth + 1)}')
    return "{" + ", ".join(pairs) + "}"


@pytest.mark.parametrize("seed", range(3))
def test_random_lines_read_as_json_loads_reads_them(tmp_path, monkeypatch, seed):
    r = random.Random(seed)
    lines = [_value(r).encode("utf-8") for _ in range(1500)]
    for at in r.sample(range(len(lines)), 150):  # damaged lines: a byte dropped or changed
        line = bytearray(lines[at])
        ascii_at = [i for i, byte in enumerate(line) if byte < 0x80]  # (a cut character is no UTF-8: a refused file)
        if ascii_at:
            where = r.choice(ascii_at)
            if r.random() < 0.5:
                del line[where]
            else:
                line[where] = r.choice(b'"\\{}[],:0e.-')
        lines[at] = bytes(line)
    values, refused = _both(tmp_path, monkeypatch, lines)
    assert values and refused
    for line, value in values:  # and what was read is what json.loads gives
        assert _same(value, _reference(lines[line - 1].decode("utf-8")))
    fast = sum(_fast_json(line) is not _SLOW for line in lines)
    assert fast > len(lines) // 3  # the fast path did most of the reading


@pytest.mark.parametrize("line", [b'["a", "\xff"]', b'["\xed\xa0\x80"]', b'{"a": "\xc3"}', b"\xef\xbb[1]"])
def test_undecodable_lines_are_refused_as_before(tmp_path, monkeypatch, line):
    path = tmp_path / "u.jsonl"
    path.write_bytes(b'{"a": 1}\n' + line + b"\n")
    messages = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(textfile, "_fast_json", lambda raw: _SLOW)
        with pytest.raises(textfile.InputError, match=r"u\.jsonl:2: undecodable bytes") as err:
            list(iter_jsonl(path))
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_iter_jsonl_refuses_a_key_given_twice_differently(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": 1}\n{"a": [1, 2], "b": 0, "a": [1, 2]}\n{"x": {"a": 1, "a": 2}}\n')
    with pytest.raises(textfile.InputError, match=r"d\.jsonl:3: key 'a' given twice with different values"):
        list(iter_jsonl(path))
