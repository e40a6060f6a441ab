"""The review app's routes. GET never changes anything; every change is a POST whose CSRF token is checked
(`checked_form`) before it is read. Templates autoescape every value."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from proctor import api
from proctor.api import commands
from proctor.errors import ProctorError, UsageError
from proctor.review import editing, pages
from proctor.review.impact_view import impact_data
from proctor.review.security import checked_form
from proctor.review.state import ReviewState

REVIEWER_COOKIE = "proctor_reviewer"


def _state(request: Request) -> ReviewState:
    return request.app.state.review


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A template with the CSRF token and the reviewer's name; every value autoescaped."""
    template = request.app.state.templates.get_template(name)
    html = template.render(csrf=request.state.csrf, reviewer=_reviewer(request), path=request.url.path,
                           thresholds=_state(request).thresholds, **context)
    return HTMLResponse(html, status_code=status)


def _reviewer(request: Request) -> str:
    return request.cookies.get(REVIEWER_COOKIE, "")


def _need_reviewer(request: Request) -> str:
    name = _reviewer(request)
    if not name:
        raise UsageError("say who you are first (your name, top right): every change is recorded with it")
    return name


def _back(form, default: str = "/") -> RedirectResponse:
    target = str(form.get("next") or default)
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        target = default
    return RedirectResponse(target, status_code=303)


async def overview(request: Request) -> Response:
    """GET /: queries, grade sets and flags."""
    state = _state(request)
    sets = pages.visible_sets(state.store)
    grade_set = pages.choose_grade_set(state.store, request.query_params.get("gs"), sets)
    data = pages.overview(state.store, state.cache, grade_set, state.thresholds, sets)
    running = state.jobs.running() if state.jobs else None
    return render(request, "overview.html", data=data, running=running, backend=state.config.spec
                  if state.config else None, official=state.official is not None)


async def query(request: Request) -> Response:
    """GET /query/ID: the bank and the grade matrix of one query."""
    state = _state(request)
    sets = pages.visible_sets(state.store)
    grade_set = pages.choose_grade_set(state.store, request.query_params.get("gs"), sets)
    try:
        data = pages.query_page(state.store, state.cache, request.path_params["qid"], grade_set, state.thresholds)
    except KeyError:
        return render(request, "message.html", 404, title="No such query", message="The store has no such query.")
    return render(request, "query.html", data=data, sets=sets)


async def cell(request: Request) -> Response:
    """GET /cell: one pair's grade, reply and prompt, and the judgment form."""
    state, params = _state(request), request.query_params
    grade_set = pages.choose_grade_set(state.store, params.get("gs"))
    if grade_set is None:
        raise UsageError("the store has no grades")
    data = pages.cell_detail(state.store, grade_set, params.get("q", ""), params.get("p", ""), params.get("k", ""))
    qid, pid = data["query_id"], data["passage_id"]
    reviewed = state.store.review.review_judgments(qid).get(qid, {}).get(pid) or \
        state.store.review.stale_review_judgments(qid).get(qid, {}).get(pid)
    judged = state.store.corpus.judgments().get(qid, {}).get(pid)
    return render(request, "cell.html", data=data, reviewed=reviewed, judged=judged,
                  basis=state.store.review.verdict_basis(qid, pid))


def _chosen_grade_set(request: Request) -> tuple[ReviewState, list, Any]:
    """The state, the grade sets to choose from and the one `?gs=` names (by default `pages.choose_grade_set`'s:
    the most-graded on its bank's newest version)."""
    state = _state(request)
    sets = pages.visible_sets(state.store)
    grade_set = pages.choose_grade_set(state.store, request.query_params.get("gs"), sets)
    if grade_set is None:
        raise UsageError("the store has no grades")
    return state, sets, grade_set


async def to_review(request: Request) -> Response:
    """GET /to-review: passages ordered by how much a human verdict would change (docs/trust.md)."""
    (state, sets, grade_set), params = _chosen_grade_set(request), request.query_params
    limit = params.get("limit") or "50"
    if not limit.isdigit() or not 1 <= int(limit) <= 1000:
        raise UsageError("limit must be a number from 1 to 1000")
    data = commands.queue_for_review(state.store, grade_set, min_grade=state.thresholds.min_grade,
                                     depth=state.cache.depth, limit=int(limit))
    bases = {(i["query_id"], i["passage_id"]): state.store.review.verdict_basis(i["query_id"], i["passage_id"])
             for i in data["items"]}
    return render(request, "to_review.html", data=data, sets=sets, bases=bases)


