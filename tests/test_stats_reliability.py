"""Reliability across runs: pass@k / pass^k closed forms, flaky tasks, variance components vs statsmodels;
power for McNemar (Connor 1987, exact enumeration) and clustered designs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from agent_runs_helpers import RUNS
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from evalkit.stats.power import (
    cluster_design,
    mcnemar_mde,
    mcnemar_power,
    mcnemar_sample_size,
    ttest_power,
)
from evalkit.stats.reliability import flaky_tasks, reliability, run_counts, variance_components


def _outcomes(counts: dict[str, tuple[int, int]], system: str = "s") -> pd.DataFrame:
    """Runs of each task: c passes then n - c failures (order does not matter)."""
    rows = [(system, t, f"r{i}", float(i < c)) for t, (n, c) in counts.items() for i in range(n)]
    return pd.DataFrame(rows, columns=["system", "task", "session", "score"])


def test_pass_at_k_and_pass_hat_k_equal_their_closed_forms():
    counts = {"t1": (5, 0), "t2": (5, 2), "t3": (5, 5), "t4": (6, 3), "t5": (3, 1)}
    rel = reliability(_outcomes(counts), ks=[1, 2, 3, 4])
    t = rel.pass_k.set_index(["k", "metric"])
    for k in (1, 2, 3, 4):
        use = [(n, c) for n, c in counts.values() if n >= k]
        at_k = np.mean([1 - math.comb(n - c, k) / math.comb(n, k) for n, c in use])  # Chen et al. 2021
        hat_k = np.mean([math.comb(c, k) / math.comb(n, k) for n, c in use])  # C(c,k)/C(n,k)
        assert t.loc[(k, "pass@k"), "estimate"] == pytest.approx(at_k, rel=1e-12)
        assert t.loc[(k, "pass^k"), "estimate"] == pytest.approx(hat_k, rel=1e-12)
        assert t.loc[(k, "pass@k"), "tasks_short"] == len(counts) - len(use)
    # interval: Korn & Graubard (1998), as R survey's svyciprop(method = "beta"): the effective sample size
    # n* = p (1 - p) / SE^2 of the per-task estimates (the task is the unit), times (z / t_{T-1})^2, and
    # Clopper-Pearson's beta quantiles at n* p successes; capped at the T n / k disjoint k-run blocks
    per = np.array([math.comb(c, 2) / math.comb(n, 2) for n, c in counts.values()])
    m, v = per.mean(), per.var(ddof=1) / len(per)
    cap = sum(n // 2 for n, _ in counts.values())
    n_eff = min(cap, m * (1 - m) / v) * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, len(per) - 1)) ** 2
    assert t.loc[(2, "pass^k"), "n_eff"] == pytest.approx(n_eff, rel=1e-12)
    lo = stats.beta.ppf(0.025, n_eff * m, n_eff * (1 - m) + 1)
    hi = stats.beta.ppf(0.975, n_eff * m + 1, n_eff * (1 - m))
    assert t.loc[(2, "pass^k"), "ci_low"] == pytest.approx(lo, rel=1e-10)
    assert t.loc[(2, "pass^k"), "ci_high"] == pytest.approx(hi, rel=1e-10)


def test_pass_hat_k_interval_is_never_zero_width_at_the_boundary():
    # 24 tasks, 0-5 passes of 6 each: no task passes all six runs, pass^6 = 0. A t interval over tasks
    # was [0, 0]; Clopper-Pearson on the cap of 24 blocks (times the t(23) adjustment) gives [0, u] with
    # u = 1 - 0.025^(1 / n*), the exact upper bound for 0 successes in n* trials
    counts = {f"t{i:02d}": (6, i % 6) for i in range(24)}
    t = reliability(_outcomes(counts), ks=[6]).pass_k.set_index(["k", "metric"])
    row = t.loc[(6, "pass^k")]
    n_eff = 24 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 23)) ** 2
    assert row["estimate"] == 0 and row["ci_low"] == 0
    assert row["ci_high"] == pytest.approx(1 - 0.025 ** (1 / n_eff), rel=1e-10)
    assert row["ci_high"] > 0.1
    # and every task passing every run: pass@6 = 1 with a lower bound below 1
    full = reliability(_outcomes({f"t{i}": (6, 6) for i in range(24)}), ks=[6]).pass_k.set_index(["k", "metric"])
    assert full.loc[(6, "pass@k"), "ci_high"] == 1 and 0.8 < full.loc[(6, "pass@k"), "ci_low"] < 1


def test_flaky_detection_flags_a_planted_coin_and_leaves_a_deterministic_task():
    g = np.random.default_rng(3)
    coin = int((g.random(20) < 0.5).sum())  # a task with a planted 50 % flip rate, 20 runs
    counts = {"coin": (20, coin), "always": (20, 20), "never": (20, 0), "glitchy": (20, 19)}
    flaky = flaky_tasks(run_counts(_outcomes(counts)), noise=0.05).set_index("task")
    assert bool(flaky.loc["coin", "more_than_noise"]) and bool(flaky.loc["coin", "flaky"])
    assert not flaky.loc["always", "flaky"] and flaky.loc["always", "pvalue"] == 1.0
    assert not flaky.loc["never", "more_than_noise"]
    assert bool(flaky.loc["glitchy", "flaky"]) and not flaky.loc["glitchy", "more_than_noise"]  # 1 of 20: noise
    m = min(coin, 20 - coin)
    # P(m <= X <= 20 - m) for X ~ Bin(20, 0.05): the chance a stable task shows this much disagreement
    ref = sum(math.comb(20, x) * 0.05**x * 0.95 ** (20 - x) for x in range(m, 20 - m + 1))
    assert flaky.loc["coin", "pvalue"] == pytest.approx(ref, rel=1e-9)
    assert flaky.loc["coin", "flip_rate"] == pytest.approx(2 * coin * (20 - coin) / (20 * 19))


def test_shipped_runs_flag_the_planted_coin_task_not_the_deterministic_one():
    truth = pd.read_csv(RUNS / "truth.csv")
    out = truth.rename(columns={"run": "session"}).assign(score=truth["passed"].astype(float))
    flaky = reliability(out).flaky.set_index(["system", "task"])
    for system in ("baseline", "candidate"):
        assert bool(flaky.loc[(system, "t02"), "more_than_noise"])  # planted p = 0.5: 3 of 6 both times
        assert not flaky.loc[(system, "t01"), "flaky"]  # planted p = 1


def test_variance_components_equal_statsmodels_mixedlm_reml_on_balanced_runs():
    import statsmodels.formula.api as smf

    g = np.random.default_rng(7)
    p = g.beta(2, 2, size=30)
    rows = [("s", f"t{t}", r, float(g.random() < p[t])) for t in range(30) for r in range(8)]
    out = pd.DataFrame(rows, columns=["system", "task", "session", "score"])
    v = variance_components(run_counts(out)).iloc[0]
    fit = smf.mixedlm("score ~ 1", out, groups=out["task"]).fit(reml=True)  # one-way random intercept, REML
    assert v["sigma2_task"] == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-4)
    assert v["sigma2_run"] == pytest.approx(fit.scale, rel=1e-4)
    # the F test of "no task-to-task variance" is scipy's one-way ANOVA over the tasks
    ref = stats.f_oneway(*[grp["score"].to_numpy() for _, grp in out.groupby("task")])
    assert v["F"] == pytest.approx(ref.statistic, rel=1e-10) and v["pvalue"] == pytest.approx(ref.pvalue, rel=1e-8)
    # SE of the mean from the components = CLT SE of the task means on balanced data
    tm = out.groupby("task")["score"].mean()
    assert v["se_mean"] == pytest.approx(tm.std(ddof=1) / np.sqrt(30), rel=1e-10)


def test_mcnemar_sample_size_matches_connor_published_example():
    # Connor (1987), p. 209, as tabulated by powerandsamplesize.com (Compare Paired Proportions, McNemar):
    # p01 = 0.45, p10 = 0.05, alpha = 0.05 -> ceiling(n) = 23 two-sided at power 0.8, and 23 one-sided at 0.9
    assert math.ceil(mcnemar_sample_size(0.05, 0.45, method="connor")) == 23
    assert math.ceil(mcnemar_sample_size(0.45, 0.05, alternative="greater", power=0.9, method="connor")) == 23
    n = mcnemar_sample_size(0.05, 0.45, method="connor")
    assert mcnemar_power(n, 0.05, 0.45, method="connor") == pytest.approx(0.8, abs=1e-6)  # + the far tail's 1e-8
    d = mcnemar_mde(40, 0.3, method="connor")
    assert mcnemar_power(40, (0.3 + d) / 2, (0.3 - d) / 2, method="connor") == pytest.approx(0.8, abs=1e-9)


def _enumerated_power(n: int, p10: float, p01: float, alpha: float = 0.05) -> float:
    """Power of statsmodels' exact McNemar test by summing the multinomial probability of every table."""
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if b + c and mcnemar([[0, b], [c, 0]], exact=True).pvalue <= alpha:
                total += math.comb(n, b) * math.comb(n - b, c) * p10**b * p01**c * (1 - p10 - p01) ** (n - b - c)
    return total


