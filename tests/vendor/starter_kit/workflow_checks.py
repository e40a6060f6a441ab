"""The TREC AutoJudge starter kit's own workflow checks, vendored from
https://github.com/trec-auto-judge/auto-judge-starter-kit at commit fd0a0b8d4035fd1373db542f3c29c656525712ca
("prepare config for 2026 test data"; MIT licence), files:

- tests/test_examples.py: `test_workflow_parses_and_classes_import`
- tests/test_workflow_consistency.py: `PHASE_RULES`, `_load_class`, `test_enabled_phases_are_implemented`
- tests/test_endpoint_contract.py: `_uses_llm`, `_RecordingEndpoint`, `test_judge_uses_injected_endpoint`
- data/kiddie/ (beside this file): the kiddie runs and topics the endpoint check runs on, and kiddie's truth

The kit discovers its judges as git-tracked `judges/*/workflow.yml` and parametrizes each test over them; here
each test body is a function of the workflow (Proctor's tests parametrize it over the shipped workflows). The
changes, nothing else: the functions are named `check_*` instead of `test_*` and take their inputs as
arguments (the kiddie folder, the working folder, extra environment — Proctor's tests add the source folder
and the NLTK stub), the `pytest.skip` on a failed class import is an assertion (Proctor's classes must import),
and the assertion messages name `workflow.name` (the kit's `workflow.parent.name` is one folder for both
of Proctor's workflows)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import yaml

KIDDIE = Path(__file__).parent / "kiddie"
KIDDIE_RESPONSES = KIDDIE / "runs" / "repgen"
KIDDIE_TOPICS = KIDDIE / "topics" / "kiddie-topics.jsonl"
KIDDIE_TRUTH = KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt"

# (flag that turns the phase on, method the resolved class must implement,
#  the class key that overrides judge_class for this phase, flag default).
# Defaults match the runner: judge runs unless disabled; nuggets/qrels are opt-in.
PHASE_RULES = [
    ("create_nuggets", "create_nuggets", "nugget_class", False),
    ("create_qrels", "create_qrels", "qrels_class", False),
    ("judge", "judge", "judge_class", True),
]


def _load_class(ref):
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr, None)


def check_workflow_parses_and_classes_import(workflow: Path) -> None:
    """Every judge defined in this repo has a parseable workflow.yml whose declared
    classes import. (kit: tests/test_examples.py)"""
    cfg = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    refs = [cfg[k] for k in ("judge_class", "nugget_class", "qrels_class") if cfg.get(k)]
    assert refs, f"{workflow} declares no judge/nugget/qrels class"
    for ref in refs:
        module_name, _, attr = ref.partition(":")
        module = importlib.import_module(module_name)
        assert hasattr(module, attr), f"{ref}: {attr} not found in {module_name}"


def check_enabled_phases_are_implemented(workflow: Path) -> None:
    """A phase the workflow turns on is implemented by the class that runs it.
    (kit: tests/test_workflow_consistency.py)"""
    cfg = yaml.safe_load(workflow.read_text(encoding="utf-8")) or {}
    for flag, method, class_key, default in PHASE_RULES:
        if not cfg.get(flag, default):
            continue
        ref = cfg.get(class_key) or cfg.get("judge_class")
        assert ref, (
            f"{workflow.name}: {flag} is on but neither {class_key} nor "
            f"judge_class is declared to run that phase."
        )
        cls = _load_class(ref)
        assert cls is not None, f"{workflow.name}: class {ref} not found"
        assert callable(getattr(cls, method, None)), (
            f"{workflow.name}: {flag} is on and resolves to {ref}, but that "
            f"class does not implement {method}(). Implement it, or set {flag}: false."
        )


def uses_llm(workflow: Path) -> bool:
    """A judge declares `uses_llm: false` in its own workflow.yml when it makes
    no LLM calls (the kit then expects the endpoint check to fail). (kit: tests/test_endpoint_contract.py)"""
    return yaml.safe_load(workflow.read_text(encoding="utf-8")).get("uses_llm", True)


class RecordingEndpoint:
    """Minimal OpenAI-compatible /v1/chat/completions server that logs requests.
    (kit: tests/test_endpoint_contract.py, `_RecordingEndpoint`)"""

    def __init__(self):
        self.hits = 0
        self.models_seen = set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:  # noqa: SIM105 (the kit's code as it is)
                    outer.models_seen.add(json.loads(body).get("model"))
                except Exception:
                    pass
                outer.hits += 1
                payload = json.dumps({
                    "id": "fake", "object": "chat.completion", "created": 0,
                    "model": "fake", "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": "1"}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # /v1/models etc.
                payload = json.dumps({"object": "list", "data": [{"id": "test-model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):  # keep pytest output clean
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def shutdown(self):
        self.server.shutdown()


def check_judge_uses_injected_endpoint(workflow: Path, tmp_path: Path, cwd: Path, extra_env: dict[str, str]
                                       ) -> subprocess.CompletedProcess:
    """The judge, run by the track's runner on kiddie's first topic, contacts the injected endpoint with the
    injected model. (kit: tests/test_endpoint_contract.py, `test_judge_uses_injected_endpoint`)"""
    endpoint = RecordingEndpoint()
    env = dict(
        os.environ,
        **extra_env,
        OPENAI_BASE_URL=f"http://127.0.0.1:{endpoint.port}/v1",
        OPENAI_API_KEY="test-key",
        OPENAI_MODEL="test-model",
        CACHE_DIR=str(tmp_path / "cache"),   # fresh: cache hits must not mask the contact
        # keep LLM clients snappy against the fake endpoint
        MAX_ATTEMPTS="1", TIMEOUT_S="20", RPM="10000",
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "autojudge_base.cli", "run",
             "--workflow", str(workflow),
             "--rag-responses", str(KIDDIE_RESPONSES),
             "--rag-topics", str(KIDDIE_TOPICS),
             "--limit-topics", "1",
             "--out-dir", str(tmp_path / "out")],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
        )
    finally:
        endpoint.shutdown()

    assert "Failed to load judge classes" not in (proc.stderr or ""), proc.stderr[-2000:]

    # Nonsense answers may legitimately make an LLM judge fail later; the
    # contract under test is only that it talked to the injected endpoint.
    assert endpoint.hits > 0, (
        "the judge never contacted the injected OPENAI_BASE_URL endpoint — it is "
        "probably not routing the task-provided environment variables into its "
        "LLM client (judges without LLM calls declare uses_llm: false in their workflow.yml)\n"
        f"stderr tail: {proc.stderr[-2000:]}"
    )
    assert "test-model" in endpoint.models_seen, (
        f"the judge contacted the endpoint but requested {endpoint.models_seen} "
        "instead of the injected OPENAI_MODEL"
    )
    return proc
