"""Borderline input to `proctor import`, `leaderboard`, `correlate` and `compare`: the same content in another
coat (gzipped, CRLF, exported and re-imported) changes nothing at all, an empty passage text is refused (it would
be graded as the passage), and the messages and counts say exactly what they count."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conftest import seed_demo, store_dump


def _gz(path: Path, target: Path) -> Path:
    target.write_bytes(gzip.compress(path.read_bytes()))
    return target


def _crlf(path: Path, target: Path) -> Path:
    target.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    return target


COATS = {"gzip": _gz, "crlf": _crlf}
FILES = {"queries": "queries.tsv", "corpus": "corpus.jsonl", "qrels": "qrels.txt", "bank": "bank.jsonl",
         "runs": "runs/weak.run"}


@pytest.mark.parametrize("coat", sorted(COATS))
@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_same_content_in_another_coat_changes_nothing(cli, tmp_path, kind, coat):
    """A gzipped or CRLF copy of an imported file: 'nothing changed', and the dump is the same."""
    store = seed_demo(tmp_path)
    source = tmp_path / "collection" / FILES[kind]
    copy = COATS[coat](source, tmp_path / f"copy-{source.name}")
    before = store_dump(store)
    extra = ["--name", "bank"] if kind == "bank" else []
    result = cli("import", kind, str(copy), "--store", str(store), *extra)
    assert result.code == 0 and "already imported: nothing changed" in result.err, result.err
    assert store_dump(store) == before


def test_export_then_import_is_a_no_op(cli, tmp_path):
    """Runs, judgments and the exam_pp file exported from a store import back into it changing nothing."""
    store = seed_demo(tmp_path)
    assert cli("import", "exampp", str(tmp_path / "collection" / "grades.jsonl"), "--store", str(store)).code == 0
    out = tmp_path / "out"
    assert cli("export", "runs", "--store", str(store), "--out", str(out / "runs")).code == 0
    assert cli("export", "judgments", "--store", str(store), "--out", str(out / "j.qrels")).code == 0
    assert cli("export", "exampp", "--store", str(store), "--out", str(out / "all.jsonl.gz")).code == 0
    before = store_dump(store)
    for kind, files in (("runs", sorted((out / "runs").iterdir())), ("qrels", [out / "j.qrels"]),
                        ("exampp", [out / "all.jsonl.gz"])):
        result = cli("import", kind, *map(str, files), "--store", str(store))
        assert result.code == 0 and result.err.count("nothing changed") == len(files), result.err
    assert store_dump(store) == before


def _corpus_line(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps({"id": "d999", "text": text}) + "\n")
    return path


def _corpus_tsv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "more.tsv"
    path.write_text(f"d999\t{text}\n")
    return path


def _exampp_line(tmp_path: Path, text: str) -> Path:
    line = json.loads((tmp_path / "collection" / "grades.jsonl").read_text().splitlines()[0])
    line[1][0].update(paragraph_id="d999", text=text)
    path = tmp_path / "more-exampp.jsonl"
    path.write_text(json.dumps(line) + "\n")
    return path


@pytest.mark.parametrize(("kind", "write"), [("corpus", _corpus_line), ("corpus", _corpus_tsv),
                                             ("exampp", _exampp_line)])
@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_passage_text_is_refused(cli, tmp_path, kind, write, text):
    """A passage with an empty text would be graded as if it were the passage: refused, FILE:1, store unchanged."""
    store = seed_demo(tmp_path)
    path = write(tmp_path, text)
    before = store_dump(store)
    result = cli("import", kind, str(path), "--store", str(store))
    assert result.code == 2 and f"{path}:1:" in result.err and "the text is empty" in result.err, result.err
    assert "Traceback" not in result.err
    assert store_dump(store) == before


def test_the_unjudgeable_note_counts_the_store_not_the_file(cli, tmp_path):
    """A run file that ranks no textless passage is not said to rank one: the note counts the store's runs."""
    store = seed_demo(tmp_path, runs=["weak"])
    (tmp_path / "unknown.run").write_text("q1 Q0 d999 1 9.0 unknown\n")
    assert cli("import", "runs", str(tmp_path / "unknown.run"), "--store", str(store)).code == 0
    result = cli("import", "runs", str(tmp_path / "collection" / "runs" / "strong.run"), "--store", str(store))
    assert result.code == 0 and "the store's runs now rank 1 (query, passage) pairs" in result.err, result.err


def test_a_bank_replace_counts_the_questions_it_replaced(cli, tmp_path):
    """`import bank --replace` says how many question texts it replaced, beside the grades that became stale."""
    store = seed_demo(tmp_path)
    collection = tmp_path / "collection"
    assert cli("import", "exampp", str(collection / "grades.jsonl"), "--store", str(store)).code == 0
    edited = tmp_path / "edited.jsonl"
    edited.write_text((collection / "bank.jsonl").read_text().replace("reduce the water", "lower the water"))
    result = cli("import", "bank", str(edited), "--name", "other", "--store", str(store), "--replace")
    assert result.code == 0 and "replaced 1 questions, 6 stale grades" in result.err, result.err


