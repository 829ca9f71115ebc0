"""``evalkit compare``: the paired difference and mean intervals, pass@k / pass^k, the paired tests under
their null, McNemar's planned power and the flaky-task test.

Tasks have a difficulty ``alpha_t ~ N(0, 1.5^2)`` (log-odds); a run of task ``t`` by system ``s`` passes
with probability ``expit(alpha_t + delta_s)``. Clustered designs add a family level: ``alpha_t = f_g + e_t``
and, where families "share a system effect", a family-by-system term ``u_gs ~ N(0, 0.5^2)``, so that under
the null (``delta_a = delta_b``) the systems are exchangeable within a family but tasks of one family move
together. Truths are expectations over the task distribution (Gauss-Hermite quadrature, 80 nodes).

The test cells call what :func:`evalkit.stats.runs.compare_runs` calls on the per-task means
(``paired_difference``, ``mcnemar_test``, ``permutation_test``, ``paired_bootstrap``; cluster sums for
clustered designs) with its defaults (9999 resamples); one cell runs ``compare_runs`` end to end.
"""

from __future__ import annotations

from functools import cache, partial

import numpy as np
import pandas as pd
from scipy.special import expit

from evalkit.stats import mean_se, paired_difference
from evalkit.stats.paired import mcnemar_test, paired_bootstrap, permutation_test
from evalkit.stats.power import cluster_design, flaky_runs_needed, mcnemar_sample_size
from evalkit.stats.reliability import flaky_tasks, pass_k_table

SD_TASK = 1.5
_X, _W = np.polynomial.hermite_e.hermegauss(80)
_W = _W / _W.sum()


def _expect(f) -> float:
    """E f(alpha) for alpha ~ N(0, SD_TASK^2)."""
    return float(np.sum(_W * f(SD_TASK * _X)))


