"""METR's time horizon, pinned to METR's own code run on METR's runs file.

The reference ``tests/data/metr/metr_reference.json`` was produced by running METR's code
(METR/eval-analysis-public @ 19b0311, scikit-learn 1.6.1, in a separate venv) with
``python scripts/metr_reference.py --metr <checkout> --runs all_runs_19b0311.jsonl.gz --out ...``
on the runs that ``data/metr/runs.csv.gz`` holds (same rows, same order).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.metrics import (
    doubling_time,
    fit_penalised_logistic,
    hierarchical_resample,
    read_horizon_runs,
    task_weights,
    time_horizon,
)
from evalkit.metrics._logistic import _grad_hess, _objective, lbfgs_horizon_slack
from evalkit.metrics.horizon import _check_runs

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "metr" / "runs.csv.gz"
DATES = ROOT / "data" / "metr" / "release_dates.csv"
REF = json.loads((ROOT / "tests" / "data" / "metr" / "metr_reference.json").read_text())
TWO = ROOT / "tests" / "data" / "metr" / "all_runs_two_agents.jsonl.gz"


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return _check_runs(pd.read_csv(RUNS))


@pytest.fixture(scope="module")
def headline(runs: pd.DataFrame):
    return time_horizon(runs, n_resamples=0)


def test_p50_equals_metr_code_within_1_percent_for_every_agent(headline) -> None:
    ref = REF["fits"]["invsqrt|0.1"]  # METR's headline: invsqrt weights, regularization 0.1
    assert set(ref) == set(headline.fits)
    for agent, v in ref.items():
        mine = headline.horizon(agent, 0.5)
        if v["p50"] == 0:  # davinci-002: every run failed; METR returns coefficient -inf and p50 0
            assert mine == 0 and headline.fits[agent].slope == -np.inf
            continue
        assert mine == pytest.approx(v["p50"], rel=0.01), agent
        assert headline.fits[agent].slope == pytest.approx(v["coef"], rel=0.01), agent


def test_p80_equals_metr_code_within_1_percent(headline) -> None:
    for agent, v in REF["p80"].items():
        assert headline.horizon(agent, 0.8) == pytest.approx(v, rel=0.01), agent


@pytest.mark.parametrize("setting", sorted(REF["fits"]))
def test_exact_optimum_first_order_conditions_and_below_sklearn(runs: pd.DataFrame, setting: str) -> None:
    """Every weighting x regularization: the gradient of the penalised objective vanishes to
    1e-8 at evalkit's fit, and evalkit's objective is no higher than at sklearn's lbfgs point
    (where the gradient is what lbfgs's tol=1e-4 leaves)."""
    weights, reg = setting.split("|")
    w = task_weights(runs, weights)
    for agent, v in REF["fits"][setting].items():
        m = (runs["agent"] == agent).to_numpy()
        x, y = np.log2(runs.loc[m, "minutes"].to_numpy(float)), runs.loc[m, "score"].to_numpy(float)
        fit = fit_penalised_logistic(x, y, w[m], regularization=float(reg))
        if not np.isfinite(fit.slope):
            continue
        assert fit.max_abs_gradient <= 1e-8, (agent, fit.gradient)
        args = (x, w[m][None, :], (w[m] * y)[None, :], float(reg))
        ours = _objective(np.array([fit.intercept]), np.array([fit.slope]), *args)[0]
        theirs = _objective(np.array([v["intercept"]]), np.array([v["coef"]]), *args)[0]
        assert ours <= theirs + 1e-13
        ga, gb, *_ = _grad_hess(np.array([v["intercept"]]), np.array([v["coef"]]), *args)
        assert max(abs(ga[0]), abs(gb[0])) <= 1e-4 * w[m].sum() * 1.01  # lbfgs stopped within its tolerance


def test_fractional_scores_are_the_split_likelihood() -> None:
    """METR's current code splits a fractional y into a 0 (weight (1-y) w) and a 1 (weight y w):
    the same fit as evalkit's fractional y."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 60)
    y = rng.uniform(0, 1, 60)
    w = rng.uniform(0.5, 2, 60)
    direct = fit_penalised_logistic(x, y, w, regularization=0.1)
    split = fit_penalised_logistic(np.r_[x, x], np.r_[np.zeros(60), np.ones(60)], np.r_[(1 - y) * w, y * w],
                                   regularization=0.1)
    assert direct.intercept == pytest.approx(split.intercept, abs=1e-10)
    assert direct.slope == pytest.approx(split.slope, abs=1e-10)
    assert direct.max_abs_gradient <= 1e-12


def test_lbfgs_slack_bounds_the_observed_sklearn_difference(runs: pd.DataFrame, headline) -> None:
    w = task_weights(runs, "invsqrt")
    for agent, v in REF["fits"]["invsqrt|0.1"].items():
        fit = headline.fits[agent]
        if not np.isfinite(fit.slope) or v["p50"] == 0:
            continue
        m = (runs["agent"] == agent).to_numpy()
        slack = lbfgs_horizon_slack(fit, np.log2(runs.loc[m, "minutes"].to_numpy(float)), w[m])
        assert abs(fit.horizon() / v["p50"] - 1) <= slack, agent


def test_weights_are_metrs_columns() -> None:
    """Read METR's runs format directly (two agents' complete runs) and recompute METR's weights."""
    raw = pd.read_json(TWO, lines=True)
    runs = read_horizon_runs(str(TWO))
    assert len(runs) == len(raw) == 497
    assert list(runs.columns[:3]) == ["agent", "task", "score"]
    for scheme, col in (("invsqrt", "invsqrt_task_weight"), ("equal", "equal_task_weight")):
        np.testing.assert_allclose(task_weights(_check_runs(runs), scheme), raw[col], atol=1e-9)


