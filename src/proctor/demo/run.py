"""`proctor demo`: write the example collection and the bundled experiment file `demo.toml` into the out
folder and run it (`proctor run OUT/demo.toml`): import through the public readers, grade with the embedded
default grader (embed:minilm), write and print the EXAM-Qrels, EXAM-Cover and human-judgment leaderboards.
Every step is headed by the commands that do the same; a second demo finds nothing changed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import proctor
from proctor.api.experiments import folder_target
from proctor.demo.write import write_collection

EXPERIMENT = Path(__file__).with_name("demo.toml")


def run_demo(out: str | Path) -> int:
    """Run the demo experiment in folder `out`; return an exit status."""
    out = folder_target(out)
    write_collection(out / "collection")
    experiment = out / "demo.toml"
    shutil.copyfile(EXPERIMENT, experiment)
    _step(f"run {experiment}")
    result = proctor.run_experiment(experiment, log=lambda line: print(f"proctor: {line}", file=sys.stderr))
    steps = result.manifest["steps"]
    for name in ("import", "grade:embedding", "evaluate"):
        for command in steps[name]["commands"]:
            _step(command.removeprefix("proctor "))
            if name == "evaluate" and " --format md" in command:
                sys.stdout.write(Path(command.split(" > ")[1]).read_text(encoding="utf-8"))
        if name == "grade:embedding":
            grade_set, usage = steps[name]["grade_set"], steps[name]["usage"]
            now = f"{usage['graded_now']} graded now" if name in result.ran else "unchanged: nothing graded now"
            print(f"grade set {grade_set['id']} ({grade_set['method']} / {grade_set['model']}): "
                  f"{grade_set['grades']} grades ({now})")
    qrels = out / "exam.qrels"
    shutil.copyfile(out / "qrels" / "embedding.qrels", qrels)
    print(f"\nDone. The experiment is {experiment} (run it again with `proctor run {experiment}`: nothing changed, "
          f"nothing to do); the store is {out / 'demo.db'}; leaderboards are in {out / 'leaderboards'}, EXAM-Qrels "
          f"in {qrels}, and {out / 'run.json'} says how everything was made. The grades come from the embedded "
          "default grader (all-MiniLM-L6-v2 similarity); a [[grade]] table with method = \"self-rating\" and "
          "llm = \"openai:MODEL\" grades with an LLM.")
    return result.status


def _step(command: str) -> None:
    print(f"\n$ proctor {command}", flush=True)
