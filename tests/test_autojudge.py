"""Proctor as a TREC AutoJudge judge, run by the track's own runner (`auto-judge run`: once as a real process, the
installed program with the `llm` variant, otherwise in-process through its click command) with Proctor's
workflow.yml; outputs read with autojudge-base's loaders and meta-evaluated with `auto-judge-evaluate`. The
autojudge tools read NLTK data at import: a local stub stands in (no downloads)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import autojudge_collection as collection
from fake_openai import FakeOpenAI, prompt_grade
from proctor import api
from tiny_models import tiny_models_fixture  # noqa: F401 (a fixture)
from tira_shape import track_llm

# found, not imported: autojudge-base reads NLTK data at import (the stub below is in place first)
pytestmark = pytest.mark.skipif(not (importlib.util.find_spec("autojudge_base")
                                     and importlib.util.find_spec("autojudge_evaluate")),
                                reason="needs the autojudge-base and autojudge-evaluate packages (extra test)")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "src" / "proctor" / "autojudge" / "workflow.yml"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def nltk_stub(peer_nltk) -> Path:
    """The local NLTK folder of the peer tests, with the punkt folder autojudge-base also looks for (so it
    does not try to download it)."""
    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    return peer_nltk


@pytest.fixture
def task(tmp_path, nltk_stub) -> dict[str, Path]:
    """The collection in AutoJudge's formats."""
    return collection.write(tmp_path / "task")


@pytest.fixture(scope="module")
def embedded(tmp_path_factory, nltk_stub) -> tuple[dict[str, Path], Path]:
    """One run of the `embedded` variant (the task and its --out-dir), shared by the tests that read it, in-process
    through the track runner's click command (the real `auto-judge` process runs the `llm` variant:
    `test_llm_variant_resumes_and_replays_without_the_endpoint`; one without torch to start)."""
    root = tmp_path_factory.mktemp("embedded")
    task = collection.write(root / "task")
    done = auto_judge(task, root / "out", "embedded", nltk_stub)
    assert done.returncode == 0, done.stderr[-3000:]
    return task, root / "out"


class Done:
    """Exit status and standard error of one `auto-judge` command, named as `subprocess.CompletedProcess`
    names them."""

    def __init__(self, returncode: int, stderr: str) -> None:
        self.returncode, self.stderr = returncode, stderr


def runner_args(task: dict[str, Path], out: Path, variant: str | None, *extra: str, banks: bool | Path = True,
                workflow: Path = WORKFLOW) -> list[str]:
    """The arguments of `auto-judge run` with Proctor's workflow, as a participant types them (no variant: the
    selection, such as `--sweep NAME`, is in `extra`)."""
    bank = task["bank"] if banks is True else banks
    return ["run", "--workflow", str(workflow), *(["--variant", variant] if variant else []),
            "--rag-responses", str(task["responses"]), "--rag-topics", str(task["topics"]),
            *(["--nugget-banks", str(bank)] if banks else []), "--out-dir", str(out), *extra]


def in_process(command, args: list[str], env: dict[str, str]) -> Done:
    """A click command of the autojudge tools run in this process (click's CliRunner, `env` set meanwhile); an
    exception that escapes is reported as a process would report it: a traceback on standard error, status 1."""
    import traceback

    from click.testing import CliRunner

    result = CliRunner().invoke(command, args, env=env)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return Done(result.exit_code, stderr)


def auto_judge(task: dict[str, Path], out: Path, variant: str | None, nltk: Path, *extra: str,
               env: dict[str, str] | None = None, banks: bool | Path = True, workflow: Path = WORKFLOW,
               process: bool = False) -> Done:
    """`auto-judge run` with Proctor's workflow: in-process through the runner's own click command, or as a real
    process (`process`), the installed `auto-judge` program."""
    args = runner_args(task, out, variant, *extra, banks=banks, workflow=workflow)
    environment = {"NLTK_DATA": str(nltk), "HF_HUB_OFFLINE": "1", **(env or {})}
    if not process:
        from autojudge_base.cli import main

        return in_process(main, args, environment)
    done = subprocess.run([str(BIN / "auto-judge"), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **environment})
    return Done(done.returncode, done.stderr)


