"""The one measure registry (`proctor.evaluate.measures`): EXAM-Cover, n-EXAM, nugget and citation scores are
measures with parameters like the measures over labels, parsed from and printed to strings (the canonical
string round-trips), their older spellings aliases, and a name, parameter or value it does not know refused
with the close matches, naming the measure."""

from __future__ import annotations

import json

import pytest

from demo_fixture import graded_demo_fixture, graded_demo_store_fixture  # noqa: F401  (fixtures)
from proctor import api
from proctor.errors import UsageError
from proctor.evaluate.measures import ScoreSpec, parse_any_measure, parse_measure

CANONICAL = ["Cover(rel=3)@20", "Cover(rel=1,missing=skip)@5", "NEXAM(rel=3,norm=pool)@20",
             "NEXAM(rel=2,norm=pool-per-query,missing=skip)@10", "NEXAM(rel=4,norm=gold,gold=strong)@3",
             "Nuggets(score=strict_vital)", "Nuggets(score=all,missing=skip)", "Citations(score=support_precision)",
             "P@20", "P(rel=3)@20", "nDCG@10", "RR", "AP", "Rprec", "R@100"]


@pytest.mark.parametrize("text", CANONICAL)
def test_a_parsed_measure_prints_its_canonical_string(text):
    spec = parse_any_measure(text)
    assert spec.name == text
    assert parse_any_measure(spec.name).name == text


@pytest.mark.parametrize(("alias", "canonical"), [
    ("EXAM-Cover@20", "Cover@20"),
    ("n-EXAM@20", "NEXAM(norm=pool)@20"),
    ("NEXAM(rel=3)@20", "NEXAM(rel=3,norm=pool)@20"),  # norm is always written: it says what divides
    ("Cover(rel=3,missing=zero)@20", "Cover(rel=3)@20"),  # a default is left out, as ir_measures does
    ("NEXAM(rel=3,gold=strong)@20", "NEXAM(rel=3,norm=gold,gold=strong)@20"),
    ("nuggets:strict_vital", "Nuggets(score=strict_vital)"),
    ("citations:citation_coverage", "Citations(score=citation_coverage)"),
    ("EXAM-Cover(tau=3,missing=zero)@20", "Cover(rel=3)@20"),  # what leaderboard files used to say
    ("n-EXAM-Cover(tau=3,missing=zero,normalize=pool-per-query)@20", "NEXAM(rel=3,norm=pool-per-query)@20"),
])
def test_older_spellings_are_aliases(alias, canonical):
    assert parse_any_measure(alias).name == canonical


def test_the_leaderboard_binds_what_the_string_leaves_out():
    cover = parse_any_measure("EXAM-Cover")
    assert isinstance(cover, ScoreSpec) and cover.rel is None and cover.needs() == "rel"
    assert cover.bound(rel=3).name == "Cover(rel=3)@20"  # the budget's one default: EvaluationOptions.budget
    assert cover.bound(rel=3, cutoff=5, missing="skip").name == "Cover(rel=3,missing=skip)@5"
    assert parse_any_measure("Cover(rel=3)@5").bound(rel=3, cutoff=20).name == "Cover(rel=3)@5"  # written wins
    with pytest.raises(UsageError) as refused:
        parse_any_measure("Cover(rel=3)@5").bound(rel=4)
    assert str(refused.value) == "Cover(rel=3)@5 names rel=3 but min_grade is 4"
    assert parse_any_measure("Nuggets(score=all)").bound(rel=4).name == "Nuggets(score=all)"  # takes no rel


@pytest.mark.parametrize(("text", "words"), [
    ("Cover(rell=3)@20", "measure 'Cover(rell=3)@20': Cover takes no parameter 'rell' (did you mean rel?); "
                         "it takes rel, missing"),
    ("Nuggets(score=strictvital)", "measure 'Nuggets(score=strictvital)': Nuggets score 'strictvital' is not one "
                                   "of all, vital, strict_all, strict_vital, weighted (did you mean strict_vital"),
    ("NEXAM(rel=3,norm=pooled)@20", "NEXAM norm 'pooled' is not one of pool, pool-per-query, gold (did you mean "
                                    "pool"),
    ("Cover(rel=6)@20", "Cover rel must be a grade 1..5 (got 6)"),
    ("Cover(rel=3,rel=4)@20", "rel is given twice"),
    ("Cover(rel)@20", "rel needs a value (rel=...)"),
    ("Nuggets(score=all)@5", "Nuggets takes no cutoff"),
    ("Cover(rel=3)@0", "the cutoff (the budget) must be at least 1"),
    ("NEXAM(rel=3,norm=pool,gold=strong)@20", "gold=strong and norm=pool are two different normalisers"),
    ("NEXAM(rel=3,norm=gold)@20", "norm=gold needs gold=RUN"),
    ("Cover(rel=3,norm=pool)@20", "Cover takes no parameter 'norm'"),
    ("Covr(rel=3)@20", "unknown measure 'Covr(rel=3)@20'; did you mean Cover(rel=3)@20?"),
    ("Nugets(score=all)", "did you mean Nuggets(score=all)?"),
])
def test_an_unknown_parameter_or_value_is_refused_with_the_close_matches(text, words):
    with pytest.raises(UsageError) as refused:
        parse_any_measure(text)
    assert words in str(refused.value)


def test_a_measure_over_labels_is_asked_for_where_only_one_will_do():
    assert parse_measure("P@20").name == "P@20"
    with pytest.raises(UsageError, match=r"reads grades, not labels \(EXAM-Cover\)"):
        parse_measure("Cover(rel=3)@20")


