"""Harness logs in bulk (evalkit.io.logs): files, folders, globs; Inspect .eval written by Inspect itself
(Zstandard zips), SWE-agent with SWE-bench reports, lm-eval samples, JSONL events; streaming.

The reference for what a log says is read here directly with ``zipfile`` (+ ``zipfile_zstd``) and
``json``, and the planted truth table ``data/agent_runs/truth.csv`` written by
``scripts/make_agent_runs.py`` beside the logs.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from agent_runs_helpers import RUNS, TRANSCRIPTS, direct_outcomes

from evalkit.io.logs import expand_paths, iter_log_rows, log_format, read_logs, session_outcomes
from evalkit.io.swe_bench import read_resolved_ids, read_swe_bench_report

DATA = TRANSCRIPTS
TRAJ = DATA / "swe_agent" / "pydicom__pydicom-1458.traj"


def test_inspect_logs_written_by_inspect_read_as_planted():
    truth = pd.read_csv(RUNS / "truth.csv")
    frame = read_logs(RUNS / "baseline", metadata=("family",))
    assert frame.attrs["files"] == {"inspect": 6} and frame.attrs["skipped"] == []
    out = session_outcomes(frame, by="family")
    assert len(out) == 6 * 24 and set(out["system"]) == {"mockllm/model"}
    for run in range(1, 7):
        got = out[out["session"].str.endswith(f"baseline/run-{run}:1")].set_index("task")
        direct = direct_outcomes(RUNS / "baseline" / f"run-{run}.eval")
        planted = truth[(truth.system == "baseline") & (truth.run == run)].set_index("task")
        for task, (score, family) in direct.items():
            row = got.loc[f"toy_agent_bench/{task}"]
            assert row["score"] == score == float(planted.loc[task, "passed"])
            assert row["family"] == family == planted.loc[task, "family"]
    # budget: the mock model's usage, input + output tokens of the one solver call
    with zipfile.ZipFile(RUNS / "baseline" / "run-1.eval") as z:
        s = json.loads(z.read("samples/t05_epoch_1.json"))
    usage = next(iter(s["model_usage"].values()))
    row = frame[frame["session"].str.endswith("baseline/run-1:1") & (frame["task"] == "toy_agent_bench/t05")]
    assert row["budget"].iat[0] == usage["input_tokens"] + usage["output_tokens"]


def test_files_folders_and_globs_expand_and_unknown_files_are_counted(tmp_path):
    shutil.copytree(RUNS / "baseline", tmp_path / "a")
    (tmp_path / "a" / "notes.txt").write_text("not a log")
    frame = read_logs([tmp_path / "a", str(RUNS / "candidate" / "run-[12].eval")])
    assert frame.attrs["files"] == {"inspect": 8}
    assert [Path(p).name for p in frame.attrs["skipped"]] == ["notes.txt"]
    per_input = frame.groupby("input")["session"].nunique()  # keyed by input, not by where paths sort
    assert per_input[str(tmp_path / "a")] == 6 and per_input.drop(str(tmp_path / "a")).tolist() == [2]
    rec = [Path(f).name for _, f, _ in expand_paths(str(tmp_path / "**" / "*.eval"))]
    assert rec == [f"run-{i}.eval" for i in range(1, 7)]
    with pytest.raises(ValueError, match="matches no file"):
        read_logs(str(tmp_path / "*.nothing"))
    with pytest.raises(ValueError, match="No such file or folder"):
        read_logs(tmp_path / "missing")
    with pytest.raises(ValueError, match=r"Cannot tell the log format of 'notes.txt'"):
        read_logs(tmp_path / "a" / "notes.txt")


def _big_log(path: Path, i: int, payload: int) -> None:
    """An Inspect-shaped JSON log whose transcript is ``payload`` bytes, for the memory test."""
    events = [{"event": "model", "span_id": "s", "output": {"usage": {"input_tokens": 10 + i, "output_tokens": 5}}},
              {"event": "info", "data": "x" * payload}]
    log = {"version": 2, "eval": {"task": "big", "model": "m"},
           "samples": [{"id": 1, "epoch": 1, "events": events, "scores": {"s": {"value": i % 2}}}]}
    path.write_text(json.dumps(log))


def test_logs_are_read_one_file_at_a_time(tmp_path):
    for i in range(40):
        _big_log(tmp_path / f"log-{i:02d}.json", i, 250_000)  # 10 MB of transcripts in all
    gen = iter_log_rows(tmp_path)
    first = next(gen)
    assert first[0].name == "log-00.json" and first[1] == "inspect"
    (tmp_path / "log-02.json").unlink()  # a generator that had read ahead would not notice
    next(gen)
    with pytest.raises(FileNotFoundError):
        next(gen)
    _big_log(tmp_path / "log-02.json", 2, 250_000)
    tracemalloc.start()
    frame = read_logs(tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(frame) == 40 and frame["score"].sum() == 20
    assert peak < 4_000_000  # a few transcripts' worth, not the 10 MB of all forty


def test_swe_bench_run_report_and_id_list_score_trajectories(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    ids = ["pydicom__pydicom-1458", "astropy__astropy-1", "django__django-2", "sympy__sympy-3"]
    for i in ids:  # the real trajectory under four instance names (the budget is its model_stats)
        shutil.copyfile(TRAJ, run / f"{i}.traj")
    report = {"resolved_ids": ids[:2], "unresolved_ids": [ids[2]], "empty_patch_ids": [], "error_ids": []}
    (run / "gpt4.run1.json").write_text(json.dumps(report))
    assert read_swe_bench_report(run / "gpt4.run1.json") == {ids[0]: True, ids[1]: True, ids[2]: False}
    with pytest.warns(UserWarning, match=r"1 session\(s\) have no scored submission.*sympy__sympy-3"):
        frame = read_logs(run)  # the report beside the trajectories is found; sympy is not in it
    assert dict(zip(frame["task"], frame["score"], strict=True)) == {ids[0]: 1.0, ids[1]: 1.0, ids[2]: 0.0}
    assert frame.attrs["files"] == {"swe_agent": 4, "swe_bench_report": 1} and frame.attrs["skipped"] == []
    stats = json.loads(TRAJ.read_text())["info"]["model_stats"]
    assert (frame["budget"] == stats["tokens_sent"] + stats["tokens_received"]).all()
    (tmp_path / "resolved.txt").write_text("# resolved\nastropy__astropy-1\n")
    assert read_resolved_ids(tmp_path / "resolved.txt") == {"astropy__astropy-1"}
    frame = read_logs(run, resolved_ids=frozenset(read_resolved_ids(tmp_path / "resolved.txt")))
    assert frame.set_index("task")["score"].to_dict() == {i: float(i == ids[1]) for i in ids}
    per_instance = {ids[0]: {"resolved": False, "tests_status": {}}}
    (tmp_path / "report.json").write_text(json.dumps(per_instance))
    assert read_swe_bench_report(tmp_path / "report.json") == {ids[0]: False}
    (tmp_path / "bad.json").write_text(json.dumps({"x": 1}))
    with pytest.raises(ValueError, match="not a SWE-bench evaluation report.*resolved_ids"):
        read_swe_bench_report(tmp_path / "bad.json")


def _lm_eval_samples(folder: Path, model: str, scores: list[float], stamp: str) -> Path:
    """A samples file in lm-evaluation-harness's --log_samples layout (constructed: field names as the
    harness writes them, values made up)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_arc_easy_{stamp}.jsonl"
    with open(path, "w") as fh:
        for i, s in enumerate(scores):
            fh.write(json.dumps({"doc_id": i, "doc": {"subject": f"s{i % 2}"}, "target": "A", "arguments": [],
                                 "resps": [["A"]], "filtered_resps": ["A"], "filter": "none",
                                 "metrics": ["acc", "acc_norm"], "acc": s, "acc_norm": 1.0 - s,
                                 "doc_hash": "h", "prompt_hash": "p", "target_hash": "t"}) + "\n")
    (folder / f"results_{stamp}.json").write_text(json.dumps({"model_name": model, "results": {}}))
    return path


