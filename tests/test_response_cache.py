"""The response cache of its own (`CACHE_DIR` for the AutoJudge judge, `cache_dir` in the API): TIRA's
deterministic re-run (run 1 with the local OpenAI-compatible server into out-dir A; run 2 with the server
stopped, the same CACHE_DIR, out-dir B: the same files byte for byte; run 3 with CACHE_FORCE_REFRESH=1 asks
every request again and records the new replies), for a variant that generates its bank with the LLM and
grades pairs, and one that generates nuggets with importance and grades whole answers; failures never
cached; two processes writing one cache at once; a file that is not Proctor's refused."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import autojudge_collection as collection
from conftest import raw_rows, raw_write
from fake_openai import FakeOpenAI, prompt_grade

ROOT = Path(__file__).resolve().parents[1]
needs_autojudge = pytest.mark.skipif(not importlib.util.find_spec("autojudge_base"),
                                     reason="needs the autojudge-base package (extra test)")


@pytest.fixture
def task(tmp_path, peer_nltk) -> dict[str, Path]:
    """The AutoJudge collection, with the NLTK folder autojudge-base looks in (nothing downloaded)."""
    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    return collection.write(tmp_path / "task")


def judge(task: dict[str, Path], out: Path, variant: str, nltk: Path, env: dict[str, str]):
    """`auto-judge run` in TIRA's shape (no banks given: the judge makes its own), in-process."""
    from test_autojudge import auto_judge

    return auto_judge(task, out, variant, nltk, env=env, banks=False)


def generating(shift: int = 0):
    """The server's replies: questions to the generation prompt, a grade (moved by `shift`) to the others."""
    def reply(prompt: str) -> str:
        if "Give the question set" in prompt:
            topic = prompt.split("'")[1]
            return json.dumps({"questions": [f"What is {topic}?", f"Why does {topic} matter?"]})
        return str((prompt_grade(prompt) + shift) % 6)
    return reply


def nuggetizing(shift: int = 0):
    """The server as a nuggetizer-style LLM: nuggets, their importance, assignments (moved by `shift`)."""
    labels = ["support", "partial_support", "not_support"]

    def reply(prompt: str) -> str:
        if "Give the nugget set" in prompt:
            topic = prompt.split("'")[1]
            return json.dumps({"nuggets": [f"{topic} fact one", f"{topic} fact two"]})
        if "either a vital or okay" in prompt:
            return '["vital", "okay"]'
        g = prompt_grade(prompt) + shift
        return json.dumps([labels[g % 3], labels[(g + 1) % 3]])
    return reply


def files(out: Path, variant: str, names: tuple[str, ...]) -> dict[str, bytes]:
    """The judge's output files by suffix."""
    return {name: (out / f"{variant}.{name}").read_bytes() for name in names}


@needs_autojudge
@pytest.mark.slow
@pytest.mark.parametrize("variant, replies, outputs", [
    ("llm", generating, ("eval.txt", "qrels.txt", "nuggets.jsonl")),  # bank generated, pairs graded
    ("nuggets", nuggetizing, ("eval.txt", "nuggets.jsonl")),  # nuggets with importance, answers graded
])
def test_tira_deterministic_rerun(task, tmp_path, peer_nltk, variant, replies, outputs):
    cache = tmp_path / "cache"
    key = {"OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k", "CACHE_DIR": str(cache)}
    with FakeOpenAI(reply=replies()) as server:
        env = {**key, "OPENAI_BASE_URL": server.base_url}
        first = judge(task, tmp_path / "A", variant, peer_nltk, env)
        assert first.returncode == 0, first.stderr[-3000:]
        asked = server.requests
    assert asked > 0 and "response cache:" in first.stderr
    assert sorted(p.name for p in cache.iterdir() if p.suffix == ".db") == ["proctor-llm-cache.db"]
    [(kept,)] = raw_rows(cache / "proctor-llm-cache.db", "SELECT COUNT(*) FROM llm_cache")
    assert kept == asked  # every reply of run 1 (bank generation and grading) is in CACHE_DIR
    assert not (tmp_path / "A" / f"{variant}.db").exists() or "llm_cache" not in _replies_in(tmp_path / "A")

    second = judge(task, tmp_path / "B", variant, peer_nltk, env)  # the server is gone
    assert second.returncode == 0, second.stderr[-3000:]
    assert files(tmp_path / "B", variant, outputs) == files(tmp_path / "A", variant, outputs)

    with FakeOpenAI(reply=replies(shift=1)) as server:  # the LLM now answers otherwise
        env = {**key, "OPENAI_BASE_URL": server.base_url, "CACHE_FORCE_REFRESH": "1"}
        third = judge(task, tmp_path / "C", variant, peer_nltk, env)
        assert third.returncode == 0, third.stderr[-3000:]
        assert server.requests == asked  # every request sent again
    refreshed = files(tmp_path / "C", variant, outputs)
    assert refreshed["eval.txt"] != files(tmp_path / "A", variant, outputs)["eval.txt"]
    env = {**key, "OPENAI_BASE_URL": env["OPENAI_BASE_URL"]}  # down again, no refresh: the new replies replay
    fourth = judge(task, tmp_path / "D", variant, peer_nltk, env)
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert files(tmp_path / "D", variant, outputs) == refreshed