def meta_evaluate(board: Path, truth: Path, nltk: Path) -> list[dict]:
    """`auto-judge-evaluate meta-evaluate` of one leaderboard against a truth leaderboard (in-process)."""
    from autojudge_evaluate import main

    result = board.parent / "meta.jsonl"
    done = in_process(main, ["meta-evaluate", "--truth-leaderboard", str(truth), "--truth-format", "ir_measures",
                             "--eval-format", "ir_measures", "--input", str(board), "--output", str(result)],
                      {"NLTK_DATA": str(nltk)})
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in result.read_text().splitlines() if line.strip()]


def truth_file(folder: Path) -> Path:
    """The true order of the three systems (good > mediocre > bad) as an ir_measures leaderboard."""
    path = folder / "truth.eval.txt"
    path.write_text("gen-good\tall\tquality\t3\ngen-mediocre\tall\tquality\t2\ngen-bad\tall\tquality\t1\n")
    return path


def all_rows(board) -> dict[tuple[str, str], float]:
    """(run, measure) → the `all` value."""
    return {(e.run_id, m): float(v) for e in board.entries if e.topic_id == board.all_topic_id
            for m, v in e.values.items()}


@pytest.mark.slow
def test_embedded_variant_in_the_track_runner(embedded, tmp_path, nltk_stub):
    from autojudge_base import Leaderboard, NuggetBanks
    from autojudge_base.nugget_data import load_nugget_banks_generic
    from autojudge_base.qrels.qrels import read_qrel_file

    _, out = embedded
    board = Leaderboard.load(out / "embedded.eval.txt", format="ir_measures")
    values = all_rows(board)
    for measure in ("EXAM-Cover", "n-EXAM", "P@20", "nDCG@10"):
        assert values[("gen-good", measure)] > values[("gen-mediocre", measure)] >= values[("gen-bad", measure)]
    assert {e.topic_id for e in board.entries} == {"q1", "q2", "q3", "q4", "all"}
    measures = (out / "embedded.eval.measures.yml").read_text()
    assert "EXAM-Cover@20" in measures and "grade >= 4" in measures and "embedding" in measures
    qrels = read_qrel_file(out / "embedded.qrels.txt")
    sentences = {hashlib.md5(s.encode()).hexdigest() for answers in collection.SYSTEMS.values()
                 for text in answers.values() for s in collection.sentences(text)}
    assert {r.doc_id for r in qrels.rows} == sentences  # AutoJudge's document ids for generated text
    banks = load_nugget_banks_generic(out / "embedded.nuggets.jsonl", NuggetBanks)
    assert sorted(banks.banks) == ["q1", "q2", "q3", "q4"]
    assert sorted(q.question for q in banks.banks["q2"].nuggets_as_list()) == sorted(collection.QUESTIONS["q2"])
    rows = meta_evaluate(out / "embedded.eval.txt", truth_file(tmp_path), nltk_stub)
    cover = [r for r in rows if r.get("Judge") == "embedded" or "EXAM-Cover" in json.dumps(r)]
    assert cover and all(abs(r["kendall"] - 1.0) < 1e-9 for r in cover if "kendall" in r)


@pytest.mark.slow
def test_the_store_matches_the_leaderboard(embedded):
    """The `all` rows AutoJudge wrote are Proctor's own scores from the store the judge left in --out-dir."""
    from autojudge_base import Leaderboard

    from proctor import api

    _, out = embedded
    board = all_rows(Leaderboard.load(out / "embedded.eval.txt", format="ir_measures"))
    store = api.open_store(out / "embedded.db")
    cover = api.leaderboard(store, "Cover(rel=4)@20")
    p20 = api.leaderboard(store, "P@20", min_grade=4, missing="zero")
    store.close()
    for entry in cover.entries:
        assert board[(entry.system, "EXAM-Cover")] == pytest.approx(entry.score, abs=1e-12)
    for entry in p20.entries:
        assert board[(entry.system, "P@20")] == pytest.approx(entry.score, abs=1e-12)