def test_the_measures_verb_lists_every_measure_with_its_parameters():
    listing = api.measures()
    rows = {row["name"]: row for row in listing.to_json()}
    assert {"P", "nDCG", "RR", "AP", "Rprec", "Cover", "NEXAM", "Nuggets", "Citations"} <= set(rows)
    assert rows["Cover"]["example"] == "Cover(rel=3)@20" and rows["Cover"]["cutoff"] is True
    assert rows["NEXAM"]["parameters"][1] == {"name": "norm", "default": "pool",
                                              "choices": ["pool", "pool-per-query", "gold"]}
    assert rows["Nuggets"]["example"] == "Nuggets(score=all)" and rows["Citations"]["cutoff"] is False
    for row in rows.values():
        assert listing.parse(row["example"]).name == row["example"]  # every example is a measure
    assert json.loads(listing.render("json")) == listing.to_json()
    assert "Cover(rel=3)@20\tcover\tEXAM-Cover" in listing.render()


def test_an_experiment_file_reads_its_measures_through_the_registry(tmp_path, cli):
    """`measures` of an experiment file take the measures read from grades, and refuse unknown names at load."""
    import proctor
    from proctor.demo.write import write_collection

    write_collection(tmp_path / "collection")
    experiment = tmp_path / "e.toml"
    text = """
[inputs]
queries = "collection/queries.tsv"
corpus = "collection/corpus.jsonl"
qrels = "collection/qrels.txt"
runs = "collection/runs"
banks = "collection/bank.jsonl"

[[grade]]
name = "recorded"
method = "self-rating"
llm = "replay:collection/grades.jsonl"

[evaluate]
measures = ["P@3", "Cover(rel=4)@2", "EXAM-Cover@3"]
min_grade = [4]
cover_budget = [2]
leaderboards = ["tsv"]
"""
    experiment.write_text(text.replace('"P@3", ', '"P@3", "Covr(rel=4)@2", '))
    refused = cli("run", experiment)
    assert refused.code == 2 and "evaluate.measures: unknown measure 'Covr(rel=4)@2'; did you mean Cover" in refused.err
    experiment.write_text(text.replace('"P@3", ', '"P@3", "Nuggets(score=all)", '))  # no [[grade]] makes its grades
    refused = cli("run", experiment)  # refused at load, naming the line, before any import or grading
    assert refused.code == 2 and "e.toml:15: evaluate.measures: 'Nuggets(score=all)' scores generated answers" \
        in refused.err, refused.err
    assert not (tmp_path / "e-out").exists()
    experiment.write_text(text)
    proctor.run_experiment(experiment)
    boards = tmp_path / "e-out" / "leaderboards"
    own = (boards / "recorded.Cover(rel=4)@2.tsv").read_text()
    assert own == (boards / "recorded.cover.t4.k2.tsv").read_text()  # the same measure, two spellings
    assert {line.split("\t")[4] for line in own.splitlines()[1:]} == {"Cover(rel=4)@2"}
    bound = (boards / "recorded.EXAM-Cover@3.t4.tsv").read_text()  # no rel=: scored at every min_grade
    assert {line.split("\t")[4] for line in bound.splitlines()[1:]} == {"Cover(rel=4)@3"}


def test_autojudge_measure_names_are_read_through_the_registry(tmp_path, peer_nltk):
    """The AutoJudge judge's `EXAM-Cover`/`n-EXAM` (bound to its settings' min_grade and budget) are the
    registry's Cover/NEXAM: same scores, same descriptions in `measures.yml`."""
    pytest.importorskip("autojudge_base")
    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)  # what autojudge-base reads at import
    from conftest import seed_demo
    from proctor.autojudge.convert import describe_measure, proctor_board
    from proctor.autojudge.settings import JudgeSettings
    from proctor.demo.write import write_collection

    path = seed_demo(tmp_path)
    store = api.open_store(path)
    try:
        api.grade(store, "self-rating", f"replay:{write_collection(tmp_path / 'again')['exampp']}", progress=False)
        grade_set, settings = store.grades.grade_sets()[0], JudgeSettings(min_grade=4, budget=2)
        runs = ["strong", "middling", "weak", "partial"]
        for old, new in (("EXAM-Cover", "Cover(rel=4)@2"), ("n-EXAM", "NEXAM(rel=4,norm=pool)@2")):
            a, b = (proctor_board(store, grade_set, settings, name, runs) for name in (old, new))
            assert a.scores() == b.scores() and a.description["measure_id"] == b.description["measure_id"] == new
            assert describe_measure(old, a, settings) == describe_measure(new, b, settings)
        assert describe_measure("n-EXAM", a, settings).startswith(
            "n-EXAM@2: EXAM-Cover normalised by what the whole graded pool covers, a ratio of sums")
    finally:
        store.close()


def test_a_leaderboard_refuses_what_its_measures_do_not_take(graded_demo, cli):
    """A `--budget` asked of a mode without one is refused (a measure names its own cutoff), never dropped; a
    `missing` the API does not know is refused, not read as skip; the store is unchanged."""
    from conftest import store_dump

    before = store_dump(graded_demo)
    for args, words in ((["--measure", "Cover(rel=3)", "--budget", "1"], "--budget applies to --metric cover only"),
                        (["--measure", "P@3", "--min-grade", "3", "--budget", "5"], "--budget applies to"),
                        (["--metric", "nuggets", "--score", "all", "--budget", "5"], "takes no --budget")):
        refused = cli("leaderboard", "--store", graded_demo, *args)
        assert refused.code == 2 and words in refused.err and "Traceback" not in refused.err, refused.err
    store = api.open_store(graded_demo)
    try:
        with pytest.raises(UsageError, match="missing 'Zero': choose one of zero, skip"):
            api.leaderboard(store, "Cover(rel=3)@20", missing="Zero")
    finally:
        store.close()
    assert store_dump(graded_demo) == before
