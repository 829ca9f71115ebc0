"""Cost and efficiency in ``compare``, ``score`` and ``summary`` on real logs (issue 25, Deliver 2).

The reference numbers never go through evalkit's readers: token counts and scores come from the log
files themselves (the ``.eval`` zip members' ``model_usage`` and ``scores``, which Inspect's own writer
aggregated; the mini-swe-agent trajectories' per-response ``usage``), and the ratio estimators and
their delta-method intervals are computed here with numpy / scipy by hand.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "agent_runs"
MINI = ROOT / "tests" / "data" / "harness" / "mini_swe_agent" / "20251118_mini-v1.15.0_gemini-3-pro-preview"
INSPECT = ROOT / "tests" / "data" / "harness" / "inspect"
PRICE_IN, PRICE_OUT = 3.0, 15.0  # dollars per million tokens for mockllm/model (a made-up price table)
# Google's published Gemini 3 Pro preview prices (<= 200k-token prompts): $2 input, $12 output, $0.20 cached
# input per million tokens; the trajectories' own instance_cost is exactly these prices times their tokens.
GEMINI = {"input": 2.0, "output": 12.0, "cache_read": 0.2}


def _inspect_samples(path: Path) -> list[dict]:
    """The samples of an Inspect log, read straight from the file (zip members or the JSON's list)."""
    if zipfile.is_zipfile(path):
        import zipfile_zstd  # noqa: F401  (Zstandard members; evalkit's dependency)

        with zipfile.ZipFile(path) as z:
            return [json.loads(z.read(n)) for n in sorted(z.namelist())
                    if n.startswith("samples/") and n.endswith(".json")]
    return json.loads(path.read_text())["samples"]


def _agent_runs_by_hand() -> pd.DataFrame:
    """system, task, run, score, input, output from data/agent_runs' .eval files (Inspect's model_usage)."""
    rows = []
    for system in ("baseline", "candidate"):
        for f in sorted((RUNS / system).glob("run-*.eval")):
            for s in _inspect_samples(f):
                (usage,) = s["model_usage"].values()
                (score,) = s["scores"].values()
                rows.append({"system": system, "task": s["id"], "run": f.stem, "score": float(score["value"] == "C"),
                             "input": usage["input_tokens"], "output": usage["output_tokens"]})
    return pd.DataFrame(rows)


def _delta_ratio(s: np.ndarray, u: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """R = mean(s)/mean(u) and its log-scale delta interval, by hand: var(log R) = g'Sg/n, g = (1/ms, -1/mu)."""
    n = s.size
    r = s.mean() / u.mean()
    g = np.array([1 / s.mean(), -1 / u.mean()])
    se = np.sqrt(g @ np.cov(np.vstack([s, u]), ddof=1) @ g / n)
    t = stats.t.ppf(0.5 + level / 2, n - 1)  # scipy.stats.t.ppf(0.975, n - 1)
    return r, r * np.exp(-t * se), r * np.exp(t * se)


def _paired_delta(sa, ua, sb, ub, level: float = 0.95) -> tuple[float, float, float]:
    """Q = (mean sb / mean ub) / (mean sa / mean ua), log-scale delta over the four per-task columns."""
    cols = np.vstack([sb, ub, sa, ua])
    m = cols.mean(axis=1)
    q = (m[0] / m[1]) / (m[2] / m[3])
    g = np.array([1 / m[0], -1 / m[1], -1 / m[2], 1 / m[3]])
    se = np.sqrt(g @ np.cov(cols, ddof=1) @ g / cols.shape[1])
    t = stats.t.ppf(0.5 + level / 2, cols.shape[1] - 1)
    return q, q * np.exp(-t * se), q * np.exp(t * se)


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> tuple[Path, dict, str]:
    """`evalkit compare baseline candidate --prices` on data/agent_runs (mockllm logs with tokens, no cost)."""
    tmp = tmp_path_factory.mktemp("cost")
    prices = tmp / "prices.csv"
    prices.write_text(f"model,input,output\nmockllm/model,{PRICE_IN:g},{PRICE_OUT:g}\n")
    out = tmp / "report"
    import contextlib
    import io

    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        code = main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--prices", str(prices),
                     "--n-resamples", "199", "--json", "--out", str(out)])
    assert code == 0, err.getvalue()
    return out, json.loads(buf.getvalue()), err.getvalue()