@pytest.mark.slow
def test_llm_variant_resumes_and_replays_without_the_endpoint(task, tmp_path, nltk_stub):
    from autojudge_base import Leaderboard

    out = tmp_path / "out"
    with FakeOpenAI() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "llm", nltk_stub, env=env, process=True)  # the one real `auto-judge`
        assert done.returncode == 0, done.stderr[-3000:]
        asked = server.requests
        assert asked == 87  # every (sentence, question) pair of the topic, once
        again = auto_judge(task, out, "llm", nltk_stub, env=env)
        assert again.returncode == 0 and server.requests == asked  # resumed: nothing asked twice
        url = server.base_url
    first = {name: (out / name).read_bytes() for name in ("llm.eval.txt", "llm.qrels.txt")}
    down = {"OPENAI_BASE_URL": url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
    replay = auto_judge(task, out, "llm", nltk_stub, env=down)  # the endpoint is gone
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert {name: (out / name).read_bytes() for name in first} == first
    board = Leaderboard.load(out / "llm.eval.txt", format="ir_measures")
    assert {e.run_id for e in board.entries} == {"gen-good", "gen-mediocre", "gen-bad"}
    rows = meta_evaluate(out / "llm.eval.txt", truth_file(tmp_path), nltk_stub)
    assert rows and all("kendall" in r for r in rows)


def generating(prompt: str) -> str:
    """The test server's reply: a question set to the generation prompt, a grade to every other one."""
    if "Give the question set" in prompt:
        topic = prompt.split("'")[1]
        return json.dumps({"questions": [f"What is {topic}?", f"Why does {topic} matter?"]})
    return str(prompt_grade(prompt))


@pytest.mark.slow
def test_without_banks_create_nuggets_generates_them(task, tmp_path, nltk_stub):
    from autojudge_base import NuggetBanks
    from autojudge_base.nugget_data import load_nugget_banks_generic

    out = tmp_path / "out"
    with FakeOpenAI(reply=generating) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "llm", nltk_stub, env=env, banks=False)
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.requests == 4 + 29 * 2  # 4 generations, then 29 sentences x 2 questions
    banks = load_nugget_banks_generic(out / "llm.nuggets.jsonl", NuggetBanks)
    assert sorted(q.question for q in banks.banks["q2"].nuggets_as_list()) == [
        "What is why is the sky blue?", "Why does why is the sky blue matter?"]
    creator = json.dumps(banks.banks["q2"].model_dump(mode="json"))
    assert "judge-model" in creator and "authors-2" in creator  # who made the bank, with which prompt


@pytest.mark.slow
def test_a_pair_missing_from_the_cache_is_an_error(task, tmp_path, nltk_stub):
    out = tmp_path / "out"
    with FakeOpenAI() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        assert auto_judge(task, out, "llm", nltk_stub, env=env).returncode == 0
    before = (out / "llm.eval.txt").read_bytes()
    shutil.copy(task["responses"] / "gen-good.jsonl", task["responses"] / "gen-new.jsonl")
    text = (task["responses"] / "gen-new.jsonl").read_text().replace('"gen-good"', '"gen-new"').replace(
        "Bees make honey", "Bees produce honey")
    (task["responses"] / "gen-new.jsonl").write_text(text)
    done = auto_judge(task, out, "llm", nltk_stub, "--set", "max_retries=0", "--set", "timeout=2", env=env)
    assert done.returncode == 2
    assert "proctor: error:" in done.stderr and "Traceback" not in done.stderr
    message = done.stderr[done.stderr.index("proctor: error:"):]
    assert "39 pairs (self-rating / openai:judge-model) are not in the cache" in message  # 13 sentences x 3
    assert "runs gen-new, topics q1, q2, q3, q4;" in message and "sentence gen-new/q1/0" in message
    assert (out / "llm.eval.txt").read_bytes() == before  # nothing half-written


