"""The TIRA code submission, checked as far as a machine without docker allows: the root Dockerfile builds on the
track's base image, installs Proctor into /venv, copies only files that exist (and that .dockerignore keeps) and
puts the workflows where the documented `--command` names them; that command parses with the runner's own CLI;
and every variant the shipped workflows offer runs in TIRA's command shape (nothing but `--workflow`,
`--variant`, `--rag-responses`, `--rag-topics`, `--out-dir`; the LLM injected through OPENAI_BASE_URL and
OPENAI_MODEL) on kiddie, its leaderboard meta-evaluated by `auto-judge-evaluate` against kiddie's truth."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import shlex
from pathlib import Path

import pytest
import yaml

import tira_shape
from fake_openai import FakeOpenAI
from test_autojudge import all_rows, in_process

pytestmark = pytest.mark.skipif(not (importlib.util.find_spec("autojudge_base")
                                     and importlib.util.find_spec("autojudge_evaluate")),
                                reason="needs the autojudge-base and autojudge-evaluate packages (extra test)")

BASE_IMAGE = "ghcr.io/trec-auto-judge/trec-auto-judge-base:dev-0.0.1"
"""The FROM of the starter kit's Dockerfile (commit fd0a0b8d, tests/vendor/starter_kit) and of its how-to."""
KIDDIE_RUNS = {"run1", "run2", "run3", "run4"}
TOPICS = ["leaf", "bee"]
"""Two of kiddie's five topics: every variant in seconds."""


@pytest.fixture(scope="module")
def nltk(peer_nltk) -> Path:
    """The peers' NLTK stub with the punkt folder autojudge-base looks for."""
    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    return peer_nltk


def instructions() -> list[list[str]]:
    """The Dockerfile's instructions as words (continuation lines joined, comments left out)."""
    text = tira_shape.DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    return [words for line in text.splitlines() if (words := shlex.split(line, comments=True))]


def test_the_dockerfile_builds_on_the_track_base_image_and_installs_into_venv():
    steps = instructions()
    assert steps[0] == ["FROM", BASE_IMAGE]
    runs = [" ".join(words[1:]) for words in steps if words[0] == "RUN"]
    assert any(". /venv/bin/activate" in run and "uv pip install" in run and "[autojudge,embed]" in run
               for run in runs), runs
    assert not any("--system" in run for run in runs)  # invisible in /venv at run time (the how-to's warning)
    kinds = {words[0] for words in steps}
    assert not kinds & {"CMD", "ENTRYPOINT"}  # TIRA's --command runs the judge; no path is fixed here
    assert not (tira_shape.ROOT / "docker").exists()  # the old docker/autojudge.Dockerfile is gone


def test_every_file_the_dockerfile_copies_exists_and_is_not_ignored():
    ignored = [p.strip() for p in (tira_shape.ROOT / ".dockerignore").read_text().splitlines()
               if p.strip() and not p.startswith("#")]
    copies = tira_shape.dockerfile_copies()
    assert copies
    for sources, _ in copies:
        for source in sources:
            found = sorted(tira_shape.ROOT.glob(source))
            assert found, f"Dockerfile copies {source}: no such file"
            for path in found:
                parts = path.relative_to(tira_shape.ROOT).parts
                prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
                hit = [p for p in ignored if any(fnmatch.fnmatch(x, p.removeprefix("**/")) for x in prefixes)]
                assert not hit, f"{path} is copied but .dockerignore leaves it out ({hit})"


def test_the_documented_commands_name_workflows_the_image_holds(tmp_path):
    commands = tira_shape.documented_commands()
    assert commands, "docs/autojudge.md shows no tira-cli --command"
    judges = tira_shape.image_judges(tmp_path)
    held = sorted(p.name for p in judges.iterdir())
    assert held == ["workflow-nuggetizer.yml", "workflow.yml"]
    for command in commands:
        words = shlex.split(command)
        workflow = Path(words[words.index("--workflow") + 1])
        assert str(workflow.parent) == tira_shape.JUDGES and workflow.name in held, command
        variants = yaml.safe_load((judges / workflow.name).read_text())["variants"]
        assert words[words.index("--variant") + 1] in variants, command


def test_the_documented_commands_parse_with_the_runners_cli(tmp_path, nltk):
    from autojudge_base._commands._run import run_workflow

    dataset = tira_shape.kiddie_dataset(tmp_path / "input")
    judges = tira_shape.image_judges(tmp_path / "image")
    for command in tira_shape.documented_commands():
        argv = tira_shape.tira_argv(command, dataset, tmp_path / "output", judges)
        assert argv[0] == "run"
        with run_workflow.make_context("auto-judge run", argv[1:]) as ctx:
            params = ctx.params
        assert {r.metadata.run_id for r in params["rag_responses"]} == KIDDIE_RUNS
        assert Path(params["workflow"]).is_file() and params["out_dir"] == tmp_path / "output"
        assert {k for k, v in params.items() if v not in (None, (), False)} <= {
            "workflow", "variant", "rag_responses", "rag_topics", "out_dir"} | _defaults(run_workflow)