def test_bootstrap_replicates_are_metrs(runs: pd.DataFrame) -> None:
    """``hierarchical_resample`` with METR's seeds (42 + i) draws METR's replicates, row for row."""
    from evalkit.metrics.horizon import _Design

    design = _Design.of(runs)
    for i, digest in enumerate(REF["bootstrap"]["index_sha256"]):
        idx = hierarchical_resample(design, np.random.default_rng(42 + i))
        assert hashlib.sha256(idx.astype(np.int64).tobytes()).hexdigest() == digest, i


def test_bootstrap_p50_per_replicate_matches_metr_up_to_lbfgs(runs: pd.DataFrame) -> None:
    """On METR's own replicates, evalkit's exact fits differ from METR's lbfgs fits only by the
    solver's tolerance (median 0.1 %, always within 5 %)."""
    from evalkit.metrics.horizon import _Design

    design = _Design.of(runs)
    w = task_weights(runs, "invsqrt")
    x, y = np.log2(runs["minutes"].to_numpy(float)), runs["score"].to_numpy(float)
    diffs = []
    for i, theirs in enumerate(REF["bootstrap"]["p50"][:25]):
        idx = hierarchical_resample(design, np.random.default_rng(42 + i))
        for agent, p50 in theirs.items():
            sel = idx[design.agent[idx] == design.agents.index(agent)]
            if p50 is None or not np.isfinite(p50) or p50 < 1e-3:
                continue
            fit = fit_penalised_logistic(x[sel], y[sel], w[sel], regularization=0.1)
            diffs.append(abs(fit.horizon() / p50 - 1))
    assert np.median(diffs) < 0.003
    assert max(diffs) < 0.05


def test_hierarchical_resample_of_a_toy_design_by_hand() -> None:
    """Families F1 = {a, b}, F2 = {c}; agents X, Y; runs per (task, agent) as below. The rows of
    one replicate, derived by hand from the generator's draws in METR's order, equal evalkit's
    and METR's (``bootstrap_sample`` of 19b0311, run on this frame: seeds 0, 1, 7 gave the lists)."""
    rows = []
    design = {("F1", "a"): {"X": 2, "Y": 1}, ("F1", "b"): {"X": 1, "Y": 2}, ("F2", "c"): {"X": 3, "Y": 1}}
    for (f, t), per in design.items():
        for agent, n in per.items():
            rows += [{"family": f, "task": t, "agent": agent}] * n
    toy = pd.DataFrame(rows)  # rows 0-1 aX, 2 aY, 3 bX, 4-5 bY, 6-8 cX, 9 cY
    # by hand, seed 0: families drawn [F2, F2]; each copy of F2 draws its only task c; then the
    # runs of each (task, agent) in the order "c|||X", "c|||Y": 2 copies x 3 runs = 6 draws for
    # X from rows 6-8, 2 copies x 1 run = 2 draws for Y from row 9, from one uniform vector.
    g = np.random.default_rng(0)
    assert g.integers(0, 2, size=2).tolist() == [1, 1]
    assert g.integers(0, 1, size=1).tolist() == [0] and g.integers(0, 1, size=1).tolist() == [0]
    u = g.random(8)
    by_hand = [6 + int(v * 6) % 3 for v in u[:6]] + [9 + int(v * 2) % 1 for v in u[6:]]
    assert hierarchical_resample(toy, np.random.default_rng(0)).tolist() == by_hand == [7, 6, 6, 7, 8, 6, 9, 9]
    metr = {1: [3, 3, 5, 5, 5, 5, 7, 6, 8, 9], 7: [8, 7, 7, 7, 8, 6, 9, 9]}
    for seed, expected in metr.items():
        assert hierarchical_resample(toy, np.random.default_rng(seed)).tolist() == expected
    # every replicate: each agent sees the same tasks (one resample shared), each of its rows is
    # one of its own runs of that task, and each (task copy, agent) keeps its number of runs
    from evalkit.metrics.horizon import _Design

    design = _Design.of(toy)
    key_of_row = np.empty(len(toy), dtype=int)
    for k, rows_k in enumerate(design.key_rows):  # keys: a|||X, a|||Y, b|||X, b|||Y, c|||X, c|||Y
        key_of_row[rows_k] = k
    assert design.key_task.tolist() == [0, 0, 1, 1, 2, 2]
    g = np.random.default_rng(5)
    counts = np.zeros(len(toy))
    for _ in range(1500):
        idx = hierarchical_resample(design, g)
        counts += np.bincount(idx, minlength=len(toy))
        copies = (np.bincount(key_of_row[idx], minlength=6) / design.key_n).reshape(3, 2)  # task copies per agent
        assert (copies[:, 0] == copies[:, 1]).all()  # one resample of tasks for both agents
        assert (copies == np.round(copies)).all()  # each (task copy, agent) keeps its number of runs
    np.testing.assert_allclose(counts / 1500, 1.0, atol=0.12)  # each row is drawn once on average


