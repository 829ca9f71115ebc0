"""evalkit judge: parser, transcripts from real logs, the planted acceptance runs (callable and Inspect's
mockllm), kill -9 and resume, retries, unparseable answers, cache, budget, stopping when settled, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.judge.analysis import judged_frame, task_rankings
from evalkit.judge.command import judge_transcripts
from evalkit.judge.log import VerdictLog
from evalkit.judge.models import resolve_judge
from evalkit.judge.planted import PlantedJudge, planted_transcripts, true_top_k
from evalkit.judge.prompt import Prompt, parse_verdict
from evalkit.judge.runner import JudgeSpec, run_judge
from evalkit.judge.transcripts import read_transcripts

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("answer, verdict", [
    ("Reasoning...\nVERDICT: A", "A"),
    ("**Verdict:** B", "B"),
    ("verdict: tie", "tie"),
    ("My final verdict is [[C]]", "tie"),
    ("[[B]]", "B"),
    ("[[A]] ... VERDICT: A", "A"),            # consistent tokens
    ("not [[A]] but [[B]]", None),           # conflicting: never guessed
    ("VERDICT: A\nVERDICT: B", None),
    ("A is better", None),                   # no verdict token
    ("The verdict: maybe A", None),
    ("", None),
])
def test_parser_is_strict(answer, verdict):
    assert parse_verdict(answer) == verdict


def test_prompt_template():
    p = Prompt('Rubric {"score": 1} {task}\nA: {a}\nB: {b}', source="t.txt")
    assert p.render("T", "x{b}", "y") == 'Rubric {"score": 1} T\nA: x{b}\nB: y'  # transcripts are not re-expanded
    with pytest.raises(ValueError, match=r"lacks the placeholder\(s\) \{b\}"):
        Prompt("only {a}")


def test_transcripts_from_real_logs_named_as_the_session_table():
    from evalkit.io.logs import read_logs

    ts = read_transcripts([DATA / "transcripts" / "inspect_ai", DATA / "transcripts" / "metr_inspect_action"])
    traces = read_logs([str(DATA / "transcripts" / "inspect_ai"), str(DATA / "transcripts" / "metr_inspect_action")])
    assert {(t.system, t.task, t.run) for t in ts} == set(map(tuple, traces[["system", "task", "session"]]
                                                           .drop_duplicates().to_numpy()))
    eval6 = [t for t in ts if t.task == "oxdna_simple/default"]
    assert len(eval6) == 6 and all("oxDNA" in t.task_text for t in eval6)  # six epochs of one task
    swe = read_transcripts(DATA / "transcripts" / "swe_agent", max_chars=5000)
    assert swe[0].task == "pydicom__pydicom-1458" and swe[0].truncated and len(swe[0].text) < 5200


async def _planted_async(judge: PlantedJudge):
    async def ask(prompt: str) -> str:
        return judge(prompt)
    return ask


def _run_planted(policy: str, ts, *, budget=None, tmp: Path, judge=None, fsync_every=10_000):
    judge = judge or PlantedJudge(rng=2)

    async def ask(prompt: str) -> str:
        return judge(prompt)

    model = resolve_judge(ask, name="planted")
    with VerdictLog(tmp / f"{policy}.jsonl", fsync_every=fsync_every) as log:
        run = run_judge(ts, model, JudgeSpec(pairs=policy, top_k=15, budget=budget, retry_delay=0.0), log)
    frame = judged_frame(run.records)
    rk = task_rankings(frame, run.transcripts, run.spec.k_for, n_draws=200)
    truth = true_top_k(ts, 15)
    s = rk.scores
    ok = [set(s[(s["task"] == t) & s["in_top_k"]]["transcript"]) == truth[t] for t in truth]
    return float(np.mean(ok)), run


def test_planted_top15_all_and_active_at_half_the_calls(tmp_path):
    """Acceptance: 18 transcripts per task of known order, a judge of known noise (BT), position bias (+0.5
    log-odds for the first shown) and 10 % ties. All pairs (306 calls a task) recover the true top 15 in
    >= 90 % of 30 seeded tasks; --pairs active with half the calls (153 a task) does as well."""
    ts = planted_transcripts(30, rng=11)
    acc_all, run_all = _run_planted("all", ts, tmp=tmp_path)
    acc_act, run_act = _run_planted("active", ts, budget=153 * 30, tmp=tmp_path)
    assert run_all.calls_made == 306 * 30
    assert run_act.calls_made <= run_all.calls_made / 2
    assert acc_all >= 0.9
    assert acc_act >= 0.9 and acc_act >= acc_all - 0.05  # equal accuracy (within one task in 20)


def test_mockllm_route_gives_the_same_verdicts(tmp_path):
    """The same planted judge served by Inspect's mockllm provider: identical records to the callable route."""
    pytest.importorskip("inspect_ai")
    from evalkit.judge.planted import planted_mockllm

    ts = planted_transcripts(3, rng=11)
    _, via_callable = _run_planted("active", ts, budget=153 * 3, tmp=tmp_path)
    model = resolve_judge(planted_mockllm(PlantedJudge(rng=2)), name="planted")
    with VerdictLog(tmp_path / "mock.jsonl", fsync_every=1000) as log:
        run = run_judge(ts, model, JudgeSpec(pairs="active", top_k=15, budget=153 * 3, retry_delay=0.0), log)
    assert model.kind == "inspect" and run.calls_made == via_callable.calls_made
    assert [(r["key"], r["verdict"]) for r in run.records] == [(r["key"], r["verdict"]) for r in via_callable.records]


