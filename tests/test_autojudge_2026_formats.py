"""Proctor's AutoJudge judge on TREC 2026 data (rag26, ragtime26 as autojudge-base 1.0.0's `track_specs.yml`
defines them): the three sentence formats, an empty answer, a RAGTIME 2026 bank with AND / OR answers, a bank
that words a topic otherwise. The track's own verifier and loaders accept the samples; the judge runs in the
track's runner against the local OpenAI-compatible test server, whose replies are rules on the prompt's text,
so every leaderboard value and qrels label is computed here from those rules, not read from Proctor."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from pathlib import Path

import pytest

import autojudge_2026_collection as c
from fake_openai import FakeOpenAI

pytestmark = pytest.mark.skipif(not importlib.util.find_spec("autojudge_base"),
                                reason="needs the autojudge-base package (extra test)")
ENV = {"OPENAI_MODEL": "judge-model", "OPENAI_API_KEY": "k"}


@pytest.fixture(scope="module")
def nltk_stub(peer_nltk) -> Path:
    """The peers' local NLTK folder, with the punkt folder autojudge-base also looks for."""
    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    return peer_nltk


def judge(task: dict[str, Path], out: Path, variant: str, nltk: Path, reply, *extra: str):
    """`auto-judge run` of Proctor's workflow (in-process) with the test server answering by `reply`."""
    from test_autojudge import auto_judge

    with FakeOpenAI(reply=reply) as server:
        return auto_judge(task, out, variant, nltk, *extra, env={**ENV, "OPENAI_BASE_URL": server.base_url})


def rows(path: Path) -> dict[tuple[str, str, str], float]:
    """(run, topic, measure) → value of an ir_measures leaderboard file, read with AutoJudge's loader."""
    from autojudge_base import Leaderboard

    board = Leaderboard.load(path, format="ir_measures")
    return {(e.run_id, e.topic_id, m): float(v) for e in board.entries for m, v in e.values.items()}


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


# --- what the rules imply (the test's own arithmetic) -------------------------------------------------------

def sentence_label(topic: str, sentence: str, questions: dict[str, str]) -> int:
    """EXAM-Qrels: a sentence's label is its highest grade over the topic's questions."""
    return max(c.grade(q, sentence) for q in questions)


def exam_expected(runs: dict[str, dict[str, list[str]]], questions: dict[str, dict[str, str]], tau: int = 4
                  ) -> dict[tuple[str, str, str], float]:
    """EXAM-Cover, n-EXAM (ratio of sums, per-topic values scaled so their mean is it), P@20 and nDCG@10
    (trec_eval: gain = label, log2 discount, ideal from every judged sentence of the topic) per run and topic,
    and the `all` rows (means over the topics, an empty answer 0)."""
    out: dict[tuple[str, str, str], float] = {}
    pool = {t: sum(any(c.grade(q, s) >= tau for run in runs.values() for s in run[t]) for q in questions[t])
            / len(questions[t]) for t in c.TITLES}
    for run, answers in runs.items():
        cover = {t: sum(any(c.grade(q, s) >= tau for s in answers[t][:20]) for q in questions[t]) / len(questions[t])
                 for t in c.TITLES}
        for t in c.TITLES:
            labels = [sentence_label(t, s, questions[t]) for s in answers[t]]
            ideal = sorted((sentence_label(t, s, questions[t]) for r in runs.values() for s in r[t]), reverse=True)
            dcg = sum(g / math.log2(i + 2) for i, g in enumerate(labels[:10]))
            idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:10]))
            out[(run, t, "EXAM-Cover")] = cover[t]
            out[(run, t, "n-EXAM")] = cover[t] * len(c.TITLES) / sum(pool.values())
            out[(run, t, "P@20")] = sum(g >= tau for g in labels) / 20
            out[(run, t, "nDCG@10")] = dcg / idcg if idcg else 0.0
        for m in ("EXAM-Cover", "n-EXAM", "P@20", "nDCG@10"):
            out[(run, "all", m)] = sum(out[(run, t, m)] for t in c.TITLES) / len(c.TITLES)
    return out


def qrels_expected(runs: dict[str, dict[str, list[str]]], questions: dict[str, dict[str, str]]
                   ) -> dict[tuple[str, str], int]:
    """(topic, md5(sentence)) → label; an empty answer is the empty text, label 0."""
    out = {(t, md5(s)): sentence_label(t, s, questions[t]) for r in runs.values() for t, ss in r.items() for s in ss}
    out.update({(t, md5("")): 0 for r in runs.values() for t, ss in r.items() if not ss})
    return out


