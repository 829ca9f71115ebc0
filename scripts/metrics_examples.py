"""Print every number the README's agent-metrics sections quote, from the data shipped in data/.

    python scripts/metrics_examples.py

1. METR's time horizon: evalkit against METR's own code (tests/data/metr/metr_reference.json, made by
   scripts/metr_reference.py), the first-order conditions at both solutions, the bootstrap intervals
   and the doubling time (the same calls as ``evalkit horizon data/metr/runs.csv.gz --dates ...``).
2. Completion x quality and score per output token on data/seed002/mlr_submissions.csv.
3. Cost, efficiency and the frontier on data/cost/runs.csv priced with data/cost/prices.csv.
4. Cost and efficiency in ``evalkit compare`` on the Inspect logs of data/agent_runs (tokens only, priced with
   data/cost/agent_runs_prices.csv), and in ``evalkit summary`` on the real mini-swe-agent logs of
   tests/data/harness (their own cost; Gemini 3 Pro's published prices give the same dollars).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.metrics import (
    apply_prices,
    completion_change,
    completion_quality,
    efficiency,
    fit_penalised_logistic,
    frontier,
    read_prices,
    read_run_table,
    task_weights,
    time_horizon,
)
from evalkit.metrics._logistic import _grad_hess
from evalkit.metrics.horizon import _check_runs

ROOT = Path(__file__).resolve().parents[1]
pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 30)


def horizon() -> None:
    ref = json.loads((ROOT / "tests/data/metr/metr_reference.json").read_text())
    runs = _check_runs(pd.read_csv(ROOT / "data/metr/runs.csv.gz"))
    dates = dict(pd.read_csv(ROOT / "data/metr/release_dates.csv").to_numpy())
    res = time_horizon(runs, n_resamples=1000, dates=dates, rng=0)
    w = task_weights(runs, "invsqrt")
    rows = []
    for agent, v in ref["fits"]["invsqrt|0.1"].items():
        m = (runs["agent"] == agent).to_numpy()
        x, y = np.log2(runs.loc[m, "minutes"].to_numpy(float)), runs.loc[m, "score"].to_numpy(float)
        fit = fit_penalised_logistic(x, y, w[m], regularization=0.1)
        ga, gb, *_ = _grad_hess(np.array([v["intercept"]]), np.array([v["coef"]]), x, w[m][None, :],
                                (w[m] * y)[None, :], 0.1)
        t = res.table.set_index("agent").loc[agent]
        rows.append({"agent": agent, "metr_p50": v["p50"], "evalkit_p50": fit.horizon(0.5),
                     "rel_diff": fit.horizon(0.5) / v["p50"] - 1 if v["p50"] else 0.0,
                     "grad_evalkit": fit.max_abs_gradient, "grad_sklearn": max(abs(ga[0]), abs(gb[0])),
                     "metr_p80": ref["p80"].get(agent, float("nan")), "evalkit_p80": fit.horizon(0.8),
                     "p50_low": t["p50_low"], "p50_high": t["p50_high"]})
    print("== METR time horizon (weights invsqrt, regularization 0.1); 95% hierarchical bootstrap, 1000, rng 0")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    worst = {}
    for setting, fits in ref["fits"].items():
        wt, reg = setting.split("|")
        r = time_horizon(runs, weights=wt, regularization=float(reg), n_resamples=0)
        rel = [abs(r.horizon(a) / f["p50"] - 1) for a, f in fits.items() if f["p50"] > 0]
        worst[setting] = (max(rel), float(np.nanmax(r.table["max_abs_gradient"])))
    print("max |rel diff| of p50 and max FOC residual per setting:", worst)
    tr = res.trend
    assert tr is not None
    print(f"doubling time {tr.days:.1f} days, 95% CI {tr.ci[0]:.1f} to {tr.ci[1]:.1f}, R2 {tr.r_squared:.3f}; "
          f"METR's fit_trendline {ref['trend']['doubling_days']:.1f} days, METR's bootstrap p10/p50/p90 "
          f"{[round(v, 1) for v in ref['trend']['bootstrap_p10_p50_p90']]}")
    print(res.method())


def completion() -> None:
    d = pd.read_csv(ROOT / "data/seed002/mlr_submissions.csv")
    print("\n== seed 002 MLR-Bench (constructed table)")
    print(completion_quality(d, completed="submitted").drop(columns=["method"]).to_string(index=False))
    ch = completion_change(d, "base", "mass_round2", completed="submitted", n_resamples=2000, rng=0)
    print({k: round(v, 4) if isinstance(v, float) else v for k, v in ch.to_dict().items()})
    print(ch.sentence())
    e = efficiency(d.assign(score=d["score"].fillna(0)), per=["output_tokens"])
    print(e.pairs.drop(columns="note").to_string(index=False))


def cost() -> None:
    runs = apply_prices(read_run_table(str(ROOT / "data/cost/runs.csv")), read_prices(str(ROOT / "data/cost/prices.csv")))
    runs["tokens"] = runs["input_tokens"] + runs["output_tokens"]
    print("\n== data/cost (constructed), priced")
    e = efficiency(runs.assign(score=runs["score"].fillna(0)), per=["tokens", "cost"])
    print(e.usage[["system", "n_tasks", "tokens_per_task", "cost_per_task", "cost_sum", "time_per_task"]]
          .to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(e.table.drop(columns=["note", "method"]).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    f = frontier(runs, n_resamples=2000, rng=0, min_completion=0.8)
    print(f.table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for s in f.sentences():
        print(s)


def _cli_json(args: list[str]) -> dict:
    """Run an evalkit command in this process and return its --json result."""
    import contextlib
    import io

    from evalkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--json"])
    if code != 0:
        raise SystemExit(f"evalkit {' '.join(args)} exited {code}: {err.getvalue()}")
    for line in err.getvalue().splitlines():
        if "gets" in line and "x the score per" in line:
            print(line)
    return json.loads(out.getvalue())


def cost_in_commands() -> None:
    import tempfile

    fmt = {"float_format": lambda v: f"{v:.4g}", "index": False}
    with tempfile.TemporaryDirectory() as tmp:
        print("\n== evalkit compare data/agent_runs/baseline data/agent_runs/candidate "
              "--prices data/cost/agent_runs_prices.csv")
        got = _cli_json(["compare", str(ROOT / "data/agent_runs/baseline"), str(ROOT / "data/agent_runs/candidate"),
                         "--prices", str(ROOT / "data/cost/agent_runs_prices.csv"), "--out", f"{tmp}/c"])
    usage = pd.DataFrame(got["usage"])
    print(usage[usage["usage"].isin(["tokens", "output_tokens", "cost", "time"])].to_string(**fmt))
    print(pd.DataFrame(got["efficiency"]).drop(columns="note").to_string(**fmt))
    print(pd.DataFrame(got["efficiency_pairs"]).drop(columns="note").to_string(**fmt))
    mini = ROOT / "tests/data/harness/mini_swe_agent/20251118_mini-v1.15.0_gemini-3-pro-preview"
    print(f"\n== evalkit summary {mini.relative_to(ROOT)}")
    got = _cli_json(["summary", str(mini)])
    print(pd.DataFrame(got["usage"]).to_string(**fmt))
    print(pd.DataFrame(got["efficiency"]).drop(columns="note").to_string(**fmt))


if __name__ == "__main__":
    print("load:", os.getloadavg())
    horizon()
    completion()
    cost()
    cost_in_commands()
    print("load:", os.getloadavg())