def test_the_documented_tira_cli_command_parses_with_tira_cli(monkeypatch):
    """The walkthrough's tira-cli command, read by tira-cli's own argument parser (nothing is run): the cache
    flags of the how-to, the forwarded endpoint, and the `--command` the other tests run."""
    tira_cli = pytest.importorskip("tira.tira_cli")
    (submission,) = tira_shape.documented_code_submissions()
    monkeypatch.setattr("sys.argv", shlex.split(submission))
    args = tira_cli.parse_args()
    assert args.executable is tira_cli.code_submission_command and args.dry_run
    assert args.cache_behaviour == "deterministic" and args.mount_cache == ["$CACHE_DIR=EMPTY_DIR"]
    assert args.forward_environment_variable == ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"]
    assert (args.task, args.dataset, args.path) == ("trec-auto-judge", "kiddie-20260605-training", ".")
    assert args.command == tira_shape.documented_commands()[0]


def _defaults(command) -> set[str]:
    """The runner's options that have a value though the command does not give them."""
    return {p.name for p in command.params if p.default not in (None, (), False)}


def test_a_tira_argv_is_expanded_as_the_shell_expands_it(tmp_path):
    dataset = tira_shape.kiddie_dataset(tmp_path / "input", ["leaf"])
    argv = tira_shape.tira_argv(tira_shape.tira_command("workflow.yml", "llm"), dataset, tmp_path / "o",
                                tmp_path / "judges")
    assert argv == ["run", "--workflow", str(tmp_path / "judges" / "workflow.yml"), "--variant", "llm",
                    "--rag-responses", str(dataset / "runs" / "repgen") + "/", "--rag-topics",
                    str(dataset / "topics" / "kiddie-topics.jsonl"), "--out-dir", str(tmp_path / "o")]


@pytest.mark.slow
@pytest.mark.parametrize("workflow, variant", tira_shape.offered_variants(),
                         ids=[f"{w}:{v}" for w, v in tira_shape.offered_variants()])
def test_every_offered_variant_runs_in_tiras_command_shape(workflow, variant, tmp_path, nltk):
    from autojudge_base import Leaderboard
    from autojudge_base.cli import main

    dataset = tira_shape.kiddie_dataset(tmp_path / "input", TOPICS)
    judges = tira_shape.image_judges(tmp_path / "image")
    out = tmp_path / "output"
    argv = tira_shape.tira_argv(tira_shape.tira_command(workflow, variant), dataset, out, judges)
    with FakeOpenAI(reply=tira_shape.track_llm) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k",
               "NLTK_DATA": str(nltk), "HF_HUB_OFFLINE": "1"}
        done = in_process(main, argv, env)
        assert done.returncode == 0, done.stderr[-3000:]
    assert server.requests > 0 and {d["model"] for d in server.decoding} == {"judge-model"}  # the injected LLM
    board = Leaderboard.load(out / f"{variant}.eval.txt", format="ir_measures")
    assert {e.run_id for e in board.entries} == KIDDIE_RUNS
    assert {e.topic_id for e in board.entries} == {*TOPICS, "all"}
    if variant == "embedded":  # the LLM wrote the questions (one request per topic); MiniLM graded
        assert server.requests == len(TOPICS)
        values = all_rows(board)
        assert min(values[(r, "EXAM-Cover")] for r in ("run1", "run2")) > values[("run4", "EXAM-Cover")]
    if variant == "citations":  # against the documents the reports carry
        assert (out / "citations.documents.jsonl").is_file()
    rows = kiddie_meta_evaluate(out / f"{variant}.eval.txt", nltk)
    assert {r["EvalMeasure"] for r in rows} == set(board.measures) and all("kendall" in r for r in rows)


def kiddie_meta_evaluate(board: Path, nltk: Path) -> list[dict]:
    """`auto-judge-evaluate meta-evaluate` of a leaderboard against kiddie's truth, as the kit's run_kiddie.sh
    runs it (in-process)."""
    from autojudge_evaluate import main

    result = board.parent / "meta.jsonl"
    done = in_process(main, ["meta-evaluate", "--truth-leaderboard", str(tira_shape.KIDDIE_TRUTH), "--truth-format",
                             "ir_measures", "--truth-header", "--eval-format", "ir_measures", "--on-missing",
                             "default", "--input", str(board), "--output", str(result)], {"NLTK_DATA": str(nltk)})
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in result.read_text().splitlines() if line.strip()]