def ragtime_questions() -> dict[str, dict[str, str]]:
    """The RAGTIME bank's questions with the word the self-rating rule looks for (their first answer)."""
    return {t: {q: answers[0] for q, _, _, answers in nuggets} for t, nuggets in c.RAGTIME_BANK.items()}


def nugget_expected(aggregate: bool = True) -> dict[tuple[str, str, str], float]:
    """AutoNuggetizer scores per run and topic (and `all`): each answer labelled by the rule on the whole answer
    text, a question's label the lowest (AND) or highest (OR) of its answers' (`aggregate`); without
    `aggregate`, every answer a nugget of its own (what ignoring the aggregator gives)."""
    credit = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    out: dict[tuple[str, str, str], float] = {}
    for run, answers in c.REPORTS.items():
        for t in c.TITLES:
            passage = " ".join(answers[t]).lower()
            units = []  # (label credit, strict credit, importance)
            for _, agg, imp, options in c.RAGTIME_BANK[t]:
                got = [credit[c.label(a, passage)] for a in options] if passage else [0.0] * len(options)
                if aggregate:
                    got = [min(got) if agg == "AND" else max(got)]
                units += [(g, float(g == 1.0), imp) for g in got]
            vital = [u for u in units if u[2] == "vital"]
            weight = {"vital": 2, "okay": 1}
            out[(run, t, "nuggets:all")] = sum(u[0] for u in units) / len(units)
            out[(run, t, "nuggets:strict_all")] = sum(u[1] for u in units) / len(units)
            out[(run, t, "nuggets:vital")] = sum(u[0] for u in vital) / len(vital)
            out[(run, t, "nuggets:weighted")] = (sum(weight[u[2]] * u[0] for u in units)
                                                 / sum(weight[u[2]] for u in units))
        for m in ("nuggets:all", "nuggets:strict_all", "nuggets:vital", "nuggets:weighted"):
            out[(run, "all", m)] = sum(out[(run, t, m)] for t in c.TITLES) / len(c.TITLES)
    return out


def assert_values(got: dict, expected: dict) -> None:
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


# --- the tests ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("track", ["rag26", "ragtime26"])
def test_the_samples_are_what_the_track_accepts(tmp_path, nltk_stub, track):
    """autojudge-base's own verifier (`Report.check_findings` with the track's spec) finds no error in the
    samples, the empty answer is a smell, each run has its sentence format; the track's loaders read the banks."""
    from autojudge_base.nugget_data import NuggetBanks, load_nugget_banks_generic, load_ragtime26_nugget_banks_from_file
    from autojudge_base.report import load_report
    from autojudge_base.request import load_requests_from_file

    task = c.write(tmp_path, track)
    requests = {r.request_id: r for r in load_requests_from_file(task["topics"])}
    formats, smells = {}, []
    for path in sorted(task["responses"].iterdir()):
        for report in load_report(path):
            errors, warnings = report.check_findings(track, request=requests[report.metadata.topic_id])
            assert errors == []
            smells += warnings
            if report.responses:
                formats[report.metadata.run_id] = type(report.responses[0]).__name__
    assert len(smells) == 1 and "empty" in smells[0]
    expected = {"rag24": "Rag24ReportSentence", "neuclir": "NeuclirReportSentence", "ragtime": "RagtimeReportSentence"}
    assert formats == {run: expected[c.FORMAT[run]] for run in formats}
    assert sorted(load_nugget_banks_generic(task["bank"], NuggetBanks).banks) == sorted(c.TITLES)
    if track == "ragtime26":
        bank = load_ragtime26_nugget_banks_from_file(task["bank"]).banks["t2"]
        assert [n.aggregator_type for n in bank.nugget_bank] == ["AND", "OR"]