def _runs(gen: np.random.Generator, n_tasks: int, runs: int, delta=(0.0, 0.0), *, families: int | None = None,
          inter: float = 0.0) -> tuple[np.ndarray, np.ndarray | None]:
    """Pass/fail runs ``(2, n_tasks, runs)`` and the family of each task."""
    if families is None:
        alpha = gen.normal(0.0, SD_TASK, n_tasks)
        fam, shift = None, np.zeros((2, n_tasks))
    else:
        fam = np.repeat(np.arange(families), n_tasks // families)
        alpha = gen.normal(0.0, 1.0, families)[fam] + gen.normal(0.0, np.sqrt(SD_TASK**2 - 1.0), fam.size)
        shift = gen.normal(0.0, inter, (2, families))[:, fam] if inter else np.zeros((2, fam.size))
    p = expit(alpha[None, :] + np.asarray(delta, float)[:, None] + shift)
    return gen.random((2, alpha.size, runs)) < p[:, :, None], fam


def _diff_ci(gen, *, n_tasks: int, runs: int, delta: float, families: int | None = None,
             inter: float = 0.0) -> tuple[bool, float]:
    y, fam = _runs(gen, n_tasks, runs, (delta, 0.0), families=families, inter=inter)
    m = y.mean(axis=2)
    truth = _expect(lambda a: expit(a + delta) - expit(a)) if families is None else 0.0
    try:
        lo, hi = paired_difference(m[0], m[1], clusters=fam).confidence_interval()
    except ValueError:  # every task difference equal: compare reports no interval; not covering
        return False, 0.0
    return bool(lo <= truth <= hi), hi - lo


def _mean_ci(gen, *, n_tasks: int, runs: int, by_task: bool) -> tuple[bool, float]:
    y, _ = _runs(gen, n_tasks, runs)
    truth = _expect(expit)
    try:
        if by_task:  # every run a unit, tasks as clusters (CR1, t(G - 1))
            est = mean_se(y[0].ravel().astype(float), clusters=np.repeat(np.arange(n_tasks), runs))
        else:
            est = mean_se(y[0].mean(axis=1))
    except ValueError:
        return False, 0.0
    lo, hi = est.confidence_interval()
    return bool(lo <= truth <= hi), hi - lo


def _beta_truth(a: float, b: float, k: int, metric: str) -> float:
    if metric == "pass^k":
        return float(np.prod([(a + i) / (a + b + i) for i in range(k)]))
    return 1.0 - float(np.prod([(b + i) / (a + b + i) for i in range(k)]))


def _pass_k(gen, *, n_tasks: int, runs: int, k: int, metric: str, p: float | None = None,
            beta: tuple[float, float] | None = None) -> tuple[bool, float]:
    """Tasks all at pass rate ``p`` (the hardest case near 0 and 1: per-task estimates are 0/1 at k = n), or
    drawn from ``Beta(*beta)``; the truth is E[p^k] or E[1 - (1 - p)^k] over tasks."""
    if beta is not None:
        pt = gen.beta(*beta, n_tasks)
        truth = _beta_truth(*beta, k, metric)
    else:
        pt = np.full(n_tasks, p)
        truth = p**k if metric == "pass^k" else 1 - (1 - p) ** k
    c = gen.binomial(runs, pt)
    counts = pd.DataFrame({"system": "s", "task": np.arange(n_tasks).astype(str), "n": runs, "c": c})
    row = pass_k_table(counts, [k]).set_index("metric").loc[metric]
    return bool(row["ci_low"] <= truth <= row["ci_high"]), float(row["ci_high"] - row["ci_low"])


def _test(gen, *, test: str, n_tasks: int, runs: int, families: int | None = None, inter: float = 0.0,
          cluster: bool = False) -> tuple[bool, float]:
    """Under H0 (delta_a = delta_b): is the paired test's p-value below 0.05?"""
    y, fam = _runs(gen, n_tasks, runs, families=families, inter=inter)
    m = y.mean(axis=2)
    d = m[0] - m[1]
    if cluster:
        d = np.bincount(fam, weights=d)
    try:
        if test == "mcnemar":
            res = mcnemar_test(m[0], m[1])
        elif test == "permutation":
            res = permutation_test(d, rng=gen)
        else:
            res = paired_bootstrap(d, rng=gen)
    except ValueError:  # no discordant pair / all differences zero: compare reports no test
        return False, float("nan")
    return bool(res.pvalue < 0.05), float("nan")


def _compare_runs(gen, *, n_tasks: int, runs: int) -> tuple[bool, float]:
    """``compare_runs`` end to end (its auto test) under H0."""
    from evalkit.stats.runs import compare_runs

    y, _ = _runs(gen, n_tasks, runs)
    s, t, r = np.meshgrid(np.arange(2), np.arange(n_tasks), np.arange(runs), indexing="ij")
    o = pd.DataFrame({"system": np.where(s.ravel() == 0, "a", "b"), "task": t.ravel().astype(str),
                      "session": r.ravel().astype(str), "score": y.ravel().astype(float)})
    p = compare_runs(o, pairs=[("b", "a")], rng=gen).table["pvalue"].iloc[0]
    return bool(p < 0.05), float("nan")


def _mcnemar_power(gen, *, p10: float, p01: float) -> tuple[bool, float]:
    """At the planned sample size (compare --plan's tasks_needed, the exact method), is McNemar's exact test
    significant? The rate is the simulated power."""
    n = _planned_n(p10, p01)
    cells = gen.multinomial(n, [p10, p01, 1 - p10 - p01])
    a = np.r_[np.ones(cells[0]), np.zeros(cells[1]), np.zeros(cells[2])]
    b = np.r_[np.zeros(cells[0]), np.ones(cells[1]), np.zeros(cells[2])]
    try:
        return bool(mcnemar_test(a, b).pvalue < 0.05), float("nan")
    except ValueError:
        return False, float("nan")


@cache
def _planned_n(p10: float, p01: float) -> int:
    return int(mcnemar_sample_size(p10, p01))


def _plan_mcnemar() -> tuple[float, float]:
    """p10, p01 of the README's plan (24 tasks, base rate 0.5, icc 0.16, effect 0.1)."""
    psi = float(cluster_design(24, 6, base_rate=0.5, icc=0.16, effect=0.1).set_index("design")
                .loc["mcnemar", "note"].rsplit(" ", 1)[1])
    return (psi + 0.1) / 2, (psi - 0.1) / 2


def _flaky_size(gen, *, runs: int) -> tuple[bool, float]:
    """A stable task at the edge of the null (fails at the glitch rate 0.05): flagged at p < 0.05?"""
    c = int(gen.binomial(runs, 0.95))
    t = flaky_tasks(pd.DataFrame({"system": ["s"], "task": ["t"], "n": [runs], "c": [c]}), noise=0.05)
    return bool(t["pvalue"].iloc[0] < 0.05), float("nan")


def _flaky_power(gen, *, runs: int | None, design: str) -> tuple[bool, float]:
    """Is the coin-flip task flagged (BH over the system's tasks)? ``design="readme"``: the 24 tasks of
    data/agent_runs/truth.csv (baseline pass rates; t02 is the coin); ``"stable"``: one coin among 23
    tasks that pass 95 % of their runs. ``runs=None``: the runs compare --plan asks for."""
    if design == "readme":
        names, rates = list(_README.index), _README.to_numpy()
    else:
        names, rates = [f"t{k:02d}" for k in range(1, 25)], np.r_[0.95, 0.5, np.full(22, 0.95)]
    if runs is None:
        runs = int(flaky_runs_needed(n_tasks=rates.size))
    c = gen.binomial(runs, rates)
    counts = pd.DataFrame({"system": "s", "task": names, "n": runs, "c": c})
    flagged = flaky_tasks(counts, noise=0.05).set_index("task")["more_than_noise"]
    return bool(flagged.loc["t02"]), float("nan")


def _readme_rates() -> pd.Series:
    """The baseline's planted pass rate per task (t02 is the coin flip)."""
    from pathlib import Path

    truth = pd.read_csv(Path(__file__).resolve().parents[2] / "data" / "agent_runs" / "truth.csv")
    return truth[truth["system"] == "baseline"].groupby("task")["p_pass"].first().sort_index()


_README = _readme_rates()

_P10, _P01 = _plan_mcnemar()


def _iv(method: str, setting: str, draw, *, reps: int = 2000, quick: int = 400, hold: bool = True) -> dict:
    return {"family": "compare", "method": method, "setting": setting, "kind": "interval", "nominal": 0.95,
            "draw": draw, "reps": reps, "quick_reps": quick, "assumptions_hold": hold}


def _ts(method: str, setting: str, draw, *, reps: int = 2000, quick: int = 0, hold: bool = True,
        kind: str = "test", nominal: float = 0.05) -> dict:
    return {"family": "compare", "method": method, "setting": setting, "kind": kind, "nominal": nominal,
            "draw": draw, "reps": reps, "quick_reps": quick, "assumptions_hold": hold}


def _pk(setting: str, **kw) -> dict:
    return {"family": "pass@k", "method": f"{kw['metric'].replace('k', str(kw['k']))} Korn-Graubard interval",
            "setting": setting, "kind": "interval", "nominal": 0.95, "draw": partial(_pass_k, **kw), "reps": 4000,
            "quick_reps": 1000}


CELLS = [
    _iv("paired difference, CLT t(T-1)", "24 tasks x 6 runs, effect 0.4 logit",
        partial(_diff_ci, n_tasks=24, runs=6, delta=0.4)),
    _iv("paired difference, CLT t(T-1)", "small n: 10 tasks x 1 run, effect 0.4 logit",
        partial(_diff_ci, n_tasks=10, runs=1, delta=0.4)),
    *[_iv("paired difference, CR1 t(G-1)", f"families share a system effect, G={g} (4 tasks each, 6 runs)",
          partial(_diff_ci, n_tasks=4 * g, runs=6, delta=0.0, families=g, inter=0.5), quick=q)
      for g, q in ((5, 0), (10, 1000), (30, 0), (100, 0))],
    _iv("mean, CLT t(T-1)", "24 task means of 6 runs", partial(_mean_ci, n_tasks=24, runs=6, by_task=False)),
    _iv("mean, CR1 t(G-1)", "runs clustered by task, G=10 tasks x 6 runs",
        partial(_mean_ci, n_tasks=10, runs=6, by_task=True)),
    _pk("24 tasks x 6 runs, every task p=0.5212 (true pass^6 = 0.02)", n_tasks=24, runs=6, k=6, metric="pass^k",
        p=0.02 ** (1 / 6)),
    _pk("24 tasks x 6 runs, every task p=0.99664 (true pass^6 = 0.98)", n_tasks=24, runs=6, k=6, metric="pass^k",
        p=0.98 ** (1 / 6)),
    _pk("24 tasks x 6 runs, every task p=0.4788 (true pass@6 = 0.98)", n_tasks=24, runs=6, k=6, metric="pass@k",
        p=1 - 0.02 ** (1 / 6)),
    _pk("24 tasks x 6 runs, every task p=0.00336 (true pass@6 = 0.02)", n_tasks=24, runs=6, k=6, metric="pass@k",
        p=1 - 0.98 ** (1 / 6)),
    _pk(f"24 tasks x 6 runs, tasks ~ Beta(0.3, 1.2) (pass^6 = {_beta_truth(0.3, 1.2, 6, 'pass^k'):.3f})", n_tasks=24,
        runs=6, k=6, metric="pass^k", beta=(0.3, 1.2)),
    _pk("24 tasks x 6 runs, tasks ~ Beta(2, 2)", n_tasks=24, runs=6, k=1, metric="pass@k", beta=(2.0, 2.0)),
    _pk("24 tasks x 6 runs, tasks ~ Beta(2, 2)", n_tasks=24, runs=6, k=2, metric="pass^k", beta=(2.0, 2.0)),
    _pk("24 tasks x 6 runs, tasks ~ Beta(0.5, 0.5)", n_tasks=24, runs=6, k=4, metric="pass@k", beta=(0.5, 0.5)),
    _ts("McNemar's exact test (compare auto, 1 run per task)", "24 tasks, H0",
        partial(_test, test="mcnemar", n_tasks=24, runs=1), quick=2000),
    _ts("sign-flip permutation test (compare auto)", "24 tasks x 6 runs, H0",
        partial(_test, test="permutation", n_tasks=24, runs=6), quick=300),
    _ts("paired bootstrap-t test (compare --test bootstrap)", "24 tasks x 6 runs, H0",
        partial(_test, test="bootstrap", n_tasks=24, runs=6), quick=300),
    _ts("paired bootstrap-t test (compare --test bootstrap)", "small n: 10 tasks x 1 run, H0",
        partial(_test, test="bootstrap", n_tasks=10, runs=1)),
    _ts("sign-flip permutation, whole families flipped (compare --cluster)",
        "families share a system effect, G=10 (4 tasks each, 6 runs), H0",
        partial(_test, test="permutation", n_tasks=40, runs=6, families=10, inter=0.5, cluster=True)),
    _ts("sign-flip permutation over tasks, no --cluster", "families share a system effect, G=6 (4 tasks each), H0",
        partial(_test, test="permutation", n_tasks=24, runs=6, families=6, inter=0.5), hold=False),
    _ts("compare_runs end to end (auto test)", "24 tasks x 6 runs, H0", partial(_compare_runs, n_tasks=24, runs=6),
        reps=2000),
    _ts("McNemar's exact test at compare --plan's tasks_needed (exact method)",
        f"README plan: p10={_P10:.2f}, p01={_P01:.2f}, power 0.8", partial(_mcnemar_power, p10=_P10, p01=_P01),
        kind="power", nominal=0.8, quick=0),
    _ts("McNemar's exact test at compare --plan's tasks_needed (exact method)",
        "Connor's example: p10=0.05, p01=0.45, power 0.8", partial(_mcnemar_power, p10=0.05, p01=0.45),
        kind="power", nominal=0.8, quick=1000),
    {"family": "flakiness", "method": "flaky-task test (exact binomial against a 5 % glitch rate)",
     "setting": "stable task at the edge of H0 (passes 95 % of 6 runs)", "kind": "test", "nominal": 0.05,
     "draw": partial(_flaky_size, runs=6), "reps": 4000, "quick_reps": 2000},
    {"family": "flakiness", "method": "flaky-task test: coin-flip task flagged (BH over the tasks)",
     "setting": "README design: t02 among data/agent_runs' 24 tasks, 6 runs", "kind": "power", "nominal": 0.8,
     "draw": partial(_flaky_power, runs=6, design="readme"), "reps": 4000, "quick_reps": 0,
     "assumptions_hold": False},
    {"family": "flakiness", "method": "flaky-task test: coin-flip task flagged (BH over the tasks)",
     "setting": "1 coin among 24 tasks at compare --plan's runs per task", "kind": "power", "nominal": 0.8,
     "draw": partial(_flaky_power, runs=None, design="stable"), "reps": 4000, "quick_reps": 500},
]