def test_settings_are_checked_at_the_boundary(task, tmp_path, nltk_stub):
    done = auto_judge(task, tmp_path / "out", "embedded", nltk_stub, "--set", "tau=3")
    assert done.returncode == 2 and "workflow setting 'tau': unknown" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "embedded.db").exists()  # refused before any work


@pytest.mark.parametrize("settings, message", [
    ({"min_grade": 9}, "min_grade=9: a grade 0-5"),
    ({"min_grade": "4"}, "min_grade='4': expected int"),
    ({"measures": [3]}, "measures: a measure name or a list of them"),
    ({"on_missing": "drop"}, "on_missing='drop': one of default"),
    ({"budget": 0}, "budget must be at least 1"),
    ({"store": "../elsewhere.db"}, "a file name inside outdir"),  # the parameter; the runner's user reads --out-dir
    ({"dtype": "half"}, "dtype='half': one of auto, bfloat16, float16, float32"),
    ({"timeout": True}, "timeout=True: expected float"),
    ({"budget": 30}, "budget=30 is more than depth=20"),
    ({"method": "umbrela", "min_grade": 4}, "method umbrela grades 0-3, so min_grade must be 1..3"),
    ({"min_grade": 0}, "method self-rating grades 0-5, so min_grade must be 1..5"),
])
def test_bad_settings_are_refused(settings, message):
    from proctor.autojudge.settings import JudgeSettings
    from proctor.errors import UsageError

    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace("[", r"\[")):
        JudgeSettings.from_kwargs({"outdir": "x", "filebase": "y", **settings})


def test_the_runner_reads_the_parameters_as_its_options(capsys, nltk_stub):
    """The judge's errors name parameters (`outdir`, `corpus`); its user reads them as the runner's options."""
    from proctor.autojudge.judge import user_errors
    from proctor.autojudge.settings import JudgeSettings

    refuse = user_errors(lambda: JudgeSettings.from_kwargs({"store": "../elsewhere.db"}))
    with pytest.raises(SystemExit) as ended:
        refuse()
    assert ended.value.code == 2
    assert capsys.readouterr().err == ("proctor: error: workflow setting store='../elsewhere.db': a file name inside "
                                       "--out-dir\n")


def test_the_dtype_setting_reaches_the_hf_backend(demo_store, tiny_models):
    """`dtype` is a setting (issue 36): an `hf:` judge grades in that precision, into a grade set of its own."""
    from conftest import grades_of
    from proctor.autojudge.settings import JudgeSettings

    settings = JudgeSettings.from_kwargs({"llm": f"hf:{tiny_models['tiny-t5']}", "dtype": "bfloat16"})
    assert settings.backend_options(None)["dtype"] == "bfloat16"
    assert JudgeSettings().backend_options(None)["dtype"] is None  # not given: the backend's own default (auto)
    store = api.open_store(demo_store)
    try:
        grade_set, _ = api.grade(store, settings.method, settings.llm_spec(None), max_queries=1, max_passages=2,
                                 progress=False, **settings.backend_options(None))
    finally:
        store.close()
    assert grade_set.params["dtype"] == "bfloat16"
    assert len(grades_of(demo_store, "self-rating", dtype="bfloat16")) == 6


def test_settings_map_to_proctor_options():
    from proctor.autojudge.settings import JudgeSettings

    s = JudgeSettings.from_kwargs({"measures": "P@20", "timeout": 5, "llm": "openai:m", "base_url": "http://h/v1"})
    assert s.measures == ("P@20",) and s.timeout == 5.0 and s.llm_spec(None) == "openai:m"
    assert s.backend_options("http://other/v1") == {"concurrency": 8, "max_retries": 6, "timeout": 5.0,
                                                    "dtype": None, "base_url": "http://h/v1"}
    assert "base_url" not in JudgeSettings(llm="embed:minilm").backend_options("http://other/v1")