async def calibration(request: Request) -> Response:
    """GET /calibration: the prediction-powered leaderboard for the reviewers' verdicts (docs/trust.md)."""
    state, sets, grade_set = _chosen_grade_set(request)
    rel = request.query_params.get("rel") or str(state.thresholds.judged_relevant)
    if rel not in ("1", "2", "3"):
        raise UsageError("rel must be 1, 2 or 3 (a verdict >= rel counts as relevant)")
    measure = f"P@{state.cache.depth}"
    try:
        board = api.ppi(state.store, measures=[measure], min_grade=state.thresholds.min_grade,
                                    labels=api.LabelChoice(grade_set=grade_set.id), human_qrels="reviewers",
                                    judged_relevant=int(rel))
        data, refused = board.boards()[0], None
    except UsageError as exc:  # fewer than two topics with verdicts, no verdicts at all
        data, refused = None, pages.calibration_refusal(state.store, exc)
    per_topic = {q: len(per) for q, per in state.store.review.review_judgments().items()}
    verdicts = sum(per_topic.get(t, 0) for t in data["human_topics"]) if data else 0
    return render(request, "calibration.html", data=data, refused=refused, sets=sets, grade_set=grade_set,
                  measure=measure, rel=int(rel), verdicts=verdicts)


async def audit(request: Request) -> Response:
    """GET /audit: the audit trail, newest first."""
    entries = _state(request).store.review.audit(query_id=request.query_params.get("query") or None, limit=500)
    return render(request, "audit.html", entries=entries)


async def export_qrels(request: Request) -> Response:
    """GET /judgments.qrels: the reviewers' newest judgments as TREC qrels."""
    judgments = _state(request).store.review.review_judgments()
    text = commands.qrels_text({q: {p: j["relevance"] for p, j in per.items()} for q, per in judgments.items()})
    return PlainTextResponse(text, headers={
        "Content-Disposition": 'attachment; filename="review-judgments.qrels"'})


async def set_reviewer(request: Request) -> Response:
    """POST /reviewer: remember the reviewer's name (a cookie)."""
    form = await checked_form(request)
    name = " ".join(str(form.get("reviewer") or "").split())[:80]
    if not name:
        raise UsageError("the name is empty")
    response = _back(form)
    response.set_cookie(REVIEWER_COOKIE, name, httponly=True, samesite="strict")
    return response


async def edit_question(request: Request) -> Response:
    """POST /question/edit: one change to a question in the draft (409 with the other edit on a conflict)."""
    form = await checked_form(request)
    store, who = _state(request).store, _need_reviewer(request)
    try:
        revision = int(str(form.get("revision")))
    except ValueError:
        raise UsageError("revision must be a number") from None
    try:
        editing.edit_question(store, str(form.get("bank")), str(form.get("question_id")), revision, who,
                              action=str(form.get("action")), text=str(form.get("text") or ""),
                              answers=editing.parse_answers(str(form.get("answers") or "")))
    except commands.Conflict as exc:
        return render(request, "conflict.html", 409, other=exc.other, mine={
            "text": form.get("text"), "answers": form.get("answers"), "action": form.get("action")},
            next=form.get("next") or "/")
    return _back(form)


async def add_question(request: Request) -> Response:
    """POST /question/add: a new question in the draft."""
    form = await checked_form(request)
    store, who = _state(request).store, _need_reviewer(request)
    editing.add_question(store, str(form.get("bank")), str(form.get("query_id")), who, str(form.get("text") or ""),
                         editing.parse_answers(str(form.get("answers") or "")))
    return _back(form)


async def publish(request: Request) -> Response:
    """POST /publish: the draft as a new bank version."""
    form = await checked_form(request)
    editing.publish(_state(request).store, str(form.get("bank")), _need_reviewer(request))
    return _back(form)


async def discard(request: Request) -> Response:
    """POST /draft/discard: close the draft unpublished."""
    form = await checked_form(request)
    editing.discard(_state(request).store, str(form.get("bank")), _need_reviewer(request))
    return _back(form)


