"""Screenshots of the review app for docs/: the overview, a query page, the impact view and the calibration page,
at 1280x800.

    PYTHONPATH=src:tests python benchmarks/review_screenshots.py [OUT_FOLDER (default docs)]

Builds the demo collection's store, grades it against the local OpenAI-compatible test server
(tests/fake_openai.py), starts `proctor review`, edits a question in chromium, publishes the draft, grades
what is new, records reviewer verdicts on two topics and photographs the pages.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def main() -> None:
    """Write review-overview.png, review-query.png, review-impact.png and review-calibration.png."""
    from playwright.sync_api import sync_playwright

    from conftest import run_process, seed_demo
    from fake_openai import FakeOpenAI

    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs")
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as llm:
        store = seed_demo(Path(tmp))
        assert run_process("grade", "--store", store, "--method", "self-rating", "--llm", "openai:judge",
                           "--base-url", llm.base_url).code == 0
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-m", "proctor", "review", "--store", str(store), "--port", str(port),
                                 "--llm", "openai:judge", "--base-url", llm.base_url], stderr=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        url = f"http://127.0.0.1:{port}"
        try:
            _wait(port)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url + "/")
                page.fill("header input[name=reviewer]", "alice")
                page.click("header button")
                page.click("#queries a:text('q1')")
                first = page.locator("#questions tbody tr").first
                first.locator("summary").click()
                first.locator("textarea[name=text]").fill("What do bees gather from blossoms to make honey?")
                first.locator("button[value=edit]").click()
                page.screenshot(path=str(out / "review-query.png"), full_page=False)
                page.click("#publish button")
                page.screenshot(path=str(out / "review-overview.png"), full_page=False)
                page.locator("#grade-sets tbody tr", has_text="bank@").first.locator("button").click()
                page.wait_for_selector("#job-done:not([hidden])", timeout=30000)
                page.click("#impact-link")
                page.screenshot(path=str(out / "review-impact.png"), full_page=False)
                for qid, pid, relevance in (("q1", "d101", 3), ("q1", "d104", 0), ("q2", "d201", 2), ("q3", "d305", 1)):
                    page.goto(f"{url}/cell?q={qid}&p={pid}&k=")
                    page.select_option("#judge select[name=relevance]", str(relevance))
                    with page.expect_navigation():
                        page.click("#judge button")
                page.goto(url + "/calibration")
                page.screenshot(path=str(out / "review-calibration.png"), full_page=False)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"wrote review-overview.png, review-query.png, review-impact.png, review-calibration.png to {out}")


def _wait(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the review server did not start")


if __name__ == "__main__":
    main()