def test_compare_prices_token_only_logs_and_pins_efficiency_to_numpy(compared) -> None:
    out, result, _ = compared
    hand = _agent_runs_by_hand()
    hand["cost"] = (hand["input"] * PRICE_IN + hand["output"] * PRICE_OUT) / 1e6
    hand["tokens"] = hand["input"] + hand["output"]
    per_task = hand.groupby(["system", "task"]).mean(numeric_only=True)
    usage = pd.DataFrame(result["usage"]).set_index(["system", "usage"])
    eff = pd.DataFrame(result["efficiency"]).set_index(["system", "per"])
    names = {"baseline": "mockllm/model (baseline)", "candidate": "mockllm/model (candidate)"}
    for system, name in names.items():
        runs, tasks = hand[hand["system"] == system], per_task.loc[system]
        for col in ("cost", "tokens", "output"):
            key = "output_tokens" if col == "output" else col
            assert usage.loc[(name, key), "total"] == pytest.approx(runs[col].sum(), rel=1e-12)
            assert usage.loc[(name, key), "mean per task"] == pytest.approx(tasks[col].mean(), rel=1e-12)
        scale = {"cost": 1.0, "tokens": 1e6, "output": 1e6}
        for col, per in (("cost", "score per dollar"), ("tokens", "score per 1M tokens"),
                         ("output", "score per 1M output tokens")):
            r, lo, hi = _delta_ratio(tasks["score"].to_numpy(), tasks[col].to_numpy() / scale[col])
            row = eff.loc[(name, per)]
            assert (row["efficiency"], row["ci_low"], row["ci_high"]) == pytest.approx((r, lo, hi), rel=1e-10)
    a, b = per_task.loc["baseline"], per_task.loc["candidate"]
    pairs = pd.DataFrame(result["efficiency_pairs"]).set_index("per")
    q, lo, hi = _paired_delta(a["score"], a["cost"], b["score"], b["cost"])
    row = pairs.loc["score per dollar"]
    assert row["baseline"] == names["baseline"] and row["candidate"] == names["candidate"]
    assert (row["ratio (candidate / baseline)"], row["ci_low"], row["ci_high"]) == pytest.approx((q, lo, hi), rel=1e-10)
    assert q == pytest.approx(1.320032, abs=1e-6)  # the candidate gets 1.32x the score per dollar
    # the report has the same numbers, in its own section and CSVs
    csv = pd.read_csv(out / "tables" / "efficiency_pairs.csv")
    assert csv["ratio (candidate / baseline)"].tolist() == pytest.approx(pairs["ratio (candidate / baseline)"].tolist())
    md = (out / "report.md").read_text()
    assert "## Cost and efficiency" in md and "prices.csv" in md
    # the per-system score table shows the priced cost too
    scores = pd.DataFrame(result["scores"]).set_index("system")
    assert scores.loc[names["baseline"], "cost"] == pytest.approx(hand.loc[hand["system"] == "baseline", "cost"].sum())
    run = json.loads((out / "run.json").read_text())
    assert run["parameters"]["ratio_interval"] == "delta" and run["parameters"]["prices"].endswith("prices.csv")


def test_the_api_comparison_gives_the_cli_efficiency(compared) -> None:
    """``compare_runs(...).efficiency(prices=...)``: the same systems, pairs and numbers as ``evalkit compare``."""
    import evalkit

    _, cli, _ = compared
    c = evalkit.compare_runs(RUNS / "baseline", RUNS / "candidate", n_resamples=199)
    e = c.efficiency(prices={"mockllm/model": {"input": PRICE_IN, "output": PRICE_OUT}})
    want = pd.DataFrame(cli["efficiency_pairs"])
    assert e.pairs[["baseline", "candidate"]].to_numpy().tolist() == want[["baseline", "candidate"]].to_numpy().tolist()
    assert e.pairs["ratio"].tolist() == pytest.approx(want["ratio (candidate / baseline)"].tolist(), rel=1e-12)
    assert e.pairs["ci_high"].tolist() == pytest.approx(want["ci_high"].tolist(), rel=1e-12)