@needs_autojudge
@pytest.mark.slow
def test_tira_deterministic_rerun_of_the_embedded_variant(task, tmp_path, peer_nltk):
    """`embedded` in TIRA's shape: its bank generated with the injected LLM (cached under CACHE_DIR), its grades
    MiniLM's; a fresh out-dir with the endpoint down writes the same files."""
    cache = tmp_path / "cache"
    key = {"OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k", "CACHE_DIR": str(cache)}
    outputs = ("eval.txt", "qrels.txt", "nuggets.jsonl")
    with FakeOpenAI(reply=generating()) as server:
        first = judge(task, tmp_path / "A", "embedded", peer_nltk, {**key, "OPENAI_BASE_URL": server.base_url})
        assert first.returncode == 0, first.stderr[-3000:]
        asked, url = server.requests, server.base_url
    [(kept,)] = raw_rows(cache / "proctor-llm-cache.db", "SELECT COUNT(*) FROM llm_cache")
    assert asked > 0 and kept == asked  # the bank generation's replies
    second = judge(task, tmp_path / "B", "embedded", peer_nltk, {**key, "OPENAI_BASE_URL": url})  # server gone
    assert second.returncode == 0, second.stderr[-3000:]
    assert files(tmp_path / "B", "embedded", outputs) == files(tmp_path / "A", "embedded", outputs)


def _replies_in(out: Path) -> str:
    """'llm_cache' when the store in an out-dir holds cached replies (it should not: CACHE_DIR holds them)."""
    [store] = out.glob("*.db")
    [(count,)] = raw_rows(store, "SELECT COUNT(*) FROM llm_cache")
    return "llm_cache" if count else ""


@needs_autojudge
@pytest.mark.slow
def test_failures_are_never_cached(task, tmp_path, peer_nltk):
    """Server errors on some pairs: the run fails naming them; the cache keeps only the good replies, and a
    fresh out-dir with the server healthy asks only for the failed ones."""
    cache = tmp_path / "cache"
    key = {"OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k", "CACHE_DIR": str(cache)}
    broken = FakeOpenAI(reply=generating(), faults=lambda prompt, attempt: "500" if "Bees make honey" in prompt
                        else "ok")
    with broken as server:
        env = {**key, "OPENAI_BASE_URL": server.base_url}
        from test_autojudge import auto_judge

        done = auto_judge(task, tmp_path / "A", "llm", peer_nltk, "--set", "max_retries=0", env=env, banks=False)
        assert done.returncode == 2 and "have no grade: not in the cache of" in done.stderr
        assert str(cache / "proctor-llm-cache.db") in done.stderr
        failed = sum(1 for prompt in server.attempts if "Bees make honey" in prompt)
    kept = raw_rows(cache / "proctor-llm-cache.db", "SELECT reply FROM llm_cache")
    assert failed > 0 and all("boom" not in reply for (reply,) in kept)
    with FakeOpenAI(reply=generating()) as server:
        env = {**key, "OPENAI_BASE_URL": server.base_url}
        again = judge(task, tmp_path / "B", "llm", peer_nltk, env)
        assert again.returncode == 0, again.stderr[-3000:]
        assert server.requests == failed  # only what failed is asked again


@needs_autojudge
def test_a_bad_force_refresh_value_is_refused(task, tmp_path, peer_nltk):
    env = {"OPENAI_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "CACHE_DIR": str(tmp_path / "c"),
           "CACHE_FORCE_REFRESH": "maybe"}
    done = judge(task, tmp_path / "A", "llm", peer_nltk, env)
    assert done.returncode == 2 and "CACHE_FORCE_REFRESH='maybe': 1 (on) or 0 (off)" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "A" / "llm.db").exists()