def test_exact_mcnemar_is_the_default_and_its_sample_size_reaches_the_power():
    # Connor's 23 pairs give the exact test that evalkit runs only 0.77 power; the exact sample size is the
    # smallest n whose enumerated power reaches 0.8
    n = mcnemar_sample_size(0.05, 0.45)
    assert n == 25
    assert _enumerated_power(25, 0.05, 0.45) >= 0.8 > _enumerated_power(24, 0.05, 0.45)
    assert _enumerated_power(23, 0.05, 0.45) == pytest.approx(mcnemar_power(23, 0.05, 0.45), rel=1e-10)
    assert mcnemar_power(23, 0.05, 0.45) < 0.78 < mcnemar_power(23, 0.05, 0.45, method="connor")
    d = mcnemar_mde(40, 0.3)
    assert mcnemar_power(40, (0.3 + d) / 2, (0.3 - d) / 2) == pytest.approx(0.8, abs=1e-9)
    assert d > mcnemar_mde(40, 0.3, method="connor")  # the approximation promises more than the test gives


def test_exact_mcnemar_power_equals_enumeration_with_statsmodels():
    n, p10, p01 = 12, 0.35, 0.05
    probs = {"a": 1 - p10 - p01, "b": p10, "c": p01}
    total = 0.0
    for b in range(n + 1):  # every 2x2 table of n pairs: b (a passes only), c (b passes only), the rest concordant
        for c in range(n + 1 - b):
            if b + c == 0:
                continue
            pr = math.comb(n, b) * math.comb(n - b, c) * probs["b"] ** b * probs["c"] ** c * probs["a"] ** (n - b - c)
            if mcnemar([[0, b], [c, 0]], exact=True).pvalue <= 0.05:
                total += pr
    assert mcnemar_power(n, p10, p01, method="exact") == pytest.approx(total, rel=1e-10)