def test_compare_bootstrap_ratio_interval_is_named_and_reproducible(compared, tmp_path, capsys) -> None:
    _, delta, _ = compared
    args = ["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--ratio-interval", "bootstrap",
            "--n-resamples", "199", "--rng", "3", "--json"]
    got = []
    for k in range(2):
        assert main([*args, "--out", str(tmp_path / f"r{k}")]) == 0
        io = capsys.readouterr()
        got.append(json.loads(io.out))
    assert "under-covers with few tasks" in io.err  # 24 tasks: the bootstrap-t's known under-coverage is said
    assert got[0]["efficiency_pairs"] == got[1]["efficiency_pairs"]  # same --rng, same numbers
    boot = pd.DataFrame(got[0]["efficiency"]).set_index(["system", "per"])
    dl = pd.DataFrame(delta["efficiency"]).set_index(["system", "per"])
    # no --prices: the logs hold no cost, so efficiency is per token only; the point estimates are the delta run's
    assert set(boot.index.get_level_values("per")) == {"score per 1M tokens", "score per 1M output tokens"}
    assert boot["efficiency"].to_numpy() == pytest.approx(dl.loc[boot.index, "efficiency"].to_numpy(), rel=1e-12)
    assert not np.allclose(boot["ci_low"], dl.loc[boot.index, "ci_low"])  # a different interval ...
    assert (boot["ci_low"] < boot["efficiency"]).all() and (boot["efficiency"] < boot["ci_high"]).all()
    md = (tmp_path / "r0" / "report.md").read_text()
    assert "task bootstrap-t (studentized, log scale, 199 resamples)" in md  # ... named where it is shown


def test_summary_on_mini_swe_agent_logs_cost_from_the_logs_and_from_prices(tmp_path, capsys) -> None:
    """The logs' own cost, and the same cost priced from their tokens at Gemini 3 Pro's prices."""
    trajs = sorted(MINI.glob("trajs/*/*.traj.json"))
    hand = []
    for f in trajs:
        t = json.loads(f.read_text())
        use = [m["extra"]["response"]["usage"] for m in t["messages"] if (m.get("extra") or {}).get("response")]
        prompt = sum(u["prompt_tokens"] for u in use)
        cached = sum((u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0 for u in use)
        out = sum(u["completion_tokens"] for u in use)
        priced = ((prompt - cached) * GEMINI["input"] + out * GEMINI["output"] + cached * GEMINI["cache_read"]) / 1e6
        hand.append({"task": t["instance_id"], "cost": t["info"]["model_stats"]["instance_cost"], "priced": priced,
                     "tokens": prompt + out})
    hand_df = pd.DataFrame(hand).set_index("task")
    assert hand_df["priced"].to_numpy() == pytest.approx(hand_df["cost"].to_numpy(), rel=1e-12)  # the prices hold
    # the verdict of each instance: its flat SWE-bench report.json (3 of the 4 resolved)
    score = pd.Series({t: float(json.loads((MINI / "logs" / t / "report.json").read_text())["resolved"])
                       for t in hand_df.index})
    assert score.sum() == 3
    prices = tmp_path / "gemini.json"
    prices.write_text(json.dumps({"google/gemini-3-pro-preview": GEMINI}))
    for extra in ([], ["--prices", str(prices)]):
        assert main(["summary", str(MINI), "--json", *extra]) == 0
        io = capsys.readouterr()
        got = json.loads(io.out)
        usage = pd.DataFrame(got["usage"]).set_index("usage")
        assert usage.loc["cost", "total"] == pytest.approx(hand_df["cost"].sum(), rel=1e-12)
        assert usage.loc["cost", "mean per task"] == pytest.approx(hand_df["cost"].mean(), rel=1e-12)
        assert usage.loc["tokens", "total"] == pytest.approx(hand_df["tokens"].sum(), rel=1e-12)
        eff = pd.DataFrame(got["efficiency"]).set_index("per")
        r, lo, hi = _delta_ratio(score.to_numpy(), hand_df["cost"].to_numpy())
        assert tuple(eff.loc["score per dollar", ["efficiency", "ci_low", "ci_high"]]) == pytest.approx((r, lo, hi),
                                                                                                       rel=1e-9)
        assert "efficiency_pairs" not in got  # one system: nothing to pair
    assert "the logs' own cost was replaced by the priced tokens" in io.err  # with --prices, said


def _inspect_header(path: Path) -> dict:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read("header.json"))
    return json.loads(path.read_text())


def test_score_on_real_inspect_logs_carries_inspects_token_split(capsys) -> None:
    """input/output tokens summed over the runs equal the log's stats.model_usage, which Inspect itself wrote
    (4 writer versions; every sample scored, no model-graded scorer)."""
    for f in (INSPECT / "v0.3.41" / "log_formats.json", INSPECT / "v0.3.42" / "log_streaming.eval",
              INSPECT / "v0.3.58" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
              INSPECT / "v0.3.154" / "mmlu-summary-choices.eval"):
        (want,) = _inspect_header(f)["stats"]["model_usage"].values()
        assert main(["score", str(f), "--json"]) == 0
        usage = pd.DataFrame(json.loads(capsys.readouterr().out)["usage"]).set_index("usage")
        assert usage.loc["input_tokens", "total"] == want["input_tokens"], f.name
        assert usage.loc["output_tokens", "total"] == want["output_tokens"], f.name


