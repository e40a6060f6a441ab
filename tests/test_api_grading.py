"""The door of `grade`, `bank`, `verify`, `import`, `export` and `run`: the API refuses every request the command
refuses, with the same words (the API names parameters where the shell names flags), before any work and
without changing the store; the commands' results come back typed."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import seed_demo, store_dump
from proctor import api
from proctor.api import commands
from proctor.cli import build_parser
from proctor.errors import UsageError


def _flags(*command: str) -> dict[str, str]:
    """Parameter -> flag of a (sub)command, as the CLI spells an API error."""
    parser = build_parser()
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return {**parser.get_default("flags"), **(parser.get_default("param_flags") or {})}


GRADE = ("grade", "--store")
# (the command's arguments after --store S, the API call on the store, the command's message)
GRADE_CASES: list[tuple[tuple[str, ...], Callable[[Any, Path], Any], str]] = [
    (("--method", "self-rated", "--llm", "openai:m"), lambda s, d: api.grade(s, "self-rated", "openai:m"),
     "--method 'self-rated': unknown method; choose one of "),
    (("--method", "four-prompts", "--llm", "openai:m", "--sum-thresholds", "5,7,10"),
     lambda s, d: api.grade(s, "four-prompts", "openai:m", thresholds=(5, 7, 10)),
     "--sum-thresholds takes three decreasing integers, e.g. 10,7,5"),
    (("--method", "four-prompts", "--llm", "openai:m", "--sum-thresholds", "a,b"),
     lambda s, d: api.grade(s, "four-prompts", "openai:m", thresholds="a,b"),
     "--sum-thresholds takes three decreasing integers, e.g. 10,7,5"),
    (("--method", "self-rating"), lambda s, d: api.grade(s, "self-rating"),
     "--llm SPEC is required, e.g. openai:MODEL, hf:PATH, replay:FILE, embed:minilm"),
    (("--method", "embedding", "--llm", "openai:m"), lambda s, d: api.grade(s, "embedding", "openai:m"),
     "--method embedding goes with --llm embed:..., and embed backends only with it"),
    (("--method", "self-rating", "--llm", "embed:minilm"), lambda s, d: api.grade(s, "self-rating", "embed:minilm"),
     "--method embedding goes with --llm embed:..., and embed backends only with it"),
    (("--method", "self-rating", "--llm", "openai:m", "--verify", "llm"),
     lambda s, d: api.grade(s, "self-rating", "openai:m", verify="llm"), "--verify llm applies to --method qa only"),
    (("--method", "qa", "--llm", "hf-qa:/nowhere", "--verify", "llm"),
     lambda s, d: api.grade(s, "qa", "hf-qa:/nowhere", verify="llm"),
     "--llm hf-qa:PATH extracts answer spans: it grades --method qa, verified against the answer key "
     "(--verify edit-distance), not --verify llm or other methods"),
    (("--method", "self-rating", "--llm", "hf-qa:/nowhere"), lambda s, d: api.grade(s, "self-rating", "hf-qa:/nowhere"),
     "--llm hf-qa:PATH extracts answer spans: it grades --method qa, verified against the answer key "
     "(--verify edit-distance), not --verify llm or other methods"),
    (("--method", "self-rating", "--llm", "openai:m", "--prefilter", "embed:minilm"),
     lambda s, d: api.grade(s, "self-rating", "openai:m", prefilter="embed:minilm"),
     "--prefilter SPEC and --prefilter-below S go together"),
    (("--method", "self-rating", "--llm", "openai:m", "--prefilter-below", "0.5"),
     lambda s, d: api.grade(s, "self-rating", "openai:m", prefilter_below=0.5),
     "--prefilter SPEC and --prefilter-below S go together"),
    (("--method", "self-rating", "--llm", "openai:m", "--batch-export", "{d}/shards", "--batch-import", "{d}/r.jsonl"),
     lambda s, d: commands.run_grade_job(s, commands.grade_job("self-rating", "openai:m", batch_export=d / "shards",
                                                     batch_import=[d / "r.jsonl"])),
     "--batch-export and --batch-import: one at a time"),
    (("--method", "self-rating", "--llm", "openai-batch:m", "--batch-import", "{d}/r.jsonl"),
     lambda s, d: commands.grade_job("self-rating", "openai-batch:m", batch_import=[d / "r.jsonl"]),
     "--llm openai-batch:MODEL imports its own results: no --batch-import"),
]


@pytest.fixture
def demo(tmp_path) -> Path:
    return seed_demo(tmp_path)


def _refused_alike(cli, demo: Path, args, call, message: str, command: tuple[str, ...]) -> UsageError:
    """Run the command (`{d}` its folder, `{s}` the store) and `call(store, folder)`: both refuse, with the same
    words (`message` the command's), and leave the store unchanged; returns the API's refusal."""
    folder = demo.parent
    before = store_dump(demo)
    result = cli(*(a.replace("{d}", str(folder)).replace("{s}", str(demo)) for a in args))
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err, result.err
    assert result.err.startswith(f"proctor: error: {message}")
    store = api.open_store(demo)
    try:
        with pytest.raises(UsageError) as refused:
            call(store, folder)
    finally:
        store.close()
    assert refused.value.spelled(_flags(*command)) == result.err.removeprefix("proctor: error: ").rstrip("\n")
    assert store_dump(demo) == before
    return refused.value


@pytest.mark.parametrize("args,call,message", GRADE_CASES, ids=[" ".join(c[0][1:4]) + f" #{i}"
                                                                for i, c in enumerate(GRADE_CASES)])
def test_grade_refuses_in_the_api_what_the_command_refuses_with_the_same_words(cli, demo, args, call, message):
    refused = _refused_alike(cli, demo, (*GRADE, str(demo), *args), call, message, ("grade",))
    assert "--" not in str(refused).split(":")[0]  # the API names parameters, not flags
    assert not (demo.parent / "shards").exists()


def test_the_api_names_parameters_where_the_command_names_flags():
    with pytest.raises(UsageError, match=r"^thresholds takes three decreasing integers, e\.g\. 10,7,5$"):
        commands.grade_request("four-prompts", "openai:m", thresholds=(1, 2, 3))
    with pytest.raises(UsageError, match=r"^prefilter SPEC and prefilter_below S go together$"):
        commands.grade_request("self-rating", "openai:m", prefilter="embed:minilm")
    with pytest.raises(UsageError, match=r"^batch_export and batch_import: one at a time$"):
        commands.grade_job("self-rating", "openai:m", batch_export="out", batch_import=["r.jsonl"])
    with pytest.raises(UsageError, match=r"^aggregate 'mean': choose one of prompt, sum, naive-bayes$"):
        commands.grade_request("four-prompts", "openai:m", aggregate="mean")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^verify 'exact': choose one of edit-distance, llm$"):
        commands.grade_request("qa", "openai:m", verify="exact")


def test_the_option_models_are_the_grading_apis_parameters(tmp_path):
    """What `proctor grade` builds from its flags (the models) and what a notebook names by keyword make the same
    request; a keyword given beside a model wins over the model's field."""
    from proctor.options.grading import BatchOptions, EngineOptions, GradingOptions, ResponseCacheOptions

    grading = GradingOptions(llm="openai:m", depth=7, bank="b", aggregate="sum", sum_thresholds=(9, 6, 3),
                             max_attempts=5, verify="edit-distance")
    modelled = commands.grade_request("four-prompts", grading=grading, backend=api.BackendOptions(concurrency=3),
                                      execution=EngineOptions(ray_workers=2),
                                      cache=ResponseCacheOptions(cache_dir=str(tmp_path)))
    named = commands.grade_request("four-prompts", "openai:m", depth=7, bank="b", aggregate="sum",
                                   thresholds=(9, 6, 3), max_attempts=5, concurrency=3, ray_workers=2,
                                   cache_dir=str(tmp_path))
    assert modelled == named
    assert (modelled.options.depth, modelled.thresholds, modelled.backend.concurrency) == (7, (9, 6, 3), 3)
    assert commands.grade_request("self-rating", grading=grading, depth=2).options.depth == 2
    job = commands.grade_job("self-rating", "openai:m", batch=BatchOptions(batch_export=tmp_path, batch_poll=5.0))
    assert job.mode == "batch-export" and job.batch.batch_poll == 5.0 and job.batch.batch_export == tmp_path


def test_grade_job_modes_and_typed_results(tmp_path, demo):
    from proctor.demo.write import write_collection

    assert commands.grade_request("embedding").backend.spec == "embed:minilm"  # the default backend of embedding
    assert commands.grade_job("self-rating", "openai:m", batch_export=tmp_path).mode == "batch-export"
    assert commands.grade_job("self-rating", "openai:m", batch_import=[tmp_path / "r"]).mode == "batch-import"
    assert commands.grade_job("self-rating", "openai-batch:m").mode == "batch-api"
    recorded = write_collection(tmp_path / "again")["exampp"]
    job = commands.grade_job("self-rating", f"replay:{recorded}", progress=False)
    assert job.mode == "grade" and job.request.thresholds == (10, 7, 5)
    store = api.open_store(demo)
    try:
        outcome = commands.run_grade_job(store, job)
        assert outcome.mode == "grade" and outcome.report is None and outcome.summaries[-1].graded == 72
        graded = api.grade(store, "self-rating", f"replay:{recorded}", progress=False)
        grade_set, summaries = graded  # unpacks as before
        assert graded.grade_set.id == grade_set.id == outcome.grade_set.id and summaries[-1].graded == 0
        report = api.verify(store, "distribution", grade_set=grade_set.id)
        assert report.data["report"] == "distribution" and report.render("text") != report.render("md")
    finally:
        store.close()


# (the command's arguments, the API call (store, folder), the command's message, the command's words)
OTHER_CASES: list[tuple[tuple[str, ...], Callable[[Any, Path], Any], str, tuple[str, ...]]] = [
    (("import", "queries", "{d}/collection/queries.tsv", "--bank", "b", "--store", "{s}"),
     lambda s, d: api.import_files(s, "queries", [d / "collection" / "queries.tsv"], grades_bank="b"),
     "--bank applies to `import exampp` only (bank files take --name)", ("import",)),
    (("export", "exampp", "--store", "{s}"), lambda s, d: commands.export_request("exampp"),
     "export exampp needs --out FILE", ("export",)),
    (("export", "runs", "--store", "{s}"), lambda s, d: commands.export_request("runs"),
     "export runs needs --out DIR (one run file per run is written there)", ("export",)),
    (("verify", "answers", "--store", "{s}", "--judged-relevant", "99"),
     lambda s, d: api.verify(s, "answers", judged_relevant=99), "--judged-relevant 99: no judgment reaches it",
     ("verify",)),
    (("bank", "generate", "--llm", "openai:m", "--queries", "{d}/collection/queries.tsv", "--out", "{d}/b.jsonl",
      "--per-query", "0"),
     lambda s, d: commands.generation_request("openai:m", str(d / "b.jsonl"), queries="q", per_query=0),
     "--per-query must be at least 1", ("bank", "generate")),
    (("bank", "generate", "--llm", "replay:x", "--queries", "q", "--out", "{d}/b.jsonl"),
     lambda s, d: commands.generation_request("replay:x", str(d / "b.jsonl"), queries="q"),
     "bank generation needs a text-generating backend: openai:MODEL, hf:PATH, llamacpp:PATH", ("bank", "generate")),
    (("bank", "generate", "--llm", "openai:m", "--from-pool", "--store", "{s}", "--out", "{d}/b.jsonl"),
     lambda s, d: commands.generation_request("openai:m", str(d / "b.jsonl"), from_pool=True, store=str(s.path)),
     "--from-pool goes with --nuggets and --store S (and no --queries)", ("bank", "generate")),
    (("bank", "generate", "--llm", "openai:m", "--from-pool", "--nuggets", "--store", "{s}", "--max-nuggets", "0",
      "--out", "{d}/b.jsonl"),
     lambda s, d: commands.generation_request("openai:m", str(d / "b.jsonl"), from_pool=True, nuggets=True,
                                         store=str(s.path), max_nuggets=0),
     "--max-nuggets must be at least 1", ("bank", "generate")),
    (("bank", "generate", "--llm", "openai:m", "--out", "{d}/b.jsonl"),
     lambda s, d: commands.generation_request("openai:m", str(d / "b.jsonl")),
     "bank generate takes --queries FILE (or --from-pool --store S --nuggets)", ("bank", "generate")),
    (("run", "{d}/none.toml", "--price-in", "1"),
     lambda s, d: __import__("proctor").experiment_request(d / "none.toml", price_in=1),
     "--price-in needs --dry-run", ("run",)),
]


@pytest.mark.parametrize("args,call,message,command", OTHER_CASES, ids=[" ".join(c[3]) + f" #{i}"
                                                                        for i, c in enumerate(OTHER_CASES)])
def test_other_commands_refuse_in_the_api_what_they_refuse_with_the_same_words(cli, demo, args, call, message,
                                                                               command):
    _refused_alike(cli, demo, args, call, message, command)
    assert not (demo.parent / "b.jsonl").exists()


def test_typed_results_of_export_and_bank(tmp_path, demo):
    store = api.open_store(demo)
    try:
        assert commands.export_request("judgments").run(store).text == api.export(store, "judgments").text
        runs = commands.export_request("runs", tmp_path / "runs").run(store)
        assert runs.kind == "runs" and runs.count == len(list((tmp_path / "runs").iterdir())) and runs.lines > 0
        exported = commands.export_bank(store, str(tmp_path / "bank.yaml"), "yaml")
        assert exported.items > 0 and exported.questions_left_out == 0 and (tmp_path / "bank.yaml").exists()
        with pytest.raises(UsageError, match="^fmt 'xml': choose one of items, questions, yaml, nuggetizer"):
            commands.export_bank(store, str(tmp_path / "bank.xml"), "xml")  # type: ignore[arg-type]
    finally:
        store.close()
    same = api.bank_diff(tmp_path / "bank.yaml", tmp_path / "bank.yaml")
    assert same.result["unchanged"] == exported.items and not same.result["added"] and not same.result["removed"]
    assert same.render("json").startswith("{")


@pytest.mark.parametrize("call,message", [
    (lambda: commands.import_request("queries", ["q.tsv"], response_format="csv"),  # type: ignore[arg-type]
     "response_format 'csv': choose one of auto, jsonl, rag24, rag25, text-dir"),
    (lambda: commands.import_request("queries", ["q.tsv"], on_error="ignore"),  # type: ignore[arg-type]
     "on_error 'ignore': choose one of fail, skip"),
    (lambda: commands.export_request("grades"), "kind 'grades': choose one of exampp, runs, judgments"),  # type: ignore[arg-type]
    (lambda: commands.generation_request("openai:m", "b.jsonl", queries="q", style="msmarco"),  # type: ignore[arg-type]
     "style 'msmarco': choose one of dl, car"),
    (lambda: commands.grade_request("qa", "openai:m", engine="spark"), "engine 'spark': choose one of local, ray"),
])
def test_modes_outside_their_literals_are_refused_naming_the_parameter(call, message):
    """What argparse's `choices` refuse on the command line, the API refuses in its own words."""
    with pytest.raises(UsageError) as refused:
        call()
    assert str(refused.value) == message


def test_a_grading_option_is_taken_by_its_field_name_as_by_the_requests_own():
    def request(**named):
        return commands.grade_request("four-prompts", "openai:m", base_url="http://127.0.0.1:9/v1",
                                      aggregate="sum", **named)

    assert request(sum_thresholds=(9, 6, 4)).thresholds == request(thresholds=(9, 6, 4)).thresholds == (9, 6, 4)
    given = api.GradingOptions(sum_thresholds=(8, 5, 3))
    assert commands.grade_request("four-prompts", "openai:m", grading=given, base_url="http://127.0.0.1:9/v1",
                                  aggregate="sum", sum_thresholds=(9, 6, 4)).thresholds == (9, 6, 4)  # given wins