def test_cluster_design_mde_has_the_target_power_and_the_variance_formula_holds():
    plan = cluster_design(24, 4, base_rate=0.5, icc=0.2, effect=0.1).set_index("design")
    s2 = 0.25
    sd_p = np.sqrt(2 * s2 * 0.8 / 4)
    assert plan.loc["paired tasks", "sd_unit"] == pytest.approx(sd_p)
    assert ttest_power(plan.loc["paired tasks", "mde"] / sd_p, 24) == pytest.approx(0.8, abs=1e-6)
    sd_i = plan.loc["independent tasks", "sd_unit"]
    assert ttest_power(plan.loc["independent tasks", "mde"] / sd_i, 24, design="unpaired") == pytest.approx(0.8, abs=1e-6)
    k = plan.loc["paired tasks", "runs_needed"]
    assert ttest_power(0.1 / np.sqrt(2 * s2 * 0.8 / k), 24) == pytest.approx(0.8, abs=1e-6)
    # Monte Carlo check of var(task mean of K runs) = s2 (icc + (1 - icc) / K): beta-binomial tasks with
    # p ~ Beta(a, a), whose ICC is 1 / (2a + 1)
    g = np.random.default_rng(0)
    a = (1 / 0.2 - 1) / 2
    p = g.beta(a, a, size=200_000)
    means = g.binomial(4, p) / 4
    assert means.var() == pytest.approx(s2 * (0.2 + 0.8 / 4), rel=0.02)
    assert sd_i == pytest.approx(np.sqrt(s2 * (0.2 + 0.8 / 4)))
    floor = cluster_design(24, 4, base_rate=0.5, icc=0.2, effect=0.05).set_index("design")
    assert floor.loc["independent tasks", "runs_needed"] == np.inf  # 0.05 is below the icc floor at 24 tasks


@pytest.mark.parametrize("bad", [dict(base_rate=1.2), dict(icc=1.0)])
def test_cluster_design_rejects_impossible_inputs(bad):
    kwargs = dict(base_rate=0.5, icc=0.1) | bad
    with pytest.raises(ValueError, match="must be in"):
        cluster_design(20, 2, **kwargs)


def test_run_counts_needs_pass_fail_or_a_threshold():
    out = _outcomes({"t": (3, 1)}).assign(score=[0.2, 0.7, 1.0])
    with pytest.raises(ValueError, match="pass threshold= to count"):
        run_counts(out)
    assert run_counts(out, threshold=0.5)["c"].tolist() == [2]
    assert list(itertools.islice(run_counts(out, threshold=0.5).columns, 4)) == ["system", "task", "n", "c"]


@given(st.lists(st.tuples(st.integers(4, 12), st.floats(0, 1)), min_size=2, max_size=8))
def test_pass_k_orderings_hold_for_any_counts(tasks):
    counts = {f"t{i}": (n, int(round(f * n))) for i, (n, f) in enumerate(tasks)}
    t = reliability(_outcomes(counts), ks=[1, 2, 3, 4]).pass_k
    at = t[t["metric"] == "pass@k"].set_index("k")["estimate"]
    hat = t[t["metric"] == "pass^k"].set_index("k")["estimate"]
    assert at[1] == pytest.approx(hat[1])  # one run: both are the pass rate
    assert (np.diff(at.to_numpy()) >= -1e-12).all() and (np.diff(hat.to_numpy()) <= 1e-12).all()
    assert ((t["ci_low"] <= t["estimate"] + 1e-12) | t["ci_low"].isna()).all()