def test_levels_drop_the_family_or_run_level() -> None:
    toy = pd.DataFrame({"family": list("FFFG"), "task": list("abcd"), "agent": ["X"] * 4})
    idx = hierarchical_resample(toy, np.random.default_rng(0), levels=("task",))
    assert len(idx) == 4
    with pytest.raises(ValueError, match="outermost first"):
        hierarchical_resample(toy, np.random.default_rng(0), levels=("run", "family"))


def test_doubling_time_equals_metrs_fit_trendline_and_bootstrap_rule() -> None:
    dates = dict(pd.read_csv(DATES).to_numpy())
    p50 = {a: v["p50"] for a, v in REF["fits"]["invsqrt|0.1"].items()}
    reps = pd.DataFrame(REF["bootstrap"]["p50"])
    metr = doubling_time(p50, dates, reps, confidence_level=0.8, rule="metr")
    assert metr.days == pytest.approx(REF["trend"]["doubling_days"], rel=1e-9)
    assert sorted(metr.agents) == REF["trend"]["agents"]
    p10, p50_, p90 = REF["trend"]["bootstrap_p10_p50_p90"]
    assert metr.ci == pytest.approx((p10, p90), rel=1e-9)
    assert np.median(metr.replicate_days) == pytest.approx(p50_, rel=1e-9)
    assert metr.n_used == REF["trend"]["n_positive"]
    clip = doubling_time(p50, dates, reps, confidence_level=0.8)
    assert clip.days == metr.days and clip.n_used == len(reps)
    assert clip.ci[0] < clip.days < clip.ci[1]  # clipping in both keeps the point inside its interval


def test_time_horizon_with_bootstrap_and_trend(runs: pd.DataFrame) -> None:
    dates = dict(pd.read_csv(DATES).to_numpy())
    res = time_horizon(runs, quantiles=(0.5, 0.8, 0.2), n_resamples=40, dates=dates, rng=1)
    t = res.table.set_index("agent")
    assert {"p50", "p50_low", "p50_high", "p80", "p20", "slope"} <= set(t.columns)
    ok = t["p50_high"] > 0
    assert (t.loc[ok, "p50_low"] <= t.loc[ok, "p50"]).all() and (t.loc[ok, "p50"] <= t.loc[ok, "p50_high"]).all()
    assert "every run failed" in t.at["davinci-002", "warning"]
    assert "below the shortest task" in t.at["gpt-3.5-turbo-instruct", "warning"]
    assert "only 16 tasks" not in t.at["davinci-002", "warning"]  # 16 >= 10
    assert res.trend is not None and 40 < res.trend.days < 120
    same = time_horizon(runs, quantiles=(0.5, 0.8, 0.2), n_resamples=40, dates=dates, rng=1)
    pd.testing.assert_frame_equal(res.table, same.table)  # same seed, same numbers
    assert len(res.replicates) == 40 * len(t)


def test_thin_agent_and_positive_slope_warn() -> None:
    runs = pd.DataFrame({"agent": ["A"] * 8, "task": list("abcdefgh"), "minutes": [1, 2, 4, 8, 16, 32, 64, 128],
                         "score": [0, 0, 1, 0, 1, 1, 0, 1]})
    res = time_horizon(runs, n_resamples=10, rng=0, min_tasks=10)
    warning = res.table.at[0, "warning"]
    assert "only 8 tasks" in warning and "slope >= 0" in warning


