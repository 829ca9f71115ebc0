"""Reliability across repeated runs: pass@k and pass^k, flaky tasks, run-to-run vs task-to-task variance.

Input is one pass/fail outcome per (system, task, run), e.g. the final score of every
session read by :func:`evalkit.io.logs.read_logs` (:func:`evalkit.io.logs.session_outcomes`).
With ``n`` runs of a task and ``c`` passes:

* **pass@k** (at least one of k runs passes) is estimated without bias by
  ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021), **pass^k** (every one of k runs passes,
  the reliability Yao et al. 2024 call pass^k) by ``C(c, k) / C(n, k)``. Both are averaged
  over tasks (the task is the unit, as in Miller 2024). The interval is Korn & Graubard's (1998) for a
  proportion estimated from clustered data: Clopper-Pearson on the effective number of tasks. A t
  interval over tasks collapses to [0, 0] when no task passes all k runs and covered 0.37 of the time
  at a true pass^6 of 0.02 with 24 tasks (``scripts/coverage.py``).
* A task is **flaky** when its runs disagree (``0 < c < n``). Its flip rate, the chance that
  two runs disagree, ``2 p (1 - p)``, is estimated without bias by ``2 c (n - c) / (n (n - 1))``.
  The test asks whether the disagreement is more than a stable task would show under a
  per-run noise rate ``noise`` (a grading or infrastructure glitch): H0 is ``p <= noise`` or
  ``p >= 1 - noise``, and the exact p-value is ``P(m <= X <= n - m)`` for ``X ~ Bin(n, noise)``
  and ``m = min(c, n - c)`` (its largest value over H0). p-values are Benjamini-Hochberg
  adjusted over the tasks of each system.
* The **variance components** split the variance of the outcomes into task-to-task
  (``sigma2_task``) and run-to-run (``sigma2_run``) with the one-way random-effects ANOVA
  estimators (unbalanced-safe ``n0``; REML on balanced data gives the same when
  ``sigma2_task > 0``). The variance of a system's mean over ``T`` tasks of ``K`` runs is
  ``sigma2_task / T + sigma2_run / (T K)``: more runs shrink only the second term, so
  extra tasks buy at least as much precision per run as extra runs, and ``1 + K *
  sigma2_task / sigma2_run`` times as much.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import gammaln

from evalkit.budget.sampling import pass_at_k
from evalkit.stats._validate import check_confidence_level
from evalkit.stats.multiplicity import adjust_pvalues

__all__ = ["Reliability", "run_counts", "pass_k_table", "flaky_tasks", "variance_components", "reliability",
           "flaky_power_warning"]


def run_counts(
    outcomes: pd.DataFrame, *, threshold: float | None = None, system: str = "system", task: str = "task",
    score: str = "score",
) -> pd.DataFrame:
    """Runs ``n`` and passes ``c`` per (system, task).

    Parameters
    ----------
    outcomes : DataFrame
        One row per (system, task, run).
    threshold : float, optional
        A run passes when its score is ``>= threshold``. Default: scores must already be 0/1.

    Raises
    ------
    ValueError
        If a score is not 0/1 and no threshold is given (naming the first offending row).
    """
    for col in (system, task, score):
        if col not in outcomes.columns:
            raise ValueError(f"The outcomes lack the column {col!r}; they have {list(outcomes.columns)}.")
    s = pd.to_numeric(outcomes[score], errors="coerce").to_numpy(dtype=float)
    if threshold is None:
        bad = ~np.isin(s, (0.0, 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Reliability needs pass/fail outcomes: the {score!r} column must be 0 or 1. Got "
                f"{outcomes[score].iloc[i]!r} in {int(bad.sum())} rows (first: system "
                f"{outcomes[system].iloc[i]!r}, task {outcomes[task].iloc[i]!r}) instead; pass threshold= "
                "to count a score >= threshold as a pass."
            )
        passed = s == 1.0
    else:
        passed = s >= threshold
    frame = pd.DataFrame({"system": outcomes[system].astype(str).to_numpy(),
                          "task": outcomes[task].astype(str).to_numpy(), "passed": passed})
    g = frame.groupby(["system", "task"], sort=True)["passed"]
    return pd.DataFrame({"n": g.size(), "c": g.sum().astype(int)}).reset_index()


def _log_comb(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _pass_hat_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """C(c, k) / C(n, k): the unbiased probability that k runs drawn without replacement all pass."""
    n = n.astype(float)
    c = c.astype(float)
    out = np.zeros_like(n)
    ok = c >= k
    out[ok] = np.exp(_log_comb(c[ok], np.full(ok.sum(), k)) - _log_comb(n[ok], np.full(ok.sum(), k)))
    return out


def _task_mean(values: np.ndarray, level: float, cap: float) -> tuple[float, float, float, float, float]:
    """Mean over tasks, its CLT SE, and the Korn-Graubard interval; returns ``(mean, se, low, high, n_eff)``.

    The per-task estimates lie in [0, 1], so their mean is a proportion estimated from clustered
    data (runs within tasks). Korn & Graubard (1998) give such a proportion the Clopper-Pearson
    interval of ``x* = n* p`` successes in ``n*`` trials, ``n* = p (1 - p) / v`` the effective sample
    size (``v`` the squared CLT SE), shrunk by ``(z / t_{T-1})^2`` for the T - 1 degrees of freedom
    of ``v`` and capped at ``cap`` (the number of disjoint k-run blocks, T n / k: the most independent
    trials the runs hold). When the tasks do not vary (``v = 0``, always at an estimate of 0 or 1) ``n*``
    is the cap. The interval is never empty or of zero width, and it keeps its level near 0 and 1,
    where a t interval over tasks collapses to [0, 0] (``scripts/coverage.py``).
    """
    from scipy.special import ndtri, stdtrit

    t = values.size
    m = float(values.mean())
    se = float(values.std(ddof=1) / np.sqrt(t)) if t > 1 else float("nan")
    if t < 2:
        return m, se, float("nan"), float("nan"), float("nan")
    alpha = 1.0 - level
    v = se**2
    n_eff = cap if v <= 0 or m <= 0 or m >= 1 else min(cap, m * (1 - m) / v)
    n_eff *= float((ndtri(1 - alpha / 2) / stdtrit(t - 1, 1 - alpha / 2)) ** 2)
    x = m * n_eff
    lo = 0.0 if x <= 0 else float(stats.beta.ppf(alpha / 2, x, n_eff - x + 1))
    hi = 1.0 if x >= n_eff else float(stats.beta.ppf(1 - alpha / 2, x + 1, n_eff - x))
    return m, se, lo, hi, float(n_eff)


def pass_k_table(counts: pd.DataFrame, ks: Sequence[int] | None = None, *,
                 confidence_level: float = 0.95) -> pd.DataFrame:
    """pass@k and pass^k per system and k, averaged over tasks with at least k runs.

    Parameters
    ----------
    counts : DataFrame
        :func:`run_counts` output (``system, task, n, c``).
    ks : sequence of int, optional
        Default: 1, 2, 4, ... up to the smallest number of runs per task, and that number.

    Returns
    -------
    DataFrame
        ``system, k, metric ("pass@k" | "pass^k"), estimate, se`` (CLT over tasks), ``ci_low, ci_high``
        (Korn-Graubard, see :func:`_task_mean`), ``n_eff`` (its effective number of trials), ``n_tasks,
        tasks_short`` (tasks left out because they have fewer than k runs); ``attrs["interval"]`` names
        the interval.
    """
    check_confidence_level(confidence_level)
    rows = []
    for system, g in counts.groupby("system", sort=True):
        n, c = g["n"].to_numpy(), g["c"].to_numpy()
        k_list = ks if ks is not None else sorted({*(2**i for i in range(int(np.log2(n.min())) + 1)), int(n.min())})
        for k in k_list:
            use = n >= k
            if not use.any():
                continue
            cap = float(np.sum(n[use] // k))  # disjoint k-run blocks of the tasks used
            for metric, vals in (("pass@k", pass_at_k(n[use], c[use], k)), ("pass^k", _pass_hat_k(n[use], c[use], k))):
                est, se, lo, hi, n_eff = _task_mean(np.asarray(vals, dtype=float), confidence_level, cap)
                rows.append({"system": system, "k": int(k), "metric": metric, "estimate": est, "se": se,
                             "ci_low": lo, "ci_high": hi, "n_eff": n_eff, "n_tasks": int(use.sum()),
                             "tasks_short": int((~use).sum())})
    out = pd.DataFrame(rows)
    out.attrs["interval"] = (f"{confidence_level:.0%} Korn-Graubard interval: Clopper-Pearson on the effective number "
                             "of tasks n_eff (from the spread of the per-task estimates, t(T-1) df-adjusted, at most "
                             "the T n / k disjoint k-run blocks)")
    return out


def flaky_tasks(counts: pd.DataFrame, *, noise: float = 0.05, alpha: float = 0.05) -> pd.DataFrame:
    """Per (system, task): flip rate, flaky flag and the exact test against a stable task with noise.

    Returns
    -------
    DataFrame
        ``system, task, n, c, pass_rate, flip_rate, flaky`` (runs disagree), ``pvalue``,
        ``pvalue_bh`` (Benjamini-Hochberg over the system's tasks) and ``more_than_noise``
        (``pvalue_bh < alpha``).
    """
    if not 0 < noise < 0.5:
        raise ValueError(f"noise must be a per-run glitch rate in (0, 0.5); got {noise!r}.")
    out = counts.copy()
    n, c = out["n"].to_numpy(), out["c"].to_numpy()
    m = np.minimum(c, n - c)
    out["pass_rate"] = c / n
    with np.errstate(invalid="ignore", divide="ignore"):
        out["flip_rate"] = np.where(n > 1, 2.0 * c * (n - c) / (n * (n - 1.0)), np.nan)
    out["flaky"] = (c > 0) & (c < n)
    # P(m <= X <= n - m), X ~ Bin(n, noise); 1 when m = 0
    p = stats.binom.cdf(n - m, n, noise) - stats.binom.cdf(m - 1, n, noise)
    out["pvalue"] = np.where(m == 0, 1.0, np.clip(p, 0.0, 1.0))
    out["pvalue_bh"] = np.nan
    for _, idx in out.groupby("system").groups.items():
        adj = adjust_pvalues(out.loc[idx, "pvalue"].to_numpy(), method="bh", alpha=alpha)
        out.loc[idx, "pvalue_bh"] = adj.adjusted
    out["more_than_noise"] = out["pvalue_bh"] < alpha
    return out


def variance_components(counts: pd.DataFrame) -> pd.DataFrame:
    """Task-to-task and run-to-run variance of pass/fail outcomes per system (one-way ANOVA).

    Returns
    -------
    DataFrame
        ``system, n_tasks, runs_per_task`` (mean), ``mean, sigma2_task, sigma2_run, icc``
        (task share of the variance), ``F, df1, df2, pvalue`` (H0: no task-to-task variance,
        i.e. every task has the system's pass rate and the spread is binomial noise),
        ``se_mean`` (SE of the system's mean from the components), ``se_2x_tasks``,
        ``se_2x_runs`` and ``tasks_vs_runs`` (precision bought per run by new tasks relative
        to more runs of the same tasks, ``1 + K sigma2_task / sigma2_run``).
    """
    rows = []
    for system, g in counts.groupby("system", sort=True):
        n = g["n"].to_numpy(dtype=float)
        c = g["c"].to_numpy(dtype=float)
        t_, total = n.size, n.sum()
        mean = c.sum() / total
        task_means = c / n
        ssb = float(np.sum(n * (task_means - mean) ** 2))
        ssw = float(np.sum(c - c**2 / n))  # sum over runs of (y - task mean)^2 for 0/1 outcomes
        df1, df2 = t_ - 1, total - t_
        row = {"system": system, "n_tasks": int(t_), "runs_per_task": float(n.mean()), "mean": float(mean)}
        if df1 < 1 or df2 < 1:
            rows.append({**row, "note": "needs at least 2 tasks and a task with 2 runs"})
            continue
        msb, msw = ssb / df1, ssw / df2
        n0 = (total - np.sum(n**2) / total) / df1
        s2_run = msw
        s2_task = max(0.0, (msb - msw) / n0)
        k = float(n.mean())
        var = s2_task / t_ + s2_run / (t_ * k)
        f = msb / msw if msw > 0 else float("inf")
        rows.append({
            **row, "sigma2_task": s2_task, "sigma2_run": s2_run,
            "icc": s2_task / (s2_task + s2_run) if s2_task + s2_run > 0 else float("nan"),
            "F": f, "df1": float(df1), "df2": float(df2), "pvalue": float(stats.f.sf(f, df1, df2)) if msw > 0 else 0.0,
            "se_mean": float(np.sqrt(var)), "se_2x_tasks": float(np.sqrt(var / 2)),
            "se_2x_runs": float(np.sqrt(s2_task / t_ + s2_run / (2 * t_ * k))),
            "tasks_vs_runs": 1 + k * s2_task / s2_run if s2_run > 0 else float("inf"), "note": "",
        })
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Reliability:
    """pass@k / pass^k, flaky tasks and variance components of repeated runs.

    Attributes
    ----------
    counts : DataFrame
        ``system, task, n, c``.
    pass_k : DataFrame
        :func:`pass_k_table`.
    flaky : DataFrame
        :func:`flaky_tasks`.
    variance : DataFrame
        :func:`variance_components`.
    noise, confidence_level : float
    """

    counts: pd.DataFrame
    pass_k: pd.DataFrame
    flaky: pd.DataFrame
    variance: pd.DataFrame
    noise: float
    confidence_level: float


def flaky_power_warning(counts: pd.DataFrame, *, noise: float = 0.05, alpha: float = 0.05,
                        power: float = 0.8) -> str | None:
    """A warning text when the flaky-task test has less than ``power`` to flag a coin-flip task.

    ``counts`` as :func:`run_counts` gives them (``system, task, n, c``); the design is each system's
    fewest runs per task and its number of tasks (:func:`evalkit.stats.power.flaky_power`, BH over the
    tasks). ``None`` when every system's design reaches ``power``.
    """
    from evalkit.stats.power import flaky_power, flaky_runs_needed

    worst = None
    for name, g in counts.groupby("system", sort=True):
        runs, n_tasks = int(g["n"].min()), int(len(g))
        if runs < 2:
            continue
        pw = flaky_power(runs, n_tasks=n_tasks, noise=noise, alpha=alpha)
        if pw < power and (worst is None or pw < worst[0]):
            worst = (pw, str(name), runs, n_tasks)
    if worst is None:
        return None
    pw, name, runs, n_tasks = worst
    need = flaky_runs_needed(n_tasks=n_tasks, power=power, noise=noise, alpha=alpha)
    return (f"The flaky-task test has little power here: with {runs} runs per task and {n_tasks} tasks "
            f"({name}) it flags a coin-flip task with probability {pw:.2f}, so a task it does not flag is not "
            f"shown stable; {need if need is not None else 'more than 200'} runs per task reach {power:.0%} "
            "(evalkit compare --plan).")


def reliability(
    outcomes: pd.DataFrame, *, ks: Sequence[int] | None = None, threshold: float | None = None,
    noise: float = 0.05, alpha: float = 0.05, confidence_level: float = 0.95, system: str = "system",
    task: str = "task", score: str = "score",
) -> Reliability:
    """Everything above for a table of (system, task, run) pass/fail outcomes.

    Parameters
    ----------
    outcomes : DataFrame
        One row per run of a task by a system.
    ks : sequence of int, optional
        k values of pass@k / pass^k (see :func:`pass_k_table`).
    threshold : float, optional
        Pass when score >= threshold (default: scores must be 0/1).
    noise : float
        Per-run glitch rate of the flakiness test's null.
    alpha, confidence_level : float
    system, task, score : str
        Column names.
    """
    counts = run_counts(outcomes, threshold=threshold, system=system, task=task, score=score)
    if (note := flaky_power_warning(counts, noise=noise, alpha=alpha)) is not None:
        import warnings

        warnings.warn(note, UserWarning, stacklevel=2)
    return Reliability(
        counts=counts, pass_k=pass_k_table(counts, ks, confidence_level=confidence_level),
        flaky=flaky_tasks(counts, noise=noise, alpha=alpha), variance=variance_components(counts),
        noise=float(noise), confidence_level=float(confidence_level),
    )