def test_every_variant_maps_to_known_settings(nltk_stub):
    """Each variant and sweep point of the shipped workflow.yml is a valid set of Proctor options."""
    from autojudge_base.workflow import load_workflow, resolve_sweep, resolve_variant

    from proctor.autojudge.settings import JudgeSettings

    workflow = load_workflow(WORKFLOW)
    assert set(workflow.variants) == {"embedded", "llm", "nuggets", "umbrela", "citations"}
    configs = [resolve_variant(workflow, name) for name in workflow.variants] + resolve_sweep(workflow, "threshold")
    for config in configs:
        JudgeSettings.from_kwargs(config.judge_settings)
    sweep = resolve_sweep(workflow, "threshold")
    assert sorted(str(c.judge_output_path) for c in sweep) == [f"threshold-t{t}" for t in range(1, 6)]
    nuggetizer = load_workflow(WORKFLOW.with_name("workflow-nuggetizer.yml"))
    JudgeSettings.from_kwargs(resolve_variant(nuggetizer, "nuggets").judge_settings)


@pytest.mark.slow
def test_model_preferences_pick_the_first_served_model(task, tmp_path, nltk_stub):
    """The starter kit's llm-config.yml: the first preferred model the endpoint lists is graded with; the replay
    without the endpoint uses the model chosen then and writes the same leaderboard."""
    config = tmp_path / "llm-config.yml"
    config.write_text('model_preferences:\n  - "big-model"\n  - "mid-model"\non_no_match: "error"\n')
    out = tmp_path / "out"
    with FakeOpenAI(models=["mid-model", "small-model"]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "small-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "llm", nltk_stub, "--set", f"llm_config_file={config}", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
    assert "mid-model" in (out / "llm.eval.measures.yml").read_text()
    first = (out / "llm.eval.txt").read_bytes()
    replay = auto_judge(task, out, "llm", nltk_stub, "--set", f"llm_config_file={config}", env=env)
    assert replay.returncode == 0 and "using the model chosen on the first run: mid-model" in replay.stderr
    assert (out / "llm.eval.txt").read_bytes() == first
    config.write_text('model_preferences: ["big-model"]\non_no_match: "error"\n')
    with FakeOpenAI(models=["small-model"]) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        done = auto_judge(task, tmp_path / "other", "llm", nltk_stub, "--set", f"llm_config_file={config}", env=env)
    assert done.returncode == 2 and "none of the model_preferences ['big-model'] is served" in done.stderr


nuggetizing = track_llm
"""The test server as a nuggetizer-style LLM: nuggets, their importance, assignments, UMBRELA scores."""


@pytest.mark.parametrize("variant, measures", [
    ("nuggets", ["nuggets:all", "nuggets:vital", "nuggets:strict_all", "nuggets:weighted"]),
    ("umbrela", ["P@20", "nDCG@10"]),
])
@pytest.mark.slow
def test_nuggets_and_umbrela_variants(task, tmp_path, nltk_stub, variant, measures):
    from autojudge_base import Leaderboard

    out = tmp_path / "out"
    with FakeOpenAI(reply=nuggetizing) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, variant, nltk_stub, env=env, banks=False)
        assert done.returncode == 0, done.stderr[-3000:]
    board = Leaderboard.load(out / f"{variant}.eval.txt", format="ir_measures")
    assert set(board.measures) == set(measures)
    assert {e.run_id for e in board.entries} == {"gen-good", "gen-mediocre", "gen-bad"}
    assert {e.topic_id for e in board.entries} == {"q1", "q2", "q3", "q4", "all"}
    assert (out / f"{variant}.qrels.txt").exists() == (variant == "umbrela")  # nuggets judge whole answers


@pytest.mark.slow
def test_failed_replies_are_an_error_not_a_zero(task, tmp_path, nltk_stub):
    """Server errors on some pairs: the run ends naming them; no leaderboard with those pairs as 0."""
    out = tmp_path / "out"
    with FakeOpenAI(faults=lambda prompt, attempt: "500" if "Bees make honey" in prompt else "ok") as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "llm", nltk_stub, "--set", "max_retries=0", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "3 of 87 pairs of grade set" in done.stderr and "have no grade" in done.stderr
    assert not (out / "llm.eval.txt").exists() and not (out / "llm.qrels.txt").exists()


