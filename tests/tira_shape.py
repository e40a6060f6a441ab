"""TIRA's code submission as the track runs it, without docker: the `--command` of docs/autojudge.md expanded as
TIRA's shell expands it (`$inputDataset`, `$outputDir`, the globs), the workflows where the root Dockerfile
copies them (`/auto-judge/judges/proctor/`, laid out in a folder here), and a dataset in kiddie's layout
(`runs/<task>/*.jsonl`, `topics/*.jsonl`). Used by the submission tests and benchmarks/autojudge_kiddie.py."""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
from pathlib import Path

import yaml

from fake_openai import prompt_grade

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "autojudge.md"
DOCKERFILE = ROOT / "Dockerfile"
KIDDIE = Path(__file__).resolve().parent / "vendor" / "starter_kit" / "kiddie"
KIDDIE_TRUTH = KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt"
JUDGES = "/auto-judge/judges/proctor"
"""Where the image holds Proctor's workflows."""


def documented_commands() -> list[str]:
    """Every `--command '...'` of docs/autojudge.md (the tira-cli commands of the walkthrough)."""
    return re.findall(r"--command '([^']+)'", DOCS.read_text(encoding="utf-8"))


def documented_code_submissions() -> list[str]:
    """Every `tira-cli code-submission ...` of docs/autojudge.md, continuation lines joined."""
    text = DOCS.read_text(encoding="utf-8").replace("\\\n", " ")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip().startswith("tira-cli code-submission")]


def tira_command(workflow: str, variant: str) -> str:
    """The documented command for one workflow file and variant: the walkthrough's command with its workflow
    and variant replaced (the only parts a submission changes)."""
    (command, *_) = documented_commands()
    command = re.sub(rf"{JUDGES}/\S+\.yml", f"{JUDGES}/{workflow}", command)
    return re.sub(r"--variant \S+", f"--variant {variant}", command)


def dockerfile_copies() -> list[tuple[list[str], str]]:
    """(sources, destination) of every COPY / ADD of the root Dockerfile, in order (continuation lines joined)."""
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    copies = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0].upper() in ("COPY", "ADD"):
            args = [w for w in words[1:] if not w.startswith("--")]
            copies.append((args[:-1], args[-1]))
    return copies


def image_judges(folder: Path) -> Path:
    """The image's `/auto-judge/judges/proctor/` laid out under `folder` by the Dockerfile's own COPY lines."""
    target = folder / JUDGES.lstrip("/")
    target.mkdir(parents=True, exist_ok=True)
    for sources, destination in dockerfile_copies():
        if destination.rstrip("/") == JUDGES:
            for pattern in sources:
                for path in sorted(ROOT.glob(pattern)):
                    shutil.copy(path, target / path.name)
    return target


def tira_argv(command: str, input_dataset: Path, output_dir: Path, judges: Path) -> list[str]:
    """`auto-judge`'s arguments as TIRA's shell gives them: variables substituted, the image's judges folder
    mapped to `judges`, globs expanded (sorted, as bash expands them); the program name dropped."""
    command = command.replace("$inputDataset", str(input_dataset)).replace("$outputDir", str(output_dir))
    command = command.replace(JUDGES, str(judges))
    argv = []
    for word in shlex.split(command):
        matches = sorted(glob.glob(word)) if any(c in word for c in "*?[") else []
        argv.extend(matches or [word])
    assert argv[0] == "auto-judge", command
    return argv[1:]


def offered_variants() -> list[tuple[str, str]]:
    """(workflow file, variant) of every variant the shipped workflows offer for submission."""
    out = []
    for workflow in sorted((ROOT / "src" / "proctor" / "autojudge").glob("workflow*.yml")):
        variants = yaml.safe_load(workflow.read_text(encoding="utf-8")).get("variants") or {}
        out.extend((workflow.name, name) for name in variants)
    return out


def kiddie_dataset(folder: Path, topics: list[str] | None = None) -> Path:
    """The starter kit's kiddie inputs in TIRA's layout under `folder` (only `topics`, when given)."""
    for source in sorted(KIDDIE.glob("*/**/*.jsonl")):
        target = folder / source.relative_to(KIDDIE)
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = source.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if topics is None or _topic(json.loads(line)) in topics]
        target.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    return folder


def _topic(record: dict) -> str:
    """The topic of a kiddie topic or report line."""
    return record.get("request_id") or record["metadata"]["topic_id"]


def track_llm(prompt: str) -> str:
    """The test server as the LLM TIRA injects, deterministic: question and nugget sets named after the topic,
    importance, nugget assignments, UMBRELA scores, citation support and grades fixed by the prompt's hash."""
    grade = prompt_grade(prompt)
    if "Give the question set" in prompt:
        topic = prompt.split("'")[1]
        return json.dumps({"questions": [f"What is {topic}?", f"Why does {topic} matter?"]})
    if "Give the nugget set" in prompt:
        topic = prompt.split("'")[1]
        return json.dumps({"nuggets": [f"{topic} fact one", f"{topic} fact two"]})
    if "either a vital or okay" in prompt:
        return '["vital", "okay"]'
    if "support, partial_support, or not_support" in prompt:
        labels = ["support", "partial_support", "not_support"]
        return json.dumps([labels[grade % 3], labels[(grade + 1) % 3]])
    if "##final score" in prompt:
        return f"##final score: {grade % 4}"
    if '"Full Support", "Partial Support", or "No Support"' in prompt:
        return ("Full Support", "Partial Support", "No Support")[grade % 3]
    return str(grade)