def test_a_coverage_warning_without_the_number_of_queries_never_says_none(cli, tmp_path):
    """A per-topic leaderboard does not say how many queries there are: the warning leaves the count out."""
    store = seed_demo(tmp_path)
    assert cli("import", "exampp", str(tmp_path / "collection" / "grades.jsonl"), "--store", str(store)).code == 0
    official = cli("leaderboard", "--store", str(store), "--qrels", "official", "--measure", "nDCG@10")
    trec = cli("leaderboard", "--store", str(store), "--measure", "nDCG@10", "--format", "trec")
    (tmp_path / "official.tsv").write_text(official.out)
    (tmp_path / "lb.trec").write_text(trec.out)
    result = cli("correlate", str(tmp_path / "lb.trec"), "--official", str(tmp_path / "official.tsv"),
                 "--bootstrap", "0")
    assert result.code == 0 and "rests on 4 queries (fewer than 10)" in result.err, result.err
    assert "None" not in result.err


@pytest.mark.parametrize(("kind", "edit", "stale"), [
    ("qrels", lambda text: text.replace("q1 0 d103 1", "q1 0 d103 2"), False),
    ("queries", lambda text: text.replace("how do bees", "how bees"), True),
    ("corpus", lambda text: text.replace("late summer", "early summer"), True),
])
def test_a_refusal_speaks_of_stale_grades_only_where_a_text_is_replaced(cli, tmp_path, kind, edit, stale):
    """A judgment is no text that grades are made from: its refusal does not promise stale grades."""
    store = seed_demo(tmp_path)
    source = tmp_path / "collection" / {"qrels": "qrels.txt", "queries": "queries.tsv", "corpus": "corpus.jsonl"}[kind]
    changed = tmp_path / f"changed-{source.name}"
    changed.write_text(edit(source.read_text()))
    result = cli("import", kind, str(changed), "--store", str(store))
    assert result.code == 2 and "pass --replace" in result.err, result.err
    assert ("become stale" in result.err) == stale


@pytest.mark.parametrize("command", ["correlate", "compare"])
@pytest.mark.parametrize("rows", ["a\tP_5\tq1\t0.5\na\tP_5\tq2\t0.7\nb\tP_5\tq1\t0.2\n",
                                  "a\tq1\tP_5\t0.5\nb\tq1\tP_5\t0.2\n"])
def test_per_topic_rows_without_all_rows_are_named_as_such(cli, tmp_path, command, rows):
    """A trec/ir-measures file of per-topic rows only is read as one, and refused for its missing `all` rows
    (not misread as a `system<TAB>score` TSV whose 'score' is a measure name)."""
    (tmp_path / "topics.trec").write_text(rows)
    (tmp_path / "official.tsv").write_text("a\t0.9\nb\t0.1\n")
    extra = ["--official", str(tmp_path / "official.tsv")] if command == "correlate" else []
    result = cli(command, str(tmp_path / "topics.trec"), *extra)
    assert result.code == 2 and f"{tmp_path / 'topics.trec'}:1:" in result.err, result.err
    assert "`all` rows" in result.err and "is not a number" not in result.err


def test_a_qrels_file_leaderboard_counts_the_files_judged_queries(cli, tmp_path):
    """`--qrels FILE`: "with judgments" counts the queries the file judges, not the store's imported ones."""
    store = seed_demo(tmp_path)
    (tmp_path / "two.qrels").write_text("q1 0 d101 1\nq2 0 d201 1\n")
    result = cli("leaderboard", "--store", str(store), "--qrels", str(tmp_path / "two.qrels"), "--measure", "P@3",
                 "--format", "json")
    assert result.code == 0, result.err
    queries = json.loads(result.out)["coverage"]["queries"]
    assert queries["with_judgments"] == 2 and queries["in_store"] == 4
    official = cli("leaderboard", "--store", str(store), "--qrels", "official", "--measure", "P@3", "--format", "json")
    assert json.loads(official.out)["coverage"]["queries"]["with_judgments"] == 4


@pytest.mark.parametrize("wanted", [None, "P@9"])
def test_an_official_file_of_several_measures_names_the_official_option(cli, tmp_path, wanted):
    """The official file's measure is chosen with --official-measure: the message names that option."""
    (tmp_path / "lb.tsv").write_text("a\t0.9\nb\t0.1\n")
    (tmp_path / "official.tsv").write_text("system\tscore\tstderr\tn_queries\tmeasure\tlabels\n"
                                           "a\t0.5\t0\t2\tnDCG@10\tofficial\na\t0.4\t0\t2\tP@3\tofficial\n"
                                           "b\t0.2\t0\t2\tnDCG@10\tofficial\nb\t0.1\t0\t2\tP@3\tofficial\n")
    extra = ["--official-measure", wanted] if wanted else []
    result = cli("correlate", str(tmp_path / "lb.tsv"), "--official", str(tmp_path / "official.tsv"), *extra)
    assert result.code == 2 and "--official-measure" in result.err, result.err
    assert "--measure" not in result.err.replace("--official-measure", "")