_HANGING_JUDGE = """
import fcntl, hashlib, os, time
from evalkit.judge.planted import PlantedJudge
J = PlantedJudge(rng=2)
CALLS = os.environ["JUDGE_CALLS"]
STOP_AFTER = int(os.environ.get("JUDGE_STOP_AFTER", "0"))
def judge(prompt):
    if STOP_AFTER:
        with open(CALLS + ".started", "a+") as fh:  # count and append under one lock: calls run concurrently,
            fcntl.flock(fh, fcntl.LOCK_EX)          # and two appends before either count let only 39 through
            fh.seek(0)
            n = sum(1 for _ in fh) + 1
            fh.write("x\\n")
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)
        if n > STOP_AFTER:
            time.sleep(600)  # hangs until killed: never returns, never logged
    answer = J(prompt)
    with open(CALLS, "a") as fh:
        fh.write(hashlib.sha256(prompt.encode()).hexdigest() + "\\n")
        fh.flush()
    return answer
"""


def test_kill_9_and_restart_judges_no_pair_twice(tmp_path):
    ts = planted_transcripts(2, n_per_task=8, k=5, rng=4)
    table = tmp_path / "planted.csv"
    pd.DataFrame([{"system": t.system, "task": t.task, "run": t.run, "transcript": t.text} for t in ts]).to_csv(
        table, index=False)
    (tmp_path / "hang.py").write_text(_HANGING_JUDGE)
    out, calls = tmp_path / "out", tmp_path / "calls.txt"
    cmd = [sys.executable, "-m", "evalkit", "judge", str(table), "--judge", f"python:{tmp_path / 'hang.py'}:judge",
           "--out", str(out), "--concurrency", "4", "-q"]
    env = {**os.environ, "JUDGE_CALLS": str(calls), "JUDGE_STOP_AFTER": "40"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = out / "verdicts.jsonl"
    deadline = time.monotonic() + 300  # a deadline, not a sleep: we wait for the log's content
    while not (log.exists() and log.read_text().count("\n") >= 40):
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the judge run never logged 40 verdicts"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first_run = calls.read_text().split()
    assert len(first_run) == 40 and log.read_text().count("\n") == 40
    env2 = {**os.environ, "JUDGE_CALLS": str(calls) + ".2"}
    done = subprocess.run(cmd, env=env2, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    second_run = Path(str(calls) + ".2").read_text().split()
    total = 2 * (8 * 7 // 2) * 2  # two tasks, 28 pairs each, both orders
    assert not set(first_run) & set(second_run)  # nothing the judge answered is asked again
    assert len(first_run) + len(second_run) == total == len(set(first_run) | set(second_run))
    keys = [json.loads(line)["key"] for line in log.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == total


def test_retries_unparseable_errors_and_resume(tmp_path):
    ts = planted_transcripts(1, n_per_task=4, k=2, rng=1)
    planted = PlantedJudge(rng=0)
    attempts: dict[str, int] = {}

    def flaky(prompt: str) -> str:
        attempts[prompt] = attempts.get(prompt, 0) + 1
        if "run 0)" in prompt and "run 1)" in prompt:
            raise RuntimeError("rate limited")  # every attempt fails for this pair
        if "run 2)" in prompt and "run 3)" in prompt:
            return "I like both, hard to say."  # no verdict: unparseable
        if attempts[prompt] == 1:
            raise TimeoutError("first attempt times out")
        return planted(prompt)

    spec = JudgeSpec(pairs="all", retries=2, retry_delay=0.0, concurrency=2)
    with VerdictLog(tmp_path / "v.jsonl") as log:
        run = run_judge(ts, resolve_judge(flaky, name="flaky"), spec, log)
    verdicts = [r["verdict"] for r in run.records]
    assert verdicts.count("error") == 2 and verdicts.count("unparseable") == 2 and len(verdicts) == 12
    assert all(r["attempts"] == 3 for r in run.records if r["verdict"] == "error")
    assert all(r["answer"] == "I like both, hard to say." for r in run.records if r["verdict"] == "unparseable")
    assert len(judged_frame(run.records)) == 8  # unparseable and failed calls are not verdicts
    with VerdictLog(tmp_path / "v.jsonl") as log:  # resume: only the two failed calls are asked again
        again = run_judge(ts, resolve_judge(planted, name="flaky"), spec, log)
    assert again.calls_made == 2 and again.reused == 10 and again.errors == 0


def test_cache_shared_across_output_folders_and_budget(tmp_path):
    ts = planted_transcripts(2, n_per_task=5, k=3, rng=2)
    judge = PlantedJudge(rng=1)
    model = resolve_judge(judge, name="planted")
    spec = JudgeSpec(pairs="all", retry_delay=0.0)
    first = judge_transcripts(ts, model, spec, tmp_path / "a", cache=tmp_path / "cache.jsonl", report=False)
    second = judge_transcripts(ts, model, spec, tmp_path / "b", cache=tmp_path / "cache.jsonl", report=False)
    assert first.run.calls_made == 40 and second.run.calls_made == 0 and second.run.cached == 40
    capped = judge_transcripts(ts, model, JudgeSpec(pairs="swiss", budget=12, retry_delay=0.0), tmp_path / "c",
                               report=False)
    assert capped.run.calls_made == 12
    with pytest.raises(ValueError, match="other settings"):
        judge_transcripts(ts, model, JudgeSpec(pairs="all", rng=5, retry_delay=0.0), tmp_path / "a", report=False)


def test_stop_when_settled_saves_tasks(tmp_path):
    ts = planted_transcripts(60, n_per_task=2, systems=("base", "cand"), system_shift=(0.0, 3.0), rng=3)
    model = resolve_judge(PlantedJudge(rng=0, position_bias=0.0), name="planted")
    res = judge_transcripts(ts, model, JudgeSpec(stop_when_settled=True, retry_delay=0.0, top_k=1), tmp_path / "s")
    st = res.run.settled
    assert st["direction"] == "cand > base" and st["tasks_judged"] < 60
    assert res.run.calls_made == 2 * st["tasks_judged"]
    assert "Settled after" in res.results["stopping"] and "fixed-n design of equal power" in res.results["stopping"]
    md = (tmp_path / "s" / "report" / "report.md").read_text()
    assert "When the answer settled" in md


def test_cli_judge_writes_logs_evalkit_reads(tmp_path):
    from evalkit.cli import main
    from evalkit.io import read_comparisons

    ts = planted_transcripts(3, n_per_task=6, k=4, systems=("a", "b"), system_shift=(0.0, 0.8), rng=5)
    table = tmp_path / "t.jsonl"
    pd.DataFrame([{"system": t.system, "task": t.task, "run": t.run, "transcript": t.text} for t in ts]).to_json(
        table, orient="records", lines=True)
    (tmp_path / "j.py").write_text("from evalkit.judge.planted import PlantedJudge\nJ = PlantedJudge(rng=3)\n"
                                   "async def judge(prompt):\n    return J(prompt)\n")
    # human labels for a few units (player names are systems; the judge log's cross-system pairs are the units)
    labels = tmp_path / "human.csv"
    pd.DataFrame({"task": ["task-000", "task-001"], "player_a": ["a", "b"], "player_b": ["b", "a"],
                  "human": ["player_b", 1]}).to_csv(labels, index=False)
    code = main(["judge", str(table), "--judge", f"python:{tmp_path / 'j.py'}:judge", "--out", str(tmp_path / "o"),
                 "--top-k", "4", "--human", str(labels), "-q"])
    assert code == 0
    sys_log = read_comparisons(tmp_path / "o" / "comparisons.csv")
    tr_log = read_comparisons(tmp_path / "o" / "transcript_comparisons.csv")
    assert set(sys_log.frame["player_a"]) == {"a", "b"} and len(tr_log.frame) == 3 * 30
    assert set(sys_log.frame["item"]) == {"task-000", "task-001", "task-002"}
    md = (tmp_path / "o" / "report" / "report.md").read_text()
    for title in ("Judge run", "Top k per task", "Position bias of the judge", "System-level comparison",
                  "Judge corrected with human labels"):
        assert title in md
    assert main(["judge", str(table), "--judge", "nonsense", "--out", str(tmp_path / "x")]) == 2


def test_judge_command_module_is_light():
    code = textwrap.dedent("""
        import sys
        import evalkit.cli.judge
        heavy = [m for m in ("pandas", "scipy", "matplotlib", "inspect_ai", "evalkit.judge.runner") if m in sys.modules]
        print(",".join(heavy))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