@pytest.mark.slow
def test_threshold_sweep_grades_once(task, tmp_path, nltk_stub):
    """One leaderboard per τ from one store: binary measures fall as τ rises, nDCG (graded labels) stays."""
    from autojudge_base import Leaderboard

    out = tmp_path / "out"
    done = auto_judge(task, out, None, nltk_stub, "--sweep", "threshold")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("87 pairs graded now") == 1  # the first point grades, the others read the store
    boards = {t: all_rows(Leaderboard.load(out / f"threshold-t{t}.eval.txt", format="ir_measures"))
              for t in range(1, 6)}
    for run in ("gen-good", "gen-mediocre"):
        cover = [boards[t][(run, "EXAM-Cover")] for t in range(1, 6)]
        assert cover == sorted(cover, reverse=True) and cover[0] > cover[-1]
        assert len({boards[t][(run, "nDCG@10")] for t in range(1, 6)}) == 1


@pytest.mark.slow
def test_nuggetizer_banks_in_and_out(task, tmp_path, nltk_stub):
    """workflow-nuggetizer.yml: nuggets given as AutoJudge NuggetizerNuggetBanks come back in that type."""
    from autojudge_base import Leaderboard
    from autojudge_base.nugget_data import NuggetizerNuggetBanks, load_nugget_banks_generic

    given = tmp_path / "nuggets.jsonl"
    given.write_text("".join(json.dumps({"qid": q, "query": t, "nuggets": [
        {"text": f"{t} fact one", "importance": "vital"}, {"text": f"{t} fact two", "importance": "okay"}]}) + "\n"
        for q, t in collection.TITLES.items()))
    out = tmp_path / "out"
    with FakeOpenAI(reply=nuggetizing) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "nuggets", nltk_stub, env=env, banks=given,
                          workflow=WORKFLOW.with_name("workflow-nuggetizer.yml"))
        assert done.returncode == 0, done.stderr[-3000:]
    banks = load_nugget_banks_generic(out / "nuggets.nuggets.jsonl", NuggetizerNuggetBanks)
    assert [(n.text, n.importance) for n in banks.banks["q1"].nuggets] == [
        ("how do bees make honey fact one", "vital"), ("how do bees make honey fact two", "okay")]
    board = Leaderboard.load(out / "nuggets.eval.txt", format="ir_measures")
    assert "nuggets:strict_vital" in board.measures


@pytest.mark.slow
def test_a_topic_a_run_did_not_answer_follows_on_missing(task, tmp_path, nltk_stub):
    """gen-bad gives no answer for q4: AutoJudge's on_missing decides (error names the pair; default writes a
    0 row; fix_aggregate writes none), and the `all` row counts it 0 in every mode, as Proctor does."""
    from autojudge_base import Leaderboard

    path = task["responses"] / "gen-bad.jsonl"
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if '"q4"' not in line))
    out = tmp_path / "out"
    with FakeOpenAI() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "llm", nltk_stub, "--set", "on_missing=error", env=env)
        assert done.returncode == 2 and "(gen-bad, q4)" in done.stderr and "Traceback" not in done.stderr
        rows = {}
        for mode in ("default", "fix_aggregate"):
            done = auto_judge(task, out, "llm", nltk_stub, "--set", f"on_missing={mode}", env=env)
            assert done.returncode == 0, done.stderr[-3000:]
            rows[mode] = Leaderboard.load(out / "llm.eval.txt", format="ir_measures").entries
    default = {(e.run_id, e.topic_id): e.values for e in rows["default"]}
    assert all(float(v) == 0.0 for v in default[("gen-bad", "q4")].values())
    assert ("gen-bad", "q4") not in {(e.run_id, e.topic_id) for e in rows["fix_aggregate"]}
    alls = {mode: {(e.run_id, m): float(v) for e in entries if e.topic_id == "all" for m, v in e.values.items()}
            for mode, entries in rows.items()}
    assert alls["default"] == alls["fix_aggregate"]


