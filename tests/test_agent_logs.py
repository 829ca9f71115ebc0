"""Agent-log readers on real logs: Inspect AI (.json, zipped .eval), SWE-agent .traj, JSONL events.

Budgets are checked against the totals the agent frameworks wrote themselves (Inspect's
per-sample ``model_usage`` and header ``stats``; SWE-agent's ``model_stats``), read here
directly with ``json`` / ``zipfile``.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from evalkit.io.agent_logs import (
    read_agent_logs,
    read_event_stream,
    read_inspect_log,
    read_swe_agent_traj,
)

DATA = Path(__file__).parent / "data" / "transcripts"
EVAL = DATA / "metr_inspect_action" / "small.eval"
GUIDE = DATA / "inspect_ai" / "2025-05-12T20-28-26-04-00_security-guide.json"
TRAJ = DATA / "swe_agent" / "pydicom__pydicom-1458.traj"


def _eval_usage():
    with zipfile.ZipFile(EVAL) as z:
        header = json.loads(z.read("header.json"))
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    per = {s["epoch"]: next(iter(s["model_usage"].values())) for s in samples}
    return next(iter(header["stats"]["model_usage"].values())), per


def test_eval_tokens_and_tokens_with_cache_match_inspect_totals():
    total, per = _eval_usage()
    tok = read_inspect_log(EVAL, budget="tokens")
    cached = read_inspect_log(EVAL, budget="tokens_total")
    assert len(tok) == 6 and set(tok["task"]) == {"oxdna_simple/default"}
    epochs = tok["session"].str.split(":").str[1].astype(int)
    for ep, b in zip(epochs, tok["budget"], strict=True):
        assert b == per[ep]["input_tokens"] + per[ep]["output_tokens"]
    assert tok["budget"].sum() == total["input_tokens"] + total["output_tokens"]  # 11269
    assert cached["budget"].sum() == total["total_tokens"]  # 278361 incl. cache reads/writes
    assert cached["budget"].sum() / tok["budget"].sum() > 20  # the twentyfold gap of cached runs
    assert (tok["score"] == 1.0).all()
    assert set(tok["system"]) == {"anthropic/claude-opus-4-1-20250805"}


def test_eval_time_budget_is_working_time_before_scoring():
    with zipfile.ZipFile(EVAL) as z:
        wt = {json.loads(z.read(n))["epoch"]: json.loads(z.read(n))["working_time"]
              for n in z.namelist() if n.startswith("samples/")}
    t = read_inspect_log(EVAL, budget="time")
    for sess, b in zip(t["session"], t["budget"], strict=True):
        assert 0.5 * wt[int(sess.split(":")[1])] < b <= wt[int(sess.split(":")[1])]


def test_json_log_excludes_scorer_model_calls_unless_asked():
    log = json.loads(GUIDE.read_text())
    usage = {str(s["id"]): next(iter(s["model_usage"].values())) for s in log["samples"]}
    agent = read_inspect_log(GUIDE)
    full = read_inspect_log(GUIDE, include_scorer=True)
    for task, a, f in zip(agent["task"], agent["budget"], full["budget"], strict=True):
        u = usage[task.split("/")[1]]
        assert f == u["input_tokens"] + u["output_tokens"]  # model_usage includes the grader
        assert a < f  # the model-graded scorer's call is not the agent's budget
    assert agent["budget"].tolist()[0] == 61 + 17  # the one solver call of sample 1
    assert (agent["score"] == 1.0).all()  # grade "C"


def test_unit_the_log_lacks_is_named():
    with pytest.raises(ValueError, match="records no cost.*input_tokens_cache_read"):
        read_inspect_log(EVAL, budget="cost")
    with pytest.raises(ValueError, match="budget must be one of"):
        read_inspect_log(EVAL, budget="flops")
    with pytest.raises(ValueError, match="No scorer 'accuracy'"):
        read_inspect_log(EVAL, scorer="accuracy")


def test_swe_agent_traj_budget_from_model_stats_and_score_required():
    stats = json.loads(TRAJ.read_text())["info"]["model_stats"]
    with pytest.raises(ValueError, match="SWE-bench report"):
        read_swe_agent_traj(TRAJ)
    tok = read_swe_agent_traj(TRAJ, resolved={"pydicom__pydicom-1458": False})
    assert tok["budget"].iat[0] == stats["tokens_sent"] + stats["tokens_received"]  # 123981
    assert tok["score"].iat[0] == 0.0 and tok["task"].iat[0] == "pydicom__pydicom-1458"
    cost = read_swe_agent_traj(TRAJ, budget="cost", resolved=True, system="gpt4")
    assert cost["budget"].iat[0] == pytest.approx(stats["instance_cost"])  # 1.26719
    with pytest.raises(ValueError, match="record no 'tokens_total'"):
        read_swe_agent_traj(TRAJ, budget="tokens_total", resolved=True)


def test_event_stream_accumulates_and_reports_unscored_sessions(tmp_path):
    events = [
        {"system": "a", "task": "t", "session": "1", "input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 100, "time": "2025-01-01T00:00:00Z"},
        {"system": "a", "task": "t", "session": "1", "input_tokens": 20, "output_tokens": 5, "score": 0.4, "time": "2025-01-01T00:00:30Z"},
        {"system": "a", "task": "t", "session": "2", "input_tokens": 7, "output_tokens": 1, "time": "2025-01-01T00:00:00Z"},
        {"system": "a", "task": "t", "session": "1", "input_tokens": 1, "output_tokens": 1, "score": 0.9, "time": "2025-01-01T00:01:00Z"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    with pytest.warns(UserWarning, match=r"1 session\(s\) in events.jsonl have no scored submission.*a/t/2"):
        got = read_event_stream(path)
    assert got["budget"].tolist() == [40.0, 42.0]  # 10+5+20+5, then +1+1
    assert got["line"].tolist() == [2, 4]
    with pytest.warns(UserWarning):
        total = read_event_stream(path, budget="tokens_total")
    assert total["budget"].tolist() == [140.0, 142.0]
    with pytest.warns(UserWarning):
        t = read_event_stream(path, budget="time")
    assert t["budget"].tolist() == [30.0, 60.0]
    with pytest.raises(ValueError, match="no .cost. field"):
        read_event_stream(path, budget="cost")


def test_read_agent_logs_dispatches_on_suffix():
    both = read_agent_logs([EVAL, GUIDE], budget="tokens")
    assert len(both) == 9
    assert isinstance(both, pd.DataFrame) and both["budget"].gt(0).all()
    with pytest.raises(ValueError, match="Cannot tell the log format"):
        read_agent_logs("x.txt")


def test_inspect_intermediate_scores_are_submissions_at_the_budget_so_far(tmp_path):
    # A minimal Inspect-shaped log: two solver calls with an intermediate score between them,
    # a scorer span whose model call is not the agent's budget, and the final score.
    def model(span, inp, out):
        return {"event": "model", "span_id": span, "working_start": 0.0, "working_time": 1.0,
                "output": {"usage": {"input_tokens": inp, "output_tokens": out,
                                     "total_tokens": inp + out + 1000}}}

    events = [
        {"event": "span_begin", "id": "s1", "type": "solver"},
        model("s1", 100, 10),
        {"event": "score", "span_id": "s1", "intermediate": True, "score": {"value": 0.25}},
        model("s1", 200, 20),
        {"event": "span_begin", "id": "sc", "type": "scorer"},
        model("sc", 5000, 500),
        {"event": "score", "span_id": "sc", "intermediate": False, "score": {"value": "P"}},
    ]
    log = {"eval": {"task": "toy", "model": "m"},
           "samples": [{"id": 7, "epoch": 2, "events": events, "scores": {"grader": {"value": "P"}}},
                       {"id": 8, "epoch": 1, "events": [], "scores": {}}]}
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(log))
    with pytest.warns(UserWarning, match=r"1 session\(s\) in toy.json have no scored submission and are left out \(toy/8#1\)"):
        got = read_inspect_log(path)
    assert got["budget"].tolist() == [110.0, 330.0]  # 100+10, then +200+20; grader excluded
    assert got["score"].tolist() == [0.25, 0.5]  # "P" (partial) = 0.5
    assert got["task"].tolist() == ["toy/7", "toy/7"] and got["session"].iat[0] == "toy:2"
    with pytest.warns(UserWarning):
        total = read_inspect_log(path, budget="tokens_total")
    assert total["budget"].tolist() == [1110.0, 2330.0]