def test_a_file_that_is_not_a_proctor_cache_is_refused(tmp_path):
    from proctor.errors import UsageError
    from proctor.store.response_cache import ResponseCache

    raw_write(tmp_path / "proctor-llm-cache.db", "CREATE TABLE other (x)")
    with pytest.raises(UsageError, match="another program's SQLite file"):
        ResponseCache.in_folder(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        ResponseCache.in_folder(tmp_path / "file")


WRITER = """
import sys
from proctor.store.response_cache import ResponseCache
folder, name = sys.argv[1], sys.argv[2]
with ResponseCache.in_folder(folder) as cache:
    for n in range(200):
        cache.cache_put([(f"{name}-{n}", "openai", "m", {"text": str(n), "tokens": 1})])
        assert cache.cache_get_many([f"{name}-{n}"])[f"{name}-{n}"]["text"] == str(n)
"""


def test_two_processes_share_one_cache(tmp_path):
    """Two judges writing one CACHE_DIR at once (each reply its own transaction): every reply is kept."""
    from proctor.store.response_cache import ResponseCache

    env = {"PYTHONPATH": str(ROOT / "src")}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name], env=env,
                                stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    for writer in writers:
        assert writer.wait(120) == 0, writer.stderr.read()
    with ResponseCache.in_folder(tmp_path) as cache:
        assert cache.cache_count() == 400
        assert cache.cache_get_many(["a-7", "b-199"])["b-199"]["text"] == "199"


def test_grade_with_a_cache_dir_shared_by_two_stores(cli, tmp_path):
    """`proctor grade --cache-dir`: a second store grades the same pairs from the shared cache with the server
    stopped (the same grades); `--cache-refresh` asks again; refreshing without a cache is refused."""
    from types import SimpleNamespace

    from conftest import grades_of, opened_store, seed_demo
    from grading_fixture import grade_args

    cache = ["--cache-dir", str(tmp_path / "cache")]
    one, two, three = (seed_demo(tmp_path / name) for name in ("one", "two", "three"))
    with FakeOpenAI() as server:
        first = cli(*grade_args(one, server, *cache))
        assert first.code == 0, first.err
        asked = server.requests
        url = server.base_url
    assert asked == json.loads(first.out)["graded_now"] > 0
    second = cli(*grade_args(two, SimpleNamespace(base_url=url), *cache))  # the server is gone
    assert second.code == 0, second.err
    summary = json.loads(second.out)
    assert summary["cache_hits"] == summary["graded_now"] == asked and summary["failures"] == 0
    assert [(g.query_id, g.passage_id, g.question_id, g.grade) for g in grades_of(two, "self-rating", "m")] == [
        (g.query_id, g.passage_id, g.question_id, g.grade) for g in grades_of(one, "self-rating", "m")]
    with opened_store(two) as store:
        assert store.caches.cache_count() == 0  # the replies live in the shared cache, not in the store
    with FakeOpenAI() as server:
        third = cli(*grade_args(three, server, *cache, "--cache-refresh"))
        assert third.code == 0 and server.requests == asked
    refused = cli(*grade_args(three, SimpleNamespace(base_url=url), "--cache-refresh"))
    assert refused.code == 2 and "--cache-refresh refreshes the response cache of --cache-dir DIR" in refused.err


def test_with_a_cache_dir_the_endpoint_is_checked_once_per_run_not_once_per_step(cli, tmp_path):
    """Four-prompts grades in two steps (criteria, then the label prompt); with `--cache-dir` the endpoint is checked
    before the first request that the cache cannot answer, and that check holds for the later steps."""
    from conftest import seed_demo

    store = seed_demo(tmp_path / "s")
    with FakeOpenAI() as server:
        graded = cli("grade", "--store", store, "--method", "four-prompts", "--llm", "openai:m", "--base-url",
                     server.base_url, "--cache-dir", str(tmp_path / "cache"), "--format", "json")
        assert graded.code == 0, graded.err
        steps = json.loads(graded.out)["steps"]
        assert len(steps) >= 2 and all(s["llm_calls"] for s in steps[:2])  # two steps asked the server
        assert server.model_lists == 1