@pytest.mark.slow
def test_rag26_leaderboard_and_qrels(tmp_path, nltk_stub):
    """RAG24 integer citations and NeuCLIR doc-id lists, `answer: []` for one topic (0 on every measure, counted
    on standard error and in the judge's log), a bank whose title_query words the topics otherwise (the topic
    file's title is the query; the bank keeps its wording)."""
    from autojudge_base.qrels.qrels import read_qrel_file

    from proctor import api

    task = c.write(tmp_path / "task", "rag26")
    out = tmp_path / "out"
    done = judge(task, out, "llm", nltk_stub, c.self_rating)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 empty answer (no sentence text): 0 on every measure for r26-idx/t3" in done.stderr
    assert "1 empty answer (no sentence text)" in (out / "llm.log").read_text()
    assert "3 topics are worded otherwise in the banks' title_query (t1, t2, t3)" in done.stderr
    assert_values(rows(out / "llm.eval.txt"), exam_expected(c.ANSWERS, c.QUESTIONS))
    qrels = {(r.topic_id, r.doc_id): r.grade for r in read_qrel_file(out / "llm.qrels.txt").rows}
    assert qrels == qrels_expected(c.ANSWERS, c.QUESTIONS)
    store = api.open_store(out / "llm.db")
    try:
        assert store.corpus.queries() == c.TITLES  # the topic file's titles
        cited = {pid: seg["citations"] for pid, seg in store.corpus.segments().items()}
    finally:
        store.close()
    assert cited["r26-idx/t1/1"] == [c.doc("t1", 1, "rag26")]  # integer index 1 into references
    assert cited["r26-ids/t2/0"] == [c.doc("t2", 0, "rag26")]
    banks = [json.loads(line) for line in (out / "llm.nuggets.jsonl").read_text().splitlines()]
    assert {b["query_id"]: b["title_query"] for b in banks} == {t: c.rag26_bank(t)["title_query"] for t in c.TITLES}


@pytest.mark.slow
def test_ragtime26_leaderboard_qrels_and_and_or_nuggets(tmp_path, nltk_stub):
    """RAGTIME doc → score maps and NeuCLIR doc-id lists, an empty report, the RAGTIME 2026 bank: EXAM on its
    questions (leaderboard and qrels), and AutoNuggetizer scores whose questions combine their answers'
    labels by the bank's aggregator (AND: all, OR: one), which changes the scores."""
    from autojudge_base.qrels.qrels import read_qrel_file

    from proctor import api

    task = c.write(tmp_path / "task", "ragtime26")
    done = judge(task, tmp_path / "out", "llm", nltk_stub, c.self_rating)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 empty answer (no sentence text): 0 on every measure for rt-ids/t1" in done.stderr
    assert_values(rows(tmp_path / "out" / "llm.eval.txt"), exam_expected(c.REPORTS, ragtime_questions()))
    qrels = {(r.topic_id, r.doc_id): r.grade for r in read_qrel_file(tmp_path / "out" / "llm.qrels.txt").rows}
    assert qrels == qrels_expected(c.REPORTS, ragtime_questions())
    store = api.open_store(tmp_path / "out" / "llm.db")
    try:
        cited = store.corpus.segments()["rt-map/t1/0"]["citations"]
    finally:
        store.close()
    assert cited == [c.doc("t1", 0, "ragtime26"), c.doc("t1", 1, "ragtime26")]  # most confident first

    done = judge(task, tmp_path / "out", "nuggets", nltk_stub, c.assignment)
    assert done.returncode == 0, done.stderr[-3000:]
    got = rows(tmp_path / "out" / "nuggets.eval.txt")
    assert_values(got, nugget_expected())
    ignored = nugget_expected(aggregate=False)
    assert any(abs(got[k] - ignored[k]) > 0.1 for k in got)  # the aggregator matters on these data
    banks = [json.loads(line) for line in (tmp_path / "out" / "nuggets.nuggets.jsonl").read_text().splitlines()]
    written = {b["query_id"]: sorted((n["question"], n["aggregator_type"], sorted(n["answers"]))
                                     for n in b["nugget_bank"].values()) for b in banks}
    assert written == {t: sorted((q, agg, sorted(a)) for q, agg, _, a in c.RAGTIME_BANK[t]) for t in c.TITLES}
    assert all("claim_bank" not in b for b in banks)  # the answer nuggets are Proctor's, not the bank's


def test_an_importance_other_than_vital_or_okay_is_refused_at_read_time(tmp_path, nltk_stub):
    """Named with the user's --nugget-banks file and line, before any work; exit 2, no traceback."""
    task = c.write(tmp_path / "task", "ragtime26")
    lines = task["bank"].read_text().splitlines()
    lines[1] = lines[1].replace('"importance": "okay"', '"importance": "high"')
    task["bank"].write_text("\n".join(lines) + "\n")
    done = judge(task, tmp_path / "out", "nuggets", nltk_stub, c.assignment)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"proctor: error: {task['bank']}:2: nugget_bank[1]: unknown importance 'high'" in done.stderr
    assert "given-bank" not in done.stderr


