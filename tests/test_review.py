"""`proctor review`: a real uvicorn server over the demo store, driven by Debian's chromium through Playwright,
grading against the local OpenAI-compatible test server."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, seed_demo
from fake_openai import FakeOpenAI
from inprocess import run_in_thread
from proctor.cli import main
from proctor.store import Store

CHROMIUM = shutil.which("chromium-headless-shell") or shutil.which("chromium") or "/usr/bin/chromium"
"""Debian's headless shell of chromium (package chromium-headless-shell, the engine without the browser's own UI:
about half the CPU of chromium's headless mode), or chromium itself where the shell is not installed."""
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE_RUN = "<img/src=x/onerror=window.pwned=3>"
HOSTILE = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> <a href=\"javascript:alert(3)\">x</a>"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`proctor review` on a free port: a real process (the command as a user starts it; its banner read from its
    standard error), or with `in_process` the same command (`proctor.cli.main`: its options, checks and banner)
    on a thread of this process, serving through a real uvicorn server on the port. The tests that pass
    `in_process` drive the app over HTTP and read the store: the process boundary is not what they test, and a
    thread spares starting an interpreter and importing Starlette, Jinja2 and uvicorn again (about 0.5 s of CPU
    a server). `test_other_hosts_need_a_token_and_requests_without_it_are_refused` keeps the real process."""

    def __init__(self, store: Path, *extra: str, in_process: bool = False) -> None:
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = ["review", "--store", str(store), "--port", str(self.port), *extra]
        self.proc: subprocess.Popen | None = None
        if in_process:
            self._start_here(args)
            return
        self.proc = subprocess.Popen([sys.executable, "-m", "proctor", *args], cwd=ROOT, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        self.banner = self.proc.stderr.readline()  # type: ignore[union-attr]
        for _ in range(200):  # the banner comes before uvicorn listens: try the port, waiting on the process between
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                try:
                    status = self.proc.wait(0.05)
                except subprocess.TimeoutExpired:
                    continue
                raise RuntimeError(f"the review server ended (status {status}): {self.banner}") from None
        raise RuntimeError(f"the review server did not start: {self.banner}")

    def _start_here(self, args: list[str]) -> None:
        """Run `proctor review ARGS` on a thread; return once uvicorn has started (it says so in its `started`)."""
        self.banner = None
        self.servers: list = []  # the uvicorn server, once `proctor review` has built it (`_run_in_thread`)
        self.code: int | None = None

        def serve() -> None:
            _IN_THREAD.servers = self.servers
            self.code = main(args)

        _hook_uvicorn()
        self.thread = threading.Thread(target=serve, daemon=True, name=f"review-{self.port}")
        self.thread.start()
        end = time.monotonic() + 30
        while not (self.servers and self.servers[0].started):
            if not self.thread.is_alive():
                raise RuntimeError(f"the review server ended (status {self.code})")
            if time.monotonic() > end:
                raise RuntimeError("the review server did not start")
            self.thread.join(0.005)

    def get(self, path: str, headers: dict | None = None, data: bytes | None = None, method: str | None = None):
        request = urllib.request.Request(self.url + path, data=data, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def stop(self) -> None:
        if self.proc is None:
            self.servers[0].should_exit = True
            self.thread.join(10)
            assert not self.thread.is_alive() and self.code == 0, self.code
            return
        self.proc.terminate()
        self.proc.wait(10)


_IN_THREAD = threading.local()
"""`servers`: where `proctor review`, run on this thread by `Server(in_process=True)`, puts its uvicorn server."""


def _hook_uvicorn() -> None:
    """Let `uvicorn.run` (which `proctor review` calls) hand its server to the `Server` that runs it on a thread,
    which stops it by its `should_exit`; on any other thread `uvicorn.run` is uvicorn's own."""
    import uvicorn

    if getattr(uvicorn.run, "hooked", False):
        return
    original = uvicorn.run

    def run(app, **options) -> None:
        servers = getattr(_IN_THREAD, "servers", None)
        if servers is None:
            return original(app, **options)
        server = uvicorn.Server(uvicorn.Config(app, **options))
        servers.append(server)
        server.run()

    run.hooked = True
    uvicorn.run = run


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo store with hostile texts in a pool passage and a question, graded, and a review server."""
    root = tmp_path_factory.mktemp("review")
    store = seed_demo(root)
    bank = root / "collection" / "bank.jsonl"
    lines = [json.loads(line) for line in bank.read_text().splitlines()]
    lines[0]["items"].append({"question_id": "q1/hostile", "question_text": "Bees? " + HOSTILE})
    bank.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["import", "bank", str(bank), "--store", str(store)]) == 0
    run = root / "hostile.run"
    run.write_text((root / "collection" / "runs" / "weak.run").read_text().replace(" weak", " " + HOSTILE_RUN))
    assert main(["import", "runs", str(run), "--store", str(store)]) == 0
    opened = Store.open(store)
    hostile_pid = sorted(opened.corpus.judgments()["q1"])[0]
    with opened.transaction():
        opened.corpus.upsert_passages([(hostile_pid, "Honey passage " + HOSTILE)])
    opened.close()
    with FakeOpenAI() as llm:
        graded = run_in_thread("grade", "--store", store, "--method", "self-rating", "--llm", "openai:judge",
                               "--base-url", llm.base_url)  # a thread: Playwright's loop may run in this one
        assert graded.code == 0, graded.err
        server = Server(store, "--llm", "openai:judge", "--base-url", llm.base_url, in_process=True)
        try:
            yield {"store": store, "server": server, "llm": llm, "pid": hostile_pid}
        finally:
            server.stop()


@pytest.mark.slow
def test_other_hosts_need_a_token_and_requests_without_it_are_refused(demo, browser, cli):
    refused = cli("review", "--store", demo["store"], "--host", "0.0.0.0")
    assert refused.code == 2 and "--token" in refused.err and "Traceback" not in refused.err
    token = "t" * 24
    server = Server(demo["store"], "--token", token)
    try:
        assert server.get("/")[0] == 401
        assert server.get("/", {"Authorization": "Bearer " + "x" * 24})[0] == 403
        assert server.get("/static/review.css")[0] == 401
        status, body = server.get("/", {"Authorization": f"Bearer {token}"})
        assert status == 200 and "Overview" in body
        assert f"?token={token}" in server.banner
        page = browser.new_page()
        page.goto(f"{server.url}/?token={token}")  # once: the cookie carries it from then on
        assert page.url == server.url + "/" and page.locator("#queries").count() == 1
        page.fill("header input[name=reviewer]", "eve")
        with page.expect_navigation():
            page.click("header button")
        assert page.locator("header input[name=reviewer]").input_value() == "eve"
        page.close()
        busy = cli("review", "--store", demo["store"], "--port", server.port)
        assert busy.code == 2 and "cannot listen" in busy.err and "Traceback" not in busy.err
    finally:
        server.stop()


def test_a_generated_token_is_random_and_short_tokens_are_refused():
    from proctor.errors import UsageError
    from proctor.review.app import check_bind

    first, second = check_bind("0.0.0.0", None, True), check_bind("::", None, True)
    assert first != second and len(first) >= 24
    assert check_bind("127.0.0.1", None, False) is None and check_bind("::1", None, False) is None
    with pytest.raises(UsageError, match="^host 192.168.1.5 exposes the review app beyond this machine: give token T "
                       r"\(or generate_token\)") as refused:
        check_bind("192.168.1.5", None, False)  # the parameters' names in Python, the flags on the command line:
    assert refused.value.as_options().startswith("--host 192.168.1.5 exposes the review app beyond this machine: "
                                                 "give --token T (or --generate-token)")
    with pytest.raises(UsageError, match="16 characters"):
        check_bind("0.0.0.0", "short", False)


def _everything(path: Path) -> tuple:
    store = Store.open(path)
    try:
        return store.dump(), store.review.audit(), store.review.review_judgments(), store.review.open_draft("bank")
    finally:
        store.close()


def test_state_changes_need_post_and_csrf_and_gets_change_nothing(demo):
    server, before = demo["server"], _everything(demo["store"])
    for path in ("/", "/query/q1", "/audit", "/judgments.qrels", f"/cell?q=q1&p={demo['pid']}&k=q1/hostile"):
        assert server.get(path)[0] == 200, path
    assert server.get("/", {"Host": "evil.example"})[0] == 403  # DNS rebinding
    form = b"bank=bank&query_id=q1&text=sneaky&csrf=forged"
    for path in ("/question/add", "/publish", "/judgment", "/grade", "/reviewer", "/question/edit", "/draft/discard",
                 "/jobs/1/cancel"):
        assert server.get(path, data=form, method="POST")[0] == 403, path
    assert server.get("/question/add", method="PUT", data=form)[0] == 405
    status, headers = _headers(server.url + "/")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert _everything(demo["store"]) == before


def _headers(url: str):
    with urllib.request.urlopen(url) as response:
        return response.status, response.headers


@pytest.fixture(scope="module")
def browser():
    """One chromium for the module's tests (each test opens its own contexts)."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield launched
        launched.close()