@pytest.mark.parametrize(("text", "suffix", "needles"), [
    ("model,input,output\nmockllm/model,3,15\nother,x,3\n", ".csv",
     ["line 3", "column 'input'", "found 'x'", "a number >= 0", "--prices"]),
    ("model,input,output\nmockllm/model,-1,15\n", ".csv", ["line 2", "column 'input'", "found '-1'", "--prices"]),
    ('{"mockllm/model": {"input": 3,, "output": 15}}', ".json", ["line 1, column 31", "not valid JSON", "--prices"]),
    ("model,input\nmockllm/model,3\n", ".csv", ["needs the columns model, input and output", "missing ['output']",
                                                "--prices"]),
    ("model,input,output\nsomeone-else,3,15\n", ".csv", ["no price for the model(s) ['mockllm/model']",
                                                        "--prices"]),
])
def test_bad_prices_file_exit_2_names_file_line_column_and_flag(tmp_path, capsys, text, suffix, needles) -> None:
    bad = tmp_path / f"prices{suffix}"
    bad.write_text(text)
    assert main(["score", str(RUNS / "baseline" / "run-1.eval"), "--prices", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)


def test_prices_where_they_cannot_apply_exit_2(tmp_path, capsys) -> None:
    prices = tmp_path / "p.csv"
    prices.write_text("model,input,output\nx,1,2\n")
    assert main(["summary", str(ROOT / "data" / "llmfao" / "gpt4-comparisons.csv"), "--prices", str(prices)]) == 2
    assert "--prices applies to harness logs of runs" in capsys.readouterr().err  # judgments record no spend
    lm = ROOT / "tests" / "data" / "harness" / "lm_eval" / "gpt-4o"
    assert main(["score", str(lm), "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert "needs input_tokens and output_tokens" in err and "--prices" in err


@pytest.mark.parametrize("flags", [["--rng", "0"], ["--n-resamples", "500"]])
def test_summary_refuses_resampling_flags_on_judgment_logs(capsys, flags) -> None:
    """``--rng`` / ``--n-resamples`` of ``summary`` seed the task bootstrap of harness logs; a judgment-log
    summary draws nothing, so a given seed (even the default's value) is refused, not silently ignored."""
    assert main(["summary", str(ROOT / "data" / "llmfao" / "gpt4-comparisons.csv"), *flags]) == 2
    err = capsys.readouterr().err
    assert f"{flags[0]} applies to harness logs of runs" in err and "Traceback" not in err


def test_swe_agent_and_event_stream_keep_the_token_split() -> None:
    """SWE-agent's tokens_sent / tokens_received are the input / output tokens: priced at GPT-4 Turbo's published
    $10 / $30 per million (the trajectory's gpt4 run), they give the trajectory's own instance_cost. A JSONL event
    stream's split is cumulated per session like its other usage."""
    from evalkit.io.agent_logs import read_event_stream, read_swe_agent_traj
    from evalkit.io.logs import session_outcomes
    from evalkit.metrics.cost import with_usage

    traj = ROOT / "tests" / "data" / "transcripts" / "swe_agent" / "pydicom__pydicom-1458.traj"
    stats_ = json.loads(traj.read_text())["info"]["model_stats"]
    runs = session_outcomes(read_swe_agent_traj(traj, resolved=True, system="gpt4"))
    assert (runs["input_tokens"].iat[0], runs["output_tokens"].iat[0]) == (stats_["tokens_sent"],
                                                                          stats_["tokens_received"])
    priced = with_usage(runs.drop(columns="cost"), {"gpt4": {"input": 10, "output": 30}})
    assert priced["cost"].iat[0] == pytest.approx(stats_["instance_cost"], rel=1e-12)  # 1.26719 dollars
    events = pd.DataFrame({"system": ["s"] * 3, "session": ["x"] * 3, "task": ["t"] * 3,
                           "input_tokens": [100, 200, 50], "output_tokens": [10, 20, 5],
                           "cache_read_input_tokens": [0, 80, 0], "score": [None, None, 1.0]})
    got = session_outcomes(read_event_stream(events))
    assert got[["input_tokens", "output_tokens", "cache_read_tokens", "tokens"]].iloc[0].tolist() == [350, 35, 80,
                                                                                                        385]
