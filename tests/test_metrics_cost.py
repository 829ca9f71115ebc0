"""Cost, efficiency and completion x quality (evalkit.metrics.cost, evalkit.metrics.completion)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.metrics import (
    apply_prices,
    completion_change,
    completion_quality,
    efficiency,
    read_prices,
    read_run_table,
    shapley_split,
)
from evalkit.metrics.cost import paired_ratio_interval, ratio_interval

ROOT = Path(__file__).resolve().parents[1]
MLR = ROOT / "data" / "seed002" / "mlr_submissions.csv"
COST = ROOT / "data" / "cost"


# ---- completion x quality: seed 002 -------------------------------------------------------------

def test_seed002_mlr_shapley_shares() -> None:
    """Seed 002: MLR-Bench 31/60 x 3.07 -> 50/60 x 2.88; the +0.81 change is +0.94 completion and
    -0.13 quality: shares 116 % and -16 % (each within 1 %)."""
    cp, qp = shapley_split(31 / 60, 3.07, 50 / 60, 2.88)
    change = 50 / 60 * 2.88 - 31 / 60 * 3.07
    assert cp + qp == pytest.approx(change, abs=1e-12)
    assert round(change, 2) == 0.81 and round(cp, 2) == 0.94 and round(qp, 2) == -0.13
    assert cp / change == pytest.approx(1.16, abs=0.01)
    assert qp / change == pytest.approx(-0.16, abs=0.01)


def test_completion_change_on_the_constructed_mlr_table() -> None:
    d = pd.read_csv(MLR)
    ch = completion_change(d, "base", "mass_round2", completed="submitted", n_resamples=2000, rng=0)
    assert (ch.completion_a, ch.completion_b) == (31 / 60, 50 / 60)
    assert ch.quality_a == pytest.approx(3.07, abs=1e-9) and ch.quality_b == pytest.approx(2.88, abs=1e-9)
    assert ch.completion_share == pytest.approx(1.16, abs=0.01) and ch.quality_share == pytest.approx(-0.16, abs=0.01)
    lo, hi = ch.ci["completion_part"]
    assert lo < ch.completion_part < hi and lo > 0  # completion's gain is clear
    lo, hi = ch.ci["quality_part"]
    assert lo < ch.quality_part < hi < 0.5
    sentence = ch.sentence()
    assert sentence is not None and "rose from 52% to 83%" in sentence and "fell from 3.07 to 2.88" in sentence
    assert "candidate - baseline" in sentence
    # same direction: no sentence
    up = d.copy()
    up.loc[(up.system == "mass_round2") & (up.submitted == 1), "score"] += 1.0
    assert completion_change(up, "base", "mass_round2", completed="submitted", n_resamples=0).sentence() is None


def test_completion_quality_intervals_against_references() -> None:
    d = pd.read_csv(MLR)
    rows = completion_quality(d, completed="submitted", cluster=None).set_index("system")
    base = rows.loc["base"]
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(31, 60, alpha=0.05, method="wilson")
    assert (base["completion_low"], base["completion_high"]) == pytest.approx((lo, hi), abs=1e-12)
    o = d.loc[d.system == "base", "score"].fillna(0).to_numpy()  # an unsubmitted paper scores 0
    half = stats.t.ppf(0.975, 59) * stats.sem(o)
    assert base["overall"] == pytest.approx(o.mean()) and base["overall_high"] - base["overall"] == pytest.approx(half)
    q = d.loc[(d.system == "base") & (d.submitted == 1), "score"].to_numpy()
    assert base["quality"] == pytest.approx(3.07)
    # the jackknife SE of a ratio over units whose denominators are 0 or 1 is the SE of the completed mean
    # times (n - 1) / n-ish; check it against a direct leave-one-out computation
    c = d.loc[d.system == "base", "submitted"].to_numpy(float)
    loo = np.array([(np.nansum(o) - o[i]) / (c.sum() - c[i]) for i in range(60)])
    se = np.sqrt(59 / 60 * ((loo - loo.mean()) ** 2).sum())
    assert base["quality_high"] - base["quality"] == pytest.approx(stats.t.ppf(0.975, 59) * se)
    assert stats.sem(q) * 0.9 < se < stats.sem(q) * 1.1
    clustered = completion_quality(d, completed="submitted").set_index("system")
    assert clustered.at["base", "units"] == "12 tasks"


def test_completion_from_status_column() -> None:
    runs = pd.DataFrame({"system": ["a"] * 4, "task": list("wxyz"), "status": ["success", "error", "success", "cancelled"],
                         "score": [1.0, np.nan, 0.5, np.nan]})
    row = completion_quality(runs, cluster=None).iloc[0]
    assert row["n_completed"] == 2 and row["quality"] == 0.75 and row["overall"] == pytest.approx(1.5 / 4)


# ---- efficiency ---------------------------------------------------------------------------------

def test_delta_ratio_interval_is_the_influence_function_variance() -> None:
    rng = np.random.default_rng(0)
    s = rng.binomial(1, 0.4, 30).astype(float)
    u = rng.lognormal(0, 0.8, 30)
    r, lo, hi, _ = ratio_interval(s, u)
    z = s / s.mean() - u / u.mean()  # influence of log(mean s / mean u)
    se = z.std(ddof=1) / np.sqrt(30)
    tq = stats.t.ppf(0.975, 29)
    assert r == pytest.approx(s.sum() / u.sum())
    assert (lo, hi) == pytest.approx((r * np.exp(-tq * se), r * np.exp(tq * se)))
    sa, ua = rng.binomial(1, 0.5, 30).astype(float), rng.lognormal(0.2, 0.8, 30)
    q, lo, hi, _ = paired_ratio_interval(sa, ua, s, u)
    z = s / s.mean() - u / u.mean() - sa / sa.mean() + ua / ua.mean()
    se = z.std(ddof=1) / np.sqrt(30)
    assert q == pytest.approx((s.sum() / u.sum()) / (sa.sum() / ua.sum()))
    assert (lo, hi) == pytest.approx((q * np.exp(-tq * se), q * np.exp(tq * se)))


def test_zero_score_gets_a_linear_upper_bound() -> None:
    r, lo, hi, note = ratio_interval(np.zeros(10), np.ones(10))
    assert r == 0 and lo == 0 and np.isfinite(hi) and "no score" in note


def test_efficiency_on_the_mlr_table_per_output_token() -> None:
    d = pd.read_csv(MLR).assign(score=lambda x: x["score"].fillna(0))
    e = efficiency(d, per=["output_tokens"])
    pair = e.pairs.iloc[0]
    assert (pair["baseline"], pair["candidate"], pair["n_tasks"]) == ("base", "mass_round2", 12)
    per_task = d.groupby(["system", "task"])[["score", "output_tokens"]].mean()
    rb = per_task.loc["mass_round2"]
    ra = per_task.loc["base"]
    expected = (rb.score.sum() / rb.output_tokens.sum()) / (ra.score.sum() / ra.output_tokens.sum())
    assert pair["ratio"] == pytest.approx(expected)
    assert 1.2 < pair["ratio"] < 1.6 and pair["ci_low"] < pair["ratio"] < pair["ci_high"]
    assert e.table.set_index("system").at["base", "unit"] == "1M output tokens"
    assert "candidate / baseline" in e.sentences()[0]
    with pytest.warns(UserWarning, match="under-covers with few tasks"):
        boot = efficiency(d, per=["output_tokens"], method="bootstrap", n_resamples=500, rng=1)
    assert "bootstrap-t" in boot.pairs.at[0, "method"]


def test_prices_cost_and_errors(tmp_path: Path) -> None:
    prices = read_prices(str(COST / "prices.csv"))
    runs = pd.DataFrame({"system": ["a", "b"], "task": ["t", "t"], "score": [1, 0], "model": ["small", "large"],
                         "input_tokens": [1e6, 2e5], "output_tokens": [1e5, 1e4], "cache_read_tokens": [4e5, np.nan]})
    priced = apply_prices(runs, prices)
    assert priced["cost"].tolist() == pytest.approx([1e6 * 0.15 / 1e6 + 1e5 * 0.6 / 1e6 + 4e5 * 0.075 / 1e6,
                                                     2e5 * 15 / 1e6 + 1e4 * 75 / 1e6])
    bad = tmp_path / "p.csv"
    bad.write_text("model,input,output\nsmall,0.15,0.6\nlarge,15,seventy\n")
    with pytest.raises(ValueError, match=r"p\.csv, line 3, column 'output'.*'seventy'"):
        read_prices(str(bad))
    with pytest.raises(ValueError, match="no price for the model"):
        apply_prices(runs.assign(model=["small", "huge"]), prices)
    with pytest.raises(ValueError, match="input_tokens and output_tokens"):
        apply_prices(runs.drop(columns="input_tokens"), prices)
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"small": {"input": 0.15, "output": 0.6}}))
    assert read_prices(str(js)).at[0, "output"] == 0.6


def test_run_table_errors_name_file_line_column(tmp_path: Path) -> None:
    bad = tmp_path / "runs.csv"
    bad.write_text("system,task,score,cost\na,t1,1,0.5\na,t2,1,lots\n")
    with pytest.raises(ValueError, match=r"runs\.csv, line 3, column 'cost'"):
        read_run_table(str(bad))
    bad.write_text("system,task,score\na,t1,maybe\n")
    with pytest.raises(ValueError, match=r"runs\.csv, line 2, column 'score'"):
        read_run_table(str(bad))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_frontier_prices_and_bad_prices(tmp_path: Path) -> None:
    out = _cli("frontier", str(COST / "runs.csv"), "--prices", str(COST / "prices.csv"), "--min-completion", "0.8",
               "--n-resamples", "200", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert "large-agent-retry" not in {r["system"] for r in rows}
    assert "large-agent-retry was left out: completed 65% of its runs, below --min-completion 80%" in out.stderr
    bad = tmp_path / "prices.csv"
    bad.write_text("model,input,output\nsmall,0.15,0.6\nmedium,x,15\n")
    out = _cli("frontier", str(COST / "runs.csv"), "--prices", str(bad))
    assert out.returncode == 2 and "prices.csv, line 3, column 'input'" in out.stderr
    out = _cli("frontier", str(COST / "runs.csv"))
    assert out.returncode == 2 and "--prices" in out.stderr


def test_warnings_filter_untouched() -> None:
    """Library functions never change the warnings filters (they only warn)."""
    before = list(warnings.filters)
    d = pd.read_csv(MLR).assign(score=lambda x: x["score"].fillna(0))
    with pytest.warns(UserWarning):
        efficiency(d, per=["output_tokens"], method="bootstrap", n_resamples=50)
    assert list(warnings.filters) == before
