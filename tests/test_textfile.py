"""Reading files: every failure names the file and the line."""

from __future__ import annotations

import gzip

import pytest

from proctor.errors import InputError
from proctor.io.textfile import iter_jsonl, parse_json_document, read_lines


def test_plain_and_gzip_read_the_same(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_text("one\ntwo\r\nthree")
    packed = tmp_path / "a.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert list(read_lines(plain)) == list(read_lines(packed)) == [(1, "one"), (2, "two"), (3, "three")]


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file") as err:
        list(read_lines(tmp_path / "nope.txt"))
    assert str(tmp_path / "nope.txt") in str(err.value)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"empty\.txt:1: file is empty"):
        list(read_lines(path))


def test_undecodable_bytes_name_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    with pytest.raises(InputError, match=r"bad\.txt:3: undecodable bytes .* column 5"):
        list(read_lines(path))


def test_truncated_gzip_names_a_line(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    data = gzip.compress(b"".join(b'{"id": %d, "text": "passage number %d"}\n' % (i, i) for i in range(5000)))
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.jsonl\.gz:\d+: truncated gzip stream") as err:
        list(read_lines(path))
    assert err.value.line > 1


def test_invalid_json_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": 2\n')
    with pytest.raises(InputError, match=r"x\.jsonl:2: invalid JSON"):
        list(iter_jsonl(path))


def test_invalid_json_document_names_the_line(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('{\n "1": "a",\n "2": "b"\n "3": "c"\n}\n')
    with pytest.raises(InputError, match=r"q\.json:4: invalid JSON"):
        parse_json_document(path)


NINE = b"".join(b"q1 Q0 p%d %d %d.0 run\n" % (i, i, 10 - i) for i in range(1, 10))  # 9 lines of 19 bytes
STORED = gzip.compress(NINE, compresslevel=0, mtime=0)  # one stored block: data byte k is file byte 15 + k
HEADER = 15

# (bytes of the file kept, the line named, how the stream stops)
CUTS = [
    (1, 1, "it stops before its first line"),
    (6, 1, "it stops before its first line"),
    (HEADER, 1, "it stops before its first line"),
    (HEADER + 10, 1, "it stops within line 1"),
    (HEADER + 19, 1, "it stops after line 1, without its end marker"),
    (HEADER + 19 * 4 + 3, 5, "it stops within line 5"),
    (HEADER + 19 * 9 - 1, 9, "it stops within line 9"),
    (HEADER + 19 * 9, 9, "it stops after line 9, without its end marker"),
    (len(STORED) - 1, 9, "it stops after line 9, without its end marker"),
]


@pytest.mark.parametrize("kept,line,how", CUTS, ids=[f"{c[0]} bytes" for c in CUTS])
def test_a_truncated_gzip_names_the_line_where_its_data_stops(cli, demo_store, tmp_path, kept, line, how):
    from conftest import store_dump

    path = tmp_path / "cut.run.gz"
    path.write_bytes(STORED[:kept])
    with pytest.raises(InputError) as err:
        list(read_lines(path))
    assert (err.value.line, err.value.message) == (line, f"truncated gzip stream ({how})")
    before = store_dump(demo_store)
    result = cli("import", "runs", path, "--store", demo_store)
    assert result.code == 2 and result.err == f"proctor: error: {path}:{line}: truncated gzip stream ({how})\n"
    assert store_dump(demo_store) == before


def test_a_truncated_second_member_counts_the_lines_of_the_first(tmp_path):
    path = tmp_path / "two.gz"
    second = gzip.compress(NINE, compresslevel=0, mtime=0)
    path.write_bytes(gzip.compress(b"a\nb\n", mtime=0) + second[:HEADER + 19 + 5])
    with pytest.raises(InputError) as err:
        list(read_lines(path))
    assert (err.value.line, err.value.message) == (4, "truncated gzip stream (it stops within line 4)")