def _replace_query(collection: Path, tmp_path: Path) -> list[str]:
    (tmp_path / "queries.tsv").write_text("q1\thow bees make honey\n")
    return ["queries", str(tmp_path / "queries.tsv")]


def _replace_question(collection: Path, tmp_path: Path) -> list[str]:
    edited = tmp_path / "bank.jsonl"
    edited.write_text((collection / "bank.jsonl").read_text().replace("reduce the water", "lower the water"))
    return ["bank", str(edited), "--name", "other"]  # under its own name a changed item is a new version


@pytest.mark.parametrize("replace", [_replace_query, _replace_question], ids=["query text", "question text"])
def test_stale_grades_are_not_brought_back_by_an_older_exampp_file(cli, tmp_path, replace):
    """The exam_pp file the grades came from, imported again after their text was replaced, would make them
    count again: refused (FILE:LINE, store unchanged); --replace imports them, says so and un-stales them."""
    store = seed_demo(tmp_path)
    grades = tmp_path / "collection" / "grades.jsonl"
    assert cli("import", "exampp", str(grades), "--store", str(store)).code == 0
    replaced = cli("import", *replace(tmp_path / "collection", tmp_path), "--store", str(store), "--replace")
    assert replaced.code == 0 and "stale grades" in replaced.err, replaced.err
    stale = sum(json.loads(cli("info", "--store", str(store), "--format", "json").out)["stale_grades"]
                ["2b31198db5"].values())
    before = store_dump(store)
    result = cli("import", "exampp", str(grades), "--store", str(store))
    assert result.code == 2 and f"{grades}:1:" in result.err and "set aside as stale" in result.err, result.err
    assert store_dump(store) == before
    forced = cli("import", "exampp", str(grades), "--store", str(store), "--replace")
    assert forced.code == 0 and f"replaced {stale} stale grades made valid again" in forced.err, forced.err
    assert json.loads(cli("info", "--store", str(store), "--format", "json").out)["stale_grades"] == {}


@pytest.mark.parametrize("kind", ["exampp", "runs", "judgments"])
def test_exporting_an_empty_store_is_refused_and_writes_nothing(cli, tmp_path, kind):
    """A store with queries only: every export says there is nothing to export (an empty exam_pp file would be
    refused by `import` anyway) and leaves no file behind."""
    store = tmp_path / "s.db"
    (tmp_path / "q.tsv").write_text("q1\thow do bees make honey\n")
    assert cli("import", "queries", str(tmp_path / "q.tsv"), "--store", str(store)).code == 0
    out = tmp_path / ("out.jsonl" if kind == "exampp" else "out")
    result = cli("export", kind, "--store", str(store), "--out", str(out))
    assert result.code == 2 and "no " in result.err and "Traceback" not in result.err, result.err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["q.tsv", "s.db"]


@pytest.mark.parametrize(("kind", "name", "said"), [
    ("qrels", "qrels.txt", "skipped 18 lines of unknown queries"),
    ("exampp", "grades.jsonl", "skipped 3 lines of unknown queries"),
    ("bank", "bank.jsonl", "skipped 9 bank items of unknown queries"),
])
def test_skipped_unknown_queries_are_counted_in_what_was_skipped(cli, tmp_path, kind, name, said):
    """--skip-unknown-queries counts lines, except in a bank, whose lines hold several items: it counts items."""
    from proctor.demo.write import write_collection

    collection = write_collection(tmp_path / "collection")["queries"].parent
    store = tmp_path / "s.db"
    (tmp_path / "q1.tsv").write_text("q1\thow do bees make honey\n")
    assert cli("import", "queries", str(tmp_path / "q1.tsv"), "--store", str(store)).code == 0
    result = cli("import", kind, str(collection / name), "--store", str(store), "--skip-unknown-queries")
    assert result.code == 0 and said in result.err, result.err


def test_two_files_of_one_command_that_contradict_name_the_earlier_file_as_such(cli, tmp_path):
    """The first file of the same command is not yet in the store: the refusal says it was given earlier in
    this command (and nothing of either file is kept)."""
    store = seed_demo(tmp_path)
    (tmp_path / "a.tsv").write_text("q5\tnew one\n")
    (tmp_path / "b.tsv").write_text("q5\tnew two\n")
    before = store_dump(store)
    result = cli("import", "queries", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv"), "--store", str(store))
    assert result.code == 2 and f"{tmp_path / 'b.tsv'}:1:" in result.err, result.err
    assert "a file given earlier in this same command" in result.err
    assert store_dump(store) == before
    assert cli("import", "queries", str(tmp_path / "a.tsv"), "--store", str(store)).code == 0
    later = cli("import", "queries", str(tmp_path / "b.tsv"), "--store", str(store))
    assert later.code == 2 and "this same command" not in later.err