@pytest.mark.parametrize("change, message", [
    (lambda line: line.replace('"citations": [1]', '"citations": [7]'), "answer[1] cites index 7, but there are 2"),
    (lambda line: line.replace('"run_id": "r26-idx"', '"run_id": "r26/idx"'), "contains '/'"),
])
def test_errors_in_reports_name_the_users_file_and_line(tmp_path, nltk_stub, change, message):
    """A report Proctor refuses is named by the user's file and line, never by the judge's own copy."""
    task = c.write(tmp_path / "task", "rag26")
    path = task["responses"] / "r26-idx.jsonl"
    lines = path.read_text().splitlines()
    lines[0] = change(lines[0])
    path.write_text("\n".join(lines) + "\n")
    done = judge(task, tmp_path / "out", "llm", nltk_stub, c.self_rating)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    error = done.stderr[done.stderr.index("proctor: error:"):]
    assert error.startswith(f"proctor: error: {path}:1: ") and message in error
    assert "responses.jsonl" not in error


def test_a_report_given_twice_is_named_twice(tmp_path, nltk_stub):
    task = c.write(tmp_path / "task", "rag26")
    path = task["responses"] / "r26-ids.jsonl"
    first = path.read_text().splitlines()[0]
    path.write_text(path.read_text() + first + "\n")
    done = judge(task, tmp_path / "out", "llm", nltk_stub, c.self_rating)
    assert done.returncode == 2
    assert f"proctor: error: {path}:4: run 'r26-ids' answers topic 't1' twice (first on {path}:1)" in done.stderr


def test_an_answer_emptied_since_the_store_scored_it_is_refused(tmp_path, nltk_stub):
    """A resumed store still holds (and scores) the earlier answer of a report that is empty now: its 0 would not
    be the store's number, so the run is refused, naming the user's file and line, before the store changes."""
    task = c.write(tmp_path / "task", "rag26")
    out = tmp_path / "out"
    assert judge(task, out, "llm", nltk_stub, c.self_rating).returncode == 0
    path = task["responses"] / "r26-ids.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = json.dumps(c.rag26_report("r26-ids", "t3", []))  # t3 answered before, empty now
    path.write_text("\n".join(lines) + "\n")
    board, held = (out / "llm.eval.txt").read_bytes(), _holds(out / "llm.db")
    done = judge(task, out, "llm", nltk_stub, c.self_rating)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (f"proctor: error: {path}:3: run 'r26-ids' gives topic 't3' an empty answer, but the store "
            f"{out / 'llm.db'} holds its earlier answer, which it scores: judge into a fresh "
            "--out-dir, or another store (setting store)") in done.stderr
    assert (out / "llm.eval.txt").read_bytes() == board and _holds(out / "llm.db") == held


def _holds(path: Path) -> tuple[dict, dict]:
    """What a store holds: its counts (grade sets, grades, passages, ...) and every run's answers."""
    from proctor import api

    store = api.open_store(path)
    try:
        return store.counts(), store.corpus.ranked_lists()
    finally:
        store.close()


@pytest.mark.slow
def test_a_pool_that_reaches_no_threshold_writes_zeros(tmp_path, nltk_stub):
    """No sentence reaches τ: n-EXAM is 0/0, written as 0 with a note, not an abort."""
    task = c.write(tmp_path / "task", "rag26")
    done = judge(task, tmp_path / "out", "llm", nltk_stub, lambda prompt: "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "n-EXAM: no sentence of the pool reaches grade >= 4 on any topic" in done.stderr
    assert "0/0, written as 0" in (tmp_path / "out" / "llm.eval.measures.yml").read_text()
    assert "n-EXAM: no sentence" in (tmp_path / "out" / "llm.log").read_text()
    got = rows(tmp_path / "out" / "llm.eval.txt")
    assert {k: v for k, v in got.items() if k[2] != "nDCG@10"} == {
        (run, t, m): 0.0 for run in c.ANSWERS for t in (*c.TITLES, "all") for m in ("EXAM-Cover", "n-EXAM", "P@20")}


def test_a_bad_topic_is_named_as_the_runners_topic(tmp_path, nltk_stub):
    """The runner keeps no file name of its topics: the error names --rag-topics and the topic."""
    task = c.write(tmp_path / "task", "rag26")
    task["topics"].write_text(task["topics"].read_text().replace('"how do bees make honey"', '""'))
    done = judge(task, tmp_path / "out", "llm", nltk_stub, c.self_rating)
    assert done.returncode == 2 and "proctor: error: --rag-topics: query 't1': the text is empty" in done.stderr
    assert "topics.jsonl" not in done.stderr.split("proctor: error:")[1]