def test_lm_eval_samples_one_row_per_document(tmp_path):
    path = _lm_eval_samples(tmp_path / "org__model", "org/model", [1, 0, 1], "2025-01-02T03-04-05.123456")
    assert log_format(path) == "lm_eval"
    frame = read_logs(path, metadata=("subject",))
    assert frame["system"].unique().tolist() == ["org/model"]
    assert frame["task"].tolist() == ["arc_easy/0", "arc_easy/1", "arc_easy/2"]
    assert frame["score"].tolist() == [1.0, 0.0, 1.0] and frame["budget"].isna().all()  # no usage recorded: NaN, not 0
    assert frame["subject"].tolist() == ["s0", "s1", "s0"] and frame["line"].tolist() == [1, 2, 3]
    assert read_logs(path, metric="acc_norm")["score"].tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(ValueError, match=r"has the metric 'f1'; its records have \['acc', 'acc_norm'\]"):
        read_logs(path, metric="f1")


def test_event_stream_in_bulk_with_a_column_mapping(tmp_path):
    rows = [{"agent": "a", "run": "1", "task": "t", "input_tokens": 5, "output_tokens": 1, "reward": 1.0},
            {"agent": "b", "run": "1", "task": "t", "input_tokens": 3, "output_tokens": 1, "reward": 0.0}]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ValueError, match=r"lacks the 'system' field \(it has \[.*'agent'.*\]\); map yours"):
        read_logs(path)
    frame = read_logs(path, columns={"system": "agent", "session": "run", "score": "reward"})
    assert frame[["system", "budget", "score"]].values.tolist() == [["a", 6.0, 1.0], ["b", 4.0, 0.0]]


def test_inspect_folder_index_is_not_mistaken_for_a_log(tmp_path):
    shutil.copyfile(TRANSCRIPTS / "inspect_ai" / "2025-05-12T20-28-26-04-00_security-guide.json", tmp_path / "a.json")
    header = json.loads((tmp_path / "a.json").read_text())
    index = {"a.json": {k: header[k] for k in ("version", "status", "eval")}}  # Inspect's logs.json: file -> header
    (tmp_path / "logs.json").write_text(json.dumps(index))
    frame = read_logs(tmp_path)
    assert frame.attrs["files"] == {"inspect": 1} and [Path(p).name for p in frame.attrs["skipped"]] == ["logs.json"]