@pytest.mark.slow
def test_a_run_shows_only_its_own_responses(task, tmp_path, nltk_stub):
    """The store keeps what earlier runs imported; a run limited to two systems (--run) shows only them, and a
    sentence's qrels document id is the md5 of its text exactly as the report gives it (spaces included)."""
    from autojudge_base import Leaderboard
    from autojudge_base.qrels.qrels import read_qrel_file

    path = task["responses"] / "gen-bad.jsonl"
    path.write_text(path.read_text().replace('fifteenth century."', 'fifteenth century.  "'))
    out = tmp_path / "out"
    with FakeOpenAI() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        assert auto_judge(task, out, "llm", nltk_stub, env=env).returncode == 0
        asked = server.requests
        done = auto_judge(task, out, "llm", nltk_stub, "--run", "gen-good", "--run", "gen-bad", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.requests == asked
    board = Leaderboard.load(out / "llm.eval.txt", format="ir_measures")
    assert {e.run_id for e in board.entries} == {"gen-good", "gen-bad"}
    docs = {r.doc_id for r in read_qrel_file(out / "llm.qrels.txt").rows}
    expected = {hashlib.md5(s.encode()).hexdigest() for run in ("gen-good", "gen-bad")
                for text in collection.SYSTEMS[run].values() for s in collection.sentences(text)}
    spaced = "The history of the printing press begins with Johannes Gutenberg in the fifteenth century.  "
    md5 = {hashlib.md5(spaced.rstrip().encode()).hexdigest(): hashlib.md5(spaced.encode()).hexdigest()}
    expected = {md5.get(doc, doc) for doc in expected}
    assert docs == expected


@pytest.mark.slow
def test_citations_variant_reads_the_corpus(task, tmp_path, nltk_stub):
    """Citation support judges every cited sentence against the cited document's text from --corpus; without
    a corpus file the run is refused before any request."""
    from autojudge_base import Leaderboard

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"doc-{q}-{i}", "text": f"Document {i} about {t}."}) + "\n"
                              for q, t in collection.TITLES.items() for i in range(6)))
    out = tmp_path / "out"
    verdict = {"text": lambda p: "Full Support" if "Bees" in p else "No Support"}
    with FakeOpenAI(reply=lambda prompt: verdict["text"](prompt)) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        refused = auto_judge(task, out, "citations", nltk_stub, env=env)
        assert refused.returncode == 2 and "carry none" in refused.stderr and server.requests == 0
        done = auto_judge(task, out, "citations", nltk_stub, "--corpus", str(corpus), env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.requests == 29  # one per cited sentence
    board = Leaderboard.load(out / "citations.eval.txt", format="ir_measures")
    values = all_rows(board)
    assert values[("gen-good", "citations:support_precision")] > values[("gen-bad", "citations:support_precision")]


@pytest.mark.slow
def test_fewer_topics_than_the_banks(task, tmp_path, nltk_stub):
    """--limit-topics / --topic judge fewer topics than the given banks hold: only those are imported, graded
    and scored (n-EXAM over them too); a later full run grades only the rest."""
    from autojudge_base import Leaderboard

    out = tmp_path / "out"
    with FakeOpenAI() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}
        done = auto_judge(task, out, "llm", nltk_stub, "--limit-topics", "2", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        first = server.requests
        limited = Leaderboard.load(out / "tmp-llm.eval.txt", format="ir_measures")  # the runner's tmp- prefix
        assert {e.topic_id for e in limited.entries} == {"q1", "q2", "all"}
        assert auto_judge(task, out, "llm", nltk_stub, env=env).returncode == 0
        full = Leaderboard.load(out / "llm.eval.txt", format="ir_measures")
        assert {e.topic_id for e in full.entries} == {"q1", "q2", "q3", "q4", "all"}
        assert auto_judge(task, out, "llm", nltk_stub, "--topic", "q3", env=env).returncode == 0
        assert server.requests == 87 and first < 87  # every pair asked once over the three runs