def _page(browser, server: Server, name: str):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.goto(server.url + "/")
    page.fill("header input[name=reviewer]", name)
    with page.expect_navigation():  # the form posts and redirects: read the page only once it has arrived
        page.click("header button")
    page.wait_for_load_state()
    assert "Overview" in page.content(), page.content()
    return page


def _follow(page, target) -> None:
    """Click what navigates (a link, a form's button) and read on only once the next page has loaded."""
    with page.expect_navigation():
        (page.locator(target) if isinstance(target, str) else target).click()
    page.wait_for_load_state()


def _safe(page) -> None:
    """Hostile text is shown as text: no dialog, no script or image it brought, nothing it set."""
    assert page.dialogs == []
    assert page.evaluate("window.pwned === undefined")
    assert page.evaluate("Array.from(document.scripts).map(s => s.getAttribute('src'))") == ["/static/review.js"]
    assert page.locator("img[src=x]").count() == 0 and page.locator("a[href^='javascript:']").count() == 0


@pytest.mark.slow
def test_review_edit_publish_grade_impact_and_judge_in_a_browser(demo, browser):
    server, store = demo["server"], demo["store"]
    alice, bob = _page(browser, server, "alice"), _page(browser, server, "bob <b>")
    assert alice.locator("#queries tbody tr").count() == 4
    _follow(alice, "#queries a:text('q1')")
    bob.goto(alice.url)
    assert HOSTILE in alice.locator("#questions").inner_text()
    assert alice.locator("#matrix tbody tr").count() == 6 and alice.locator("#matrix thead th.col").count() == 4
    _safe(alice)
    heads = alice.locator("#matrix thead th.col")  # the heat map is a table: each column under its header
    cells = alice.locator("#matrix tbody tr").first.locator("td.g")
    for i in (0, 3):
        assert abs(heads.nth(i).bounding_box()["x"] - cells.nth(i).bounding_box()["x"]) < 1
    # keyboard navigation on the matrix, then a cell's detail
    alice.locator("#matrix a.cell").first.focus()
    alice.keyboard.press("ArrowRight")
    alice.keyboard.press("ArrowDown")
    assert alice.evaluate("document.activeElement.closest('tr').rowIndex") == 2
    # alice edits the first question; bob, who loaded the page before, is refused and sees her edit
    first = alice.locator("#questions tbody tr").first
    question_id = first.get_attribute("data-question")
    first.locator("summary").click()
    first.locator("textarea[name=text]").fill("What do bees gather from blossoms?")
    _follow(alice, first.locator("button[value=edit]"))
    assert "edited" in alice.locator(f"#questions tr[data-question='{question_id}']").inner_text()
    other = bob.locator(f"#questions tr[data-question='{question_id}']")
    other.locator("summary").click()
    other.locator("textarea[name=text]").fill("Bob's wording")
    with bob.expect_navigation():
        other.locator("button[value=edit]").click()
    bob.wait_for_load_state()
    assert "another reviewer changed this question first" in bob.content()
    assert "What do bees gather from blossoms?" in bob.locator("#other-after").inner_text()
    assert "alice" in bob.locator("#conflict").inner_text() and bob.locator("#mine").inner_text() == "Bob's wording"
    # publish: a new bank version beside the old one
    _follow(alice, "#publish button")
    versions = [b for b in Store.open(store).banks.versions() if b["bank"] == "bank"]
    assert len(versions) == 3 and versions[-1]["latest"] and versions[-1]["source"].startswith("review draft")
    # grade what is new: only the edited question's 6 pairs go to the backend
    sent = demo["llm"].requests
    _follow(alice, alice.locator("#grade-sets tbody tr", has_text="bank@").first.locator("button"))
    alice.wait_for_selector("#job-done:not([hidden])", timeout=20000)
    assert demo["llm"].requests - sent == 6
    assert alice.locator("#job-progress").inner_text() == "78 of 78 pairs"
    _follow(alice, "#impact-link")
    assert alice.locator("#leaderboards tbody tr").count() == 5
    assert HOSTILE_RUN in alice.locator("#leaderboards").inner_text()
    _safe(alice)
    assert alice.locator("#tau").inner_text() not in ("", "—")
    # a reviewer judgment, with provenance, exported as qrels
    alice.goto(server.url + "/query/q1")
    with alice.expect_navigation():
        alice.locator("#matrix a.cell").first.click()
    alice.wait_for_load_state()
    _safe(alice)
    passage = alice.locator("h1").inner_text().split()[1]
    question = alice.locator("#cell-question").inner_text()
    assert alice.locator("#raw-reply").inner_text() in {str(g) for g in range(6)}  # the test server's reply
    assert "parse status" in alice.content()
    prompt = alice.locator("#prompt").inner_text()
    assert question in prompt and alice.locator("#cell-passage").inner_text()[:40] in prompt
    alice.select_option("#judge select", "2")
    with alice.expect_navigation():
        alice.click("#judge button")
    alice.wait_for_load_state()
    assert "2 by alice" in alice.content()
    qrels = alice.request.get(server.url + "/judgments.qrels").text()
    assert f"q1 0 {passage} 2\n" == qrels
    audit = alice.goto(server.url + "/audit") and alice.locator("#audit").inner_text()
    assert "publish" in audit and "judge" in audit and "alice" in audit
    _safe(alice)
    _safe(bob)
    reopened = Store.open(store)
    assert reopened.review.review_judgments()["q1"][passage]["reviewer"] == "alice"
    [derived] = [s for s in reopened.grades.grade_sets() if s.info.get("review")]
    assert derived.info["new_pairs_graded_with"] == "openai:judge" and derived.bank_version == versions[-1]["version"]


