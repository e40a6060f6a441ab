"""`import exampp` and `info` count passages alike: distinct passage ids; pool entries are query-passage pairs."""

from __future__ import annotations

import json


def _paragraph(pid: str, qid: str) -> dict:
    return {"paragraph_id": pid, "text": f"text of {pid}", "paragraph": {},
            "paragraph_data": {"judgments": [{"paragraphId": pid, "query": qid, "relevance": 1, "titleQuery": qid}],
                               "rankings": []}}


def test_a_passage_in_two_pools_is_one_passage_and_two_pairs(tmp_path, cli):
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps([qid, [_paragraph(p, qid) for p in pids]]) + "\n"
                            for qid, pids in (("q1", ["shared", "a"]), ("q2", ["shared", "b"]))))
    result = cli("import", "exampp", path, "--store", tmp_path / "s.db")
    assert result.code == 0, result.err
    assert "3 passages, 4 query-passage pairs, 4 judgments" in result.err
    info = cli("info", "--store", tmp_path / "s.db", "--format", "json")
    assert json.loads(info.out)["passages"] == 3