async def judge(request: Request) -> Response:
    """POST /judgment: a reviewer's relevance judgment 0-3."""
    form = await checked_form(request)
    who = _need_reviewer(request)
    try:
        relevance = int(str(form.get("relevance")))
    except ValueError:
        relevance = -1
    if not 0 <= relevance <= 3:
        raise UsageError("relevance must be 0, 1, 2 or 3")
    qid, pid = str(form.get("query_id")), str(form.get("passage_id"))
    state = _state(request)
    store = state.store
    if qid not in store.corpus.queries() or not store.corpus.passage_texts_of([pid]):
        raise UsageError("no such query or passage")
    if pid not in state.cache.pool_of(store).get(qid, []) and not store.review.graded_pair(qid, pid):
        raise UsageError(f"passage {pid} is not in the pool of query {qid} (neither judged nor ranked by a run "
                         f"within depth {state.cache.depth} nor graded for it): a verdict is on a pair of the pool")
    seen = pages.seen_basis(form)
    chosen = pages.choose_grade_set(store, str(form.get("gs"))) if form.get("gs") else None
    try:
        with store.transaction():
            store.review.add_review_judgment(qid, pid, relevance, who, chosen.id if chosen else None, seen)
            store.review.add_audit(who, "judge", query_id=qid, after={"passage_id": pid, "relevance": relevance})
    except commands.VerdictConflict as exc:
        return render(request, "verdict_conflict.html", 409, why=exc.why, other=exc.other, query_id=qid,
                      passage_id=pid, mine=relevance, next=str(form.get("next") or "/"))
    return _back(form)


async def start_grading(request: Request) -> Response:
    """POST /grade: start grading what is new."""
    form = await checked_form(request)
    state = _state(request)
    _need_reviewer(request)
    old = pages.choose_grade_set(state.store, str(form.get("gs") or "") or None)
    if old is None or state.jobs is None:
        raise UsageError("no grade set to start from")
    job = state.jobs.start(state.store, old, state.cache.pool_of(state.store))
    return RedirectResponse(f"/jobs/{job.id}", status_code=303)


def _job(request: Request):
    jobs = _state(request).jobs
    job = jobs.jobs.get(int(request.path_params["job"])) if jobs else None
    if job is None:
        raise UsageError("no such job")
    return job


async def job_page(request: Request) -> Response:
    """GET /jobs/N: a grading job's page."""
    job = _job(request)
    done = _state(request).store.review.grade_progress(job.new.id, job.new.step)[0]
    return render(request, "job.html", job=job.as_dict(done))


async def job_json(request: Request) -> Response:
    """GET /jobs/N/progress: a grading job's progress as JSON."""
    job = _job(request)
    return JSONResponse(job.as_dict(_state(request).store.review.grade_progress(job.new.id, job.new.step)[0]))


async def cancel_job(request: Request) -> Response:
    """POST /jobs/N/cancel: stop a grading job, keeping its grades."""
    form = await checked_form(request)
    _job(request).cancel()
    return _back(form, f"/jobs/{request.path_params['job']}")


async def impact(request: Request) -> Response:
    """GET /impact: labels and leaderboards before and after a bank change."""
    state, params = _state(request), request.query_params
    data = impact_data(state.store, params.get("old", ""), params.get("new", ""), params.get("measure") or "P@10",
                       params.get("min_grade") or str(state.thresholds.min_grade), state.official)
    return render(request, "impact.html", data=data)


ROUTES = [
    Route("/", overview), Route("/query/{qid:path}", query), Route("/cell", cell), Route("/audit", audit),
    Route("/to-review", to_review), Route("/calibration", calibration),
    Route("/judgments.qrels", export_qrels), Route("/jobs/{job:int}", job_page),
    Route("/jobs/{job:int}/progress", job_json), Route("/impact", impact),
    Route("/reviewer", set_reviewer, methods=["POST"]), Route("/question/edit", edit_question, methods=["POST"]),
    Route("/question/add", add_question, methods=["POST"]), Route("/publish", publish, methods=["POST"]),
    Route("/draft/discard", discard, methods=["POST"]),
    Route("/judgment", judge, methods=["POST"]), Route("/grade", start_grading, methods=["POST"]),
    Route("/jobs/{job:int}/cancel", cancel_job, methods=["POST"]),
]


def error_handlers() -> dict:
    """Usage errors as a 400 page, refused CSRF as 403: one clear message, no traceback."""

    async def usage(request: Request, exc: Exception) -> Response:
        message = exc.as_options() if isinstance(exc, UsageError) else str(exc)  # in the words of the CLI
        return render(request, "message.html", 400, title="Refused", message=message)

    async def forbidden(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(f"403: {exc}", status_code=403)

    return {ProctorError: usage, PermissionError: forbidden}