def _until(condition, timeout: float = 10.0) -> None:
    """Poll (the page's CSP forbids Playwright's evaluated predicates) until `condition()` holds."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.mark.slow
def test_a_grading_job_can_be_cancelled_and_resumed_without_grading_twice(tmp_path, browser):
    from proctor.review import editing

    store_path = seed_demo(tmp_path, ["strong"])
    with FakeOpenAI() as llm:
        graded = run_in_thread("grade", "--store", store_path, "--method", "self-rating", "--llm",
                               "openai:judge", "--base-url", llm.base_url)  # a thread: Playwright's loop runs here
        assert graded.code == 0, graded.err
        llm.latency = 0.15  # slow only for the job to be cancelled mid-run, not for the 72 grades before it
        store = Store.open(store_path)
        for qid in ("q1", "q2", "q3"):
            editing.add_question(store, "bank", qid, "test", f"Is {qid} answered here?")
        editing.publish(store, "bank", "test")
        store.close()
        server = Server(store_path, "--llm", "openai:judge", "--base-url", llm.base_url, "--concurrency", "1",
                        in_process=True)
        sent = llm.requests
        try:
            page = _page(browser, server, "carol")
            page.locator("#grade-sets tbody tr", has_text="bank@").first.locator("button").click()
            _until(lambda: llm.requests - sent >= 3)  # two replies given (one request at a time), the third held
            llm.holding = True  # the job cannot end before the cancel reaches it, however loaded the machine
            _until(lambda: page.locator("#job-state").inner_text() == "running"
                   and int(page.locator("#job-progress").inner_text().split()[0]) >= 72 + 2)
            page.click("#cancel button")
            _until(lambda: page.locator("#job-state").inner_text() in ("cancelled", "done"))
            llm.holding = False
            assert page.locator("#job-state").inner_text() == "cancelled"
            partial = int(page.locator("#job-progress").inner_text().split()[0])
            total = int(page.locator("#job-progress").inner_text().split()[2])
            assert 72 + 2 <= partial < total == 90  # 72 grades carried over, 3 new questions x 6 passages
            llm.latency = 0  # slow only to be cancelled mid-run: what the resume sends is counted, not timed
            page.goto(server.url + "/")
            page.locator("#grade-sets tbody tr", has_text="bank@").first.locator("button").click()
            page.wait_for_selector("#job-done:not([hidden])", timeout=20000)
            assert page.locator("#job-progress").inner_text() == "90 of 90 pairs"
        finally:
            llm.holding = False
            server.stop()
        assert 18 <= llm.requests - sent <= 18 + 1  # at most the one request in flight at the cancel is sent again


def test_cancelling_a_job_that_has_just_ended_is_no_error():
    """A cancel that arrives as the job ends (its event loop closed) changes nothing and raises nothing (the
    cancel page answered 500 before)."""
    import asyncio

    from proctor.records import GradeSet
    from proctor.review.jobs import GradeJob

    old = GradeSet("self-rating", "m", "v", "bank", "v1", {}, "self-rating")
    job = GradeJob(old, old, 90)
    job._loop = asyncio.new_event_loop()
    job._task = job._loop.create_future()  # type: ignore[assignment]  (what `cancel` cancels)
    job.state = "done"
    job._loop.close()  # as `Jobs._run` leaves it when the job ends
    job.cancel()
    assert job.state == "done" and job._cancel


@pytest.mark.slow
def test_dl19_query_page_edit_publish_grade_and_impact(dl19_pool, tmp_path, browser):
    from conftest import DL19

    store = tmp_path / "dl19.db"
    assert main(["import", "bank", str(DL19 / "dl19-questions-graded.jsonl.gz"), "--store", str(store),
                 "--name", "dl19"]) == 0
    assert main(["import", "exampp", str(dl19_pool), "--store", str(store), "--bank", "dl19"]) == 0  # its grades
    with FakeOpenAI() as llm:
        server = Server(store, "--llm", "openai:google/flan-t5-large", "--base-url", llm.base_url, "--official",
                        str(DL19 / "dl19-official-leaderboard.json"), "--judged-relevant", "2", in_process=True)
        try:
            page = _page(browser, server, "dana")
            assert page.locator("#queries tbody tr").count() == 43
            _follow(page, "#queries a:text('47923')")  # a loaded machine may still be parsing the matrix
            rows = page.locator("#matrix tbody tr").count()
            assert rows > 100 and page.locator("#matrix thead th.col").count() == 10
            first = page.locator("#questions tbody tr").first
            first.locator("summary").click()
            first.locator("textarea[name=text]").fill("Which symptoms does the condition cause?")
            _follow(page, first.locator("button[value=edit]"))
            _follow(page, "#publish button")
            _follow(page, page.locator("#grade-sets tbody tr", has_text="dl19@").first.locator("button"))
            page.wait_for_selector("#job-done:not([hidden])", timeout=30000)
            assert llm.requests == rows  # the edited question against the query's pool, nothing else
            _follow(page, "#impact-link")
            assert page.locator("#leaderboards tbody tr").count() == 37
            assert "Correlation with the official leaderboard" in page.locator("#official").inner_text()
            _safe(page)
        finally:
            server.stop()