@needs_autojudge
@pytest.mark.slow
def test_what_the_cache_lacks_is_named(task, tmp_path, peer_nltk):
    """A new run after run 1, the endpoint down, a fresh out-dir: the pairs the CACHE_DIR cannot answer are
    counted exactly and named, with the cache's file; nothing is written."""
    import shutil

    cache = tmp_path / "cache"
    key = {"OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k", "CACHE_DIR": str(cache)}
    with FakeOpenAI(reply=generating()) as server:
        env = {**key, "OPENAI_BASE_URL": server.base_url}
        assert judge(task, tmp_path / "A", "llm", peer_nltk, env).returncode == 0
    new = task["responses"] / "gen-new.jsonl"
    shutil.copy(task["responses"] / "gen-good.jsonl", new)
    new.write_text(new.read_text().replace('"gen-good"', '"gen-new"').replace("Bees make honey", "Bees produce honey"))
    from test_autojudge import auto_judge

    done = auto_judge(task, tmp_path / "B", "llm", peer_nltk, "--set", "max_retries=0", "--set", "timeout=2",
                      env=env, banks=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    message = done.stderr[done.stderr.index("proctor: error:"):]
    assert "2 pairs (self-rating / openai:judge-model) are not in the cache of " in message  # 1 sentence x 2
    assert str(cache / "proctor-llm-cache.db") in message and "sentence gen-new/q1/0" in message
    assert not (tmp_path / "B" / "llm.eval.txt").exists()


def test_bank_generate_replays_from_the_cache_dir(cli, tmp_path):
    """`proctor bank generate --cache-dir`: the same bank file byte for byte with the server stopped (the lines
    record when their replies were first received); a failed reply is not kept."""
    from types import SimpleNamespace

    queries = tmp_path / "q.tsv"
    queries.write_text("q1\thow do bees make honey\nq2\twhy is the sky blue\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]

    def generate(server, out: str, *extra: str):
        return cli("bank", "generate", "--queries", str(queries), "--llm", "openai:m", "--base-url", server.base_url,
                   "--max-retries", "0", "--retries", "0", "--out", str(tmp_path / out), *cache, *extra)

    with FakeOpenAI(reply=generating(), faults=lambda p, a: "500" if "sky" in p else "ok") as server:
        assert generate(server, "a.jsonl").code == 0  # q2 failed (reported), q1 written: only q1 kept
        assert [json.loads(line)["query_id"] for line in (tmp_path / "a.jsonl").read_text().splitlines()] == ["q1"]
        url = server.base_url
    with FakeOpenAI(reply=generating()) as server:
        assert generate(server, "b.jsonl").code == 0
        assert server.requests == 1  # q1 from the cache, q2 asked
    again = generate(SimpleNamespace(base_url=url), "c.jsonl")  # no server
    assert again.code == 0, again.err
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


@needs_autojudge
@pytest.mark.slow
def test_the_kit_llm_config_names_the_cache_and_its_model_choice_replays(task, tmp_path, peer_nltk):
    """The starter kit's llm-config.yml with `cache_dir`: the model chosen from `model_preferences` is kept in
    the cache folder, so a fresh out-dir without the endpoint grades with the same model and writes the same."""
    config = tmp_path / "llm-config.yml"
    config.write_text(f'model_preferences: ["big-model", "mid-model"]\non_no_match: "error"\n'
                      f'cache_dir: "{tmp_path / "cache"}"\n')
    from test_autojudge import auto_judge

    with FakeOpenAI(reply=generating(), models=["mid-model"]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "small-model", "OPENAI_API_KEY": "k"}
        first = auto_judge(task, tmp_path / "A", "llm", peer_nltk, "--set", f"llm_config_file={config}", env=env,
                           banks=False)
        assert first.returncode == 0, first.stderr[-3000:]
    assert list((tmp_path / "cache").glob("proctor-model-choice-*.json"))
    second = auto_judge(task, tmp_path / "B", "llm", peer_nltk, "--set", f"llm_config_file={config}", env=env,
                        banks=False)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "using the model chosen on the first run: mid-model" in second.stderr
    assert files(tmp_path / "B", "llm", ("eval.txt", "qrels.txt", "nuggets.jsonl")) == files(
        tmp_path / "A", "llm", ("eval.txt", "qrels.txt", "nuggets.jsonl"))


def test_cache_settings_file_over_environment(tmp_path, monkeypatch):
    """`cache_dir` / `force_refresh` of the LLM configuration file over AutoJudge's and the environment's, as
    minima-llm reads them; wrong types refused naming the file."""
    from proctor.autojudge.llm_config import cache_choice
    from proctor.errors import InputError

    monkeypatch.setenv("CACHE_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("CACHE_FORCE_REFRESH", "1")
    assert cache_choice(None, None) == (str(tmp_path / "env"), True)
    assert cache_choice(None, tmp_path / "runner") == (str(tmp_path / "runner"), True)
    config = tmp_path / "llm-config.yml"
    config.write_text("cache_dir: ./mine\nforce_refresh: false\n")
    assert cache_choice(str(config), tmp_path / "runner") == ("./mine", False)
    monkeypatch.delenv("CACHE_DIR")
    assert cache_choice(None, None) == (None, False)  # refreshing nothing: ignored, as before
    config.write_text("force_refresh: 1\n")
    with pytest.raises(InputError, match="force_refresh: true or false"):
        cache_choice(str(config), None)