def test_bad_runs_name_file_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "runs.csv"
    bad.write_text("agent,task,minutes,score\nA,t1,5,1\nA,t2,abc,0\n")
    with pytest.raises(ValueError, match=r"runs\.csv, line 3, column 'minutes'.*'abc'"):
        read_horizon_runs(str(bad))
    bad.write_text("agent,task,minutes,score\nA,t1,5,1\nA,t2,7,2.5\n")
    with pytest.raises(ValueError, match=r"runs\.csv, line 3, column 'score'"):
        read_horizon_runs(str(bad))
    minutes = tmp_path / "minutes.csv"
    minutes.write_text("task,minutes\nt1,5\nt1,6\n")
    runs = tmp_path / "r.csv"
    runs.write_text("agent,task,score\nA,t1,1\n")
    with pytest.raises(ValueError, match=r"minutes\.csv, line 3, column 'minutes': task 't1'"):
        read_horizon_runs(str(runs), minutes=str(minutes))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_horizon_on_the_shipped_data(tmp_path: Path) -> None:
    out = _cli("horizon", str(RUNS), "--dates", str(DATES), "--n-resamples", "30", "--json",
               "--plot", str(tmp_path / "c.png"), "--trend-plot", str(tmp_path / "t.svg"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    table = next(v for k, v in data.items() if k.startswith("time horizon"))
    sonnet = next(r for r in table if r["agent"] == "Claude 3.5 Sonnet (New)")
    assert sonnet["p50"] == pytest.approx(REF["fits"]["invsqrt|0.1"]["Claude 3.5 Sonnet (New)"]["p50"], rel=0.01)
    assert (tmp_path / "c.png").stat().st_size > 1000 and (tmp_path / "t.svg").stat().st_size > 1000
    assert "doubles every" in out.stderr and "Newton" in out.stderr


def test_cli_horizon_bad_input_exits_2_naming_file_line_column(tmp_path: Path) -> None:
    bad = tmp_path / "runs.csv"
    bad.write_text("agent,task,minutes,score\nA,t1,5,1\nA,t2,-3,0\n")
    out = _cli("horizon", str(bad))
    assert out.returncode == 2
    assert "runs.csv, line 3, column 'minutes'" in out.stderr and "Traceback" not in out.stderr
    out = _cli("horizon", str(RUNS), "--weights", "sqrt")
    assert out.returncode == 2
    dates = tmp_path / "dates.csv"
    dates.write_text("agent,release_date\no1,2024-12-05\nGPT-4o,May 2024\n")
    out = _cli("horizon", str(RUNS), "--n-resamples", "0", "--dates", str(dates))
    assert out.returncode == 2 and "dates.csv, line 3, column 'release_date'" in out.stderr


def test_plots_return_axes_and_draw_on_a_given_one(runs: pd.DataFrame) -> None:
    from matplotlib.figure import Figure

    from evalkit.plots.metrics import plot_horizon_curves, plot_horizon_trend

    dates = dict(pd.read_csv(DATES).to_numpy())
    res = time_horizon(runs, n_resamples=10, dates=dates, rng=0)
    ax = plot_horizon_curves(res, runs)
    assert isinstance(ax.figure, Figure) and ax.get_xscale() == "log" and len(ax.lines) > 8
    ax2 = Figure().add_subplot()
    assert plot_horizon_trend(res, dates, ax=ax2) is ax2 and ax2.get_yscale() == "log"


def test_cli_horizon_on_agent_logs_with_a_minutes_file(tmp_path: Path) -> None:
    """Any reader's runs: the shipped Inspect logs, with each task's minutes and family from a file."""
    minutes = tmp_path / "minutes.csv"
    minutes.write_text("task,minutes,family\n" + "".join(
        f"toy_agent_bench/t{i:02d},{2 ** (i / 3):.3f},f{(i - 1) // 4 + 1}\n" for i in range(1, 25)))
    out = _cli("horizon", "data/agent_runs/baseline", "data/agent_runs/candidate", "--by", "input",
               "--minutes", str(minutes), "--n-resamples", "20", "--json")
    assert out.returncode == 0, out.stderr
    table = next(iter(json.loads(out.stdout).values()))
    assert [r["n_runs"] for r in table] == [144, 144] and [r["n_tasks"] for r in table] == [24, 24]
    assert "read 288 runs of 2 agents on 24 tasks" in out.stderr
    out = _cli("horizon", "data/agent_runs/baseline", "--n-resamples", "0")
    assert out.returncode == 2 and "--minutes FILE" in out.stderr
