"""Power, minimum detectable effect and sample size: t-tests, the sign test, McNemar's test for
paired pass/fail, and clustered means (tasks run several times) with an intra-cluster correlation.

With a dozen tasks, a sign test cannot reach p < .05 unless one system wins 10 of 11 or 12
non-tied tasks (15 of 20, 21 of 30): :func:`sign_test_min_wins` says so before a study is run.
:func:`mcnemar_power` / :func:`mcnemar_sample_size` describe the exact McNemar test that evalkit runs
(Connor's (1987) normal approximation on request); :func:`flaky_power` is the flaky-task test's power;
:func:`cluster_design` plans tasks x runs with statsmodels' power classes and says how many runs find a
coin-flip task.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, stats

from evalkit.stats._validate import check_alternative

__all__ = [
    "ttest_power", "minimum_detectable_effect", "ttest_sample_size", "sign_test_min_wins",
    "mcnemar_power", "mcnemar_sample_size", "mcnemar_mde", "cluster_design", "flaky_power", "flaky_runs_needed",
]

_DESIGNS = ("paired", "unpaired")


def _check(alpha: float, alternative: str, design: str, ratio: float) -> None:
    check_alternative(alternative)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    if design not in _DESIGNS:
        raise ValueError(f"design must be 'paired' (one-sample on differences) or 'unpaired'; got {design!r}.")
    if not ratio > 0:
        raise ValueError(f"ratio (n2 / n1) must be positive; got {ratio!r}.")


def _df_nc(nobs: float, design: str, ratio: float) -> tuple[float, float]:
    """Degrees of freedom and the factor turning d into the noncentrality parameter."""
    if design == "paired":
        return nobs - 1.0, np.sqrt(nobs)
    n2 = nobs * ratio
    return nobs + n2 - 2.0, np.sqrt(nobs * n2 / (nobs + n2))


def ttest_power(
    effect_size: float, nobs: float, *, alpha: float = 0.05, alternative: str = "two-sided",
    design: str = "paired", ratio: float = 1.0,
) -> float:
    """Power of a t-test at standardised effect ``effect_size`` (Cohen's d, or d_z when paired).

    Parameters
    ----------
    effect_size : float
        d (unpaired, pooled SD) or d_z = mean difference / SD of differences (paired).
    nobs : float
        Pairs (paired) or the size of the first group (unpaired).
    alpha, alternative
        Level and direction (``"greater"``: effect > 0).
    design : {"paired", "unpaired"}
    ratio : float
        n2 / n1 for the unpaired design.

    Notes
    -----
    Noncentral t; equals statsmodels ``TTestPower().power`` (paired) and
    ``TTestIndPower().power`` (unpaired), which count both rejection tails when two-sided.
    """
    _check(alpha, alternative, design, ratio)
    if nobs < 2:
        raise ValueError(f"nobs must be at least 2; got {nobs!r}.")
    df, factor = _df_nc(float(nobs), design, ratio)
    nc = effect_size * factor
    if alternative == "two-sided":
        crit = stats.t.ppf(1 - alpha / 2, df)
        power = stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc)
    else:
        crit = stats.t.ppf(1 - alpha, df)
        power = stats.nct.sf(crit, df, nc) if alternative == "greater" else stats.nct.cdf(-crit, df, nc)
    if np.isnan(power):  # scipy's noncentral t fails far in the tail, where the power is 1 or 0
        q = stats.norm.ppf(1 - alpha / (2 if alternative == "two-sided" else 1))
        power = stats.norm.cdf(-nc - q if alternative == "less" else nc - q)
    return float(power)


def minimum_detectable_effect(
    nobs: float, *, power: float = 0.8, alpha: float = 0.05, alternative: str = "two-sided",
    design: str = "paired", ratio: float = 1.0,
) -> float:
    """Smallest standardised effect detected with probability ``power`` (solves :func:`ttest_power`).

    Returns a positive d (for ``alternative="less"`` the effect is -d).
    Equals statsmodels ``TTestPower().solve_power(nobs=..., power=..., alpha=...)``.
    """
    _check(alpha, alternative, design, ratio)
    if not alpha < power < 1:
        raise ValueError(f"power must lie in (alpha, 1) = ({alpha}, 1); got {power!r}.")
    sign = -1.0 if alternative == "less" else 1.0

    def f(d: float) -> float:
        return ttest_power(sign * d, nobs, alpha=alpha, alternative=alternative, design=design, ratio=ratio) - power

    return float(optimize.brentq(f, 1e-9, 50.0, xtol=1e-12))


def ttest_sample_size(
    effect_size: float, *, power: float = 0.8, alpha: float = 0.05, alternative: str = "two-sided",
    design: str = "paired", ratio: float = 1.0,
) -> float:
    """Observations (pairs, or first-group size) needed for ``power`` at ``effect_size``.

    Returns the real-valued solution (round up for a design).
    Equals statsmodels ``solve_power(effect_size=..., power=..., alpha=...)``.
    """
    _check(alpha, alternative, design, ratio)
    if effect_size == 0:
        raise ValueError("effect_size must be non-zero: no sample size detects a zero effect.")
    if not alpha < power < 1:
        raise ValueError(f"power must lie in (alpha, 1) = ({alpha}, 1); got {power!r}.")

    def f(n: float) -> float:
        return ttest_power(effect_size, n, alpha=alpha, alternative=alternative, design=design, ratio=ratio) - power

    return float(optimize.brentq(f, 2.0 + 1e-9, 1e7, xtol=1e-10))


def sign_test_min_wins(n: int, *, alpha: float = 0.05, alternative: str = "two-sided") -> int | None:
    """Fewest wins out of ``n`` non-tied pairs for which the exact sign test gives p < ``alpha``.

    Returns None when even n wins of n is not significant (e.g. n <= 5 at alpha = .05,
    two-sided). Values: 10 for n = 11 and 12, 15 for 20, 21 for 30 (two-sided, .05).
    """
    check_alternative(alternative)
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer number of non-tied pairs; got {n!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    n = int(n)
    k = np.arange(n + 1)
    upper = stats.binom.sf(k - 1, n, 0.5)  # P(X >= k)
    if alternative == "two-sided":
        # symmetric null: the two-sided exact p is min(1, 2 P(X >= k)) for k >= n/2
        p = np.minimum(1.0, 2 * np.where(k >= n / 2, upper, 1.0))
    elif alternative == "greater":
        p = upper
    else:
        raise ValueError("For alternative='less' count losses and use alternative='greater'.")
    ok = np.flatnonzero(p < alpha)
    return int(ok[0]) if ok.size else None


def _check_discordant(p10: float, p01: float) -> tuple[float, float]:
    if not (0 <= p10 <= 1 and 0 <= p01 <= 1 and 0 < p10 + p01 <= 1):
        raise ValueError(f"p10 and p01 (discordant probabilities) must be in [0, 1] with 0 < p10 + p01 <= 1; "
                         f"got {p10!r} and {p01!r}.")
    return p10 - p01, p10 + p01


def _z(alpha: float, alternative: str) -> float:
    return float(stats.norm.ppf(1 - alpha / (2 if alternative == "two-sided" else 1)))


_MCNEMAR_METHODS = ("exact", "connor")


def _exact_critical(m: np.ndarray, alpha: float, alternative: str) -> np.ndarray:
    """Per number of discordant pairs ``m``: the largest count ``c`` in the lower rejection tail of the
    exact McNemar test (``b <= c``, and ``b >= m - c`` when two-sided; ``-1`` if none), i.e. the largest
    ``c`` with ``2 P(B <= c) <= alpha`` (``P(B <= c) <= alpha`` one-sided), ``B ~ Bin(m, 1/2)``:
    ``scipy.stats.binomtest``'s two-sided p at 1/2 is ``min(1, 2 * smaller tail)``."""
    target = alpha / 2 if alternative == "two-sided" else alpha
    c = stats.binom.ppf(target, m, 0.5).astype(int)  # smallest c with P(B <= c) >= target
    c = np.where(stats.binom.cdf(c, m, 0.5) <= target * (1 + 1e-12), c, c - 1)
    if alternative == "two-sided":  # the two tails must not meet (b = m/2 has p = 1)
        c = np.minimum(c, (m - 1) // 2)
    return c


def mcnemar_power(
    n: float, p10: float, p01: float, *, alpha: float = 0.05, alternative: str = "two-sided", method: str = "exact",
) -> float:
    """Power of McNemar's test with ``n`` pairs and discordant probabilities ``p10`` (a passes, b
    fails) and ``p01``.

    Parameters
    ----------
    method : {"exact", "connor"}, default "exact"
        ``"exact"``: the power of the exact (binomial) McNemar test that :func:`evalkit.stats.mcnemar_test`
        and ``evalkit compare`` run: over the number of discordant pairs ``m ~ Bin(n, psi)``, the
        probability that ``b ~ Bin(m, p10 / psi)`` falls in the test's rejection region.
        ``"connor"``: Connor's (1987) normal approximation, ``Phi((|d| sqrt(n) - z sqrt(psi)) /
        sqrt(psi - d^2))`` with ``d = p10 - p01``, ``psi = p10 + p01`` (both tails when two-sided);
        it describes a different (large-sample) test and overstates the exact test's power by 0.04-0.09
        at 20-60 pairs (``scripts/coverage.py``).
    alternative : {"two-sided", "greater"}
        ``"greater"``: a passes more often (p10 > p01).
    """
    check_alternative(alternative)
    if alternative == "less":
        raise ValueError("For alternative='less' swap p10 and p01 and use alternative='greater'.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    if method not in _MCNEMAR_METHODS:
        raise ValueError(f"method must be one of {_MCNEMAR_METHODS}; got {method!r}.")
    if not n >= 1 or (method == "exact" and int(n) != n):
        raise ValueError(f"n must be a number of pairs >= 1 (whole for method='exact'); got {n!r}.")
    d, psi = _check_discordant(p10, p01)
    if method == "connor":
        z = _z(alpha, alternative)
        sd = np.sqrt(psi - d**2)
        if sd == 0:
            return 1.0 if d != 0 else float(alpha)
        up = stats.norm.cdf((d * np.sqrt(n) - z * np.sqrt(psi)) / sd)
        down = stats.norm.cdf((-d * np.sqrt(n) - z * np.sqrt(psi)) / sd) if alternative == "two-sided" else 0.0
        return float(up + down)
    n = int(n)
    m = np.arange(1, n + 1)
    pm = stats.binom.pmf(m, n, psi)
    q = p10 / psi
    c = _exact_critical(m, alpha, alternative)
    if alternative == "two-sided":  # b <= c or b >= m - c
        hit = stats.binom.cdf(c, m, q) + stats.binom.sf(m - c - 1, m, q)
    else:  # b >= m - c: a passes more often
        hit = stats.binom.sf(m - c - 1, m, q)
    hit = np.where(c >= 0, hit, 0.0)
    return float(np.sum(pm * hit))


def mcnemar_sample_size(
    p10: float, p01: float, *, power: float = 0.8, alpha: float = 0.05, alternative: str = "two-sided",
    method: str = "exact",
) -> float:
    """Pairs needed for McNemar's test to reach ``power``.

    ``method="exact"`` (default): the smallest whole ``n`` at which the exact test's power
    (:func:`mcnemar_power`) reaches ``power``. (The exact power is a sawtooth in ``n``: a few larger
    ``n`` can fall just below it again.) ``method="connor"``: Connor's (1987) closed form
    ``((z_a sqrt(psi) + z_b sqrt(psi - d^2)) / d)^2``, real-valued (round up); his example as
    tabulated by powerandsamplesize.com: p10 = 0.05, p01 = 0.45, alpha = 0.05, power 0.8 -> 23 pairs.
    """
    check_alternative(alternative)
    d, psi = _check_discordant(p10, p01)
    if d == 0:
        raise ValueError("p10 == p01: no sample size detects a zero difference.")
    if not alpha < power < 1:
        raise ValueError(f"power must lie in (alpha, 1) = ({alpha}, 1); got {power!r}.")
    if method not in _MCNEMAR_METHODS:
        raise ValueError(f"method must be one of {_MCNEMAR_METHODS}; got {method!r}.")
    za, zb = _z(alpha, alternative), float(stats.norm.ppf(power))
    connor = float(((za * np.sqrt(psi) + zb * np.sqrt(psi - d**2)) / d) ** 2)
    if method == "connor":
        return connor
    if alternative != "two-sided" and d < 0:
        raise ValueError("For alternative='greater' p10 must exceed p01 (a passes more often).")
    n = max(1, int(np.floor(0.7 * connor)))
    while mcnemar_power(n, p10, p01, alpha=alpha, alternative=alternative) < power:
        n += 1
        if n > 10 * connor + 1000:  # pragma: no cover - the exact power tends to 1
            raise ValueError("No sample size up to ten times Connor's reaches the power.")
    # step back while the power still holds (Connor's start can overshoot for discordant-poor designs)
    while n > 1 and mcnemar_power(n - 1, p10, p01, alpha=alpha, alternative=alternative) >= power:
        n -= 1
    return float(n)


def mcnemar_mde(n: int, discordance: float, *, power: float = 0.8, alpha: float = 0.05,
                alternative: str = "two-sided", method: str = "exact") -> float:
    """Smallest difference in pass rates ``p10 - p01`` McNemar's test detects with ``n`` pairs when
    a share ``discordance`` (= p10 + p01) of the pairs disagree (the exact test's power by default,
    Connor's approximation with ``method="connor"``); NaN when even ``p01 = 0`` is not detected."""
    if not 0 < discordance <= 1:
        raise ValueError(f"discordance (p10 + p01) must be in (0, 1]; got {discordance!r}.")

    def f(d: float) -> float:
        return mcnemar_power(n, (discordance + d) / 2, (discordance - d) / 2, alpha=alpha,
                             alternative=alternative, method=method) - power

    if f(discordance * (1 - 1e-12)) < 0:
        return float("nan")  # even p01 = 0 is not detected
    return float(optimize.brentq(f, 1e-12, discordance * (1 - 1e-12), xtol=1e-12))


def flaky_power(runs: int, *, n_tasks: int = 1, noise: float = 0.05, alpha: float = 0.05,
                pass_rate: float = 0.5) -> float:
    """Probability that the flaky-task test flags one task whose runs pass with ``pass_rate`` (a coin
    flip by default), among ``n_tasks`` tasks tested together.

    The test (:func:`evalkit.stats.reliability.flaky_tasks`) rejects ``p <= noise or p >= 1 - noise``
    when ``P(m <= X <= n - m) < alpha`` for ``X ~ Bin(n, noise)`` and ``m = min(c, n - c)``, with
    Benjamini-Hochberg over the system's tasks. With one flaky task among stable ones BH flags it when
    its p-value is at most ``alpha / n_tasks`` (the others' p-values are large), so this is the exact
    power of the test at ``alpha / n_tasks``: a lower bound for BH, exact when every other task is
    far from flaky.
    """
    if int(runs) != runs or runs < 2:
        raise ValueError(f"runs must be a whole number >= 2; got {runs!r}.")
    if int(n_tasks) != n_tasks or n_tasks < 1:
        raise ValueError(f"n_tasks must be a whole number >= 1; got {n_tasks!r}.")
    n = int(runs)
    c = np.arange(n + 1)
    m = np.minimum(c, n - c)
    pv = stats.binom.cdf(n - m, n, noise) - stats.binom.cdf(m - 1, n, noise)
    pv = np.where(m == 0, 1.0, pv)
    return float(np.sum(stats.binom.pmf(c, n, pass_rate) * (pv <= alpha / n_tasks)))


def flaky_runs_needed(*, n_tasks: int = 1, power: float = 0.8, noise: float = 0.05, alpha: float = 0.05,
                      pass_rate: float = 0.5, max_runs: int = 200) -> int | None:
    """Fewest runs per task with :func:`flaky_power` >= ``power`` (None beyond ``max_runs``)."""
    for runs in range(2, max_runs + 1):
        if flaky_power(runs, n_tasks=n_tasks, noise=noise, alpha=alpha, pass_rate=pass_rate) >= power:
            return runs
    return None


def cluster_design(
    n_tasks: int, runs: int, *, base_rate: float, icc: float, effect: float | None = None, power: float = 0.8,
    alpha: float = 0.05, discordance: float | None = None, noise: float = 0.05,
) -> pd.DataFrame:
    """Power plan for comparing two systems on ``n_tasks`` tasks run ``runs`` times each.

    Outcomes are pass/fail with rate ``base_rate`` (variance ``s2 = p (1 - p)``); ``icc`` is the
    share of that variance that is task-to-task (estimated by
    :func:`evalkit.stats.reliability.variance_components`). Three designs, each with its MDE
    (in pass-rate points), and for ``effect`` the tasks (at ``runs``) and runs (at ``n_tasks``)
    needed:

    * ``mcnemar``: one run per task, paired pass/fail, the exact test's power (:func:`mcnemar_power`);
      ``discordance`` defaults to ``2 p (1 - p) (1 - icc)``, the disagreement of two runs of one system.
    * ``paired tasks``: task means of ``runs`` runs compared over shared tasks when the task
      effect is shared by both systems (the best case): ``var(d_t) = 2 s2 (1 - icc) / runs``,
      paired t-test (statsmodels ``TTestPower``).
    * ``independent tasks``: the same when nothing is shared (the worst case): each task mean
      has variance ``s2 (icc + (1 - icc) / runs)`` (design effect ``1 + (runs - 1) icc``),
      Welch-like two-sample t-test over tasks (statsmodels ``TTestIndPower``). Extra runs
      cannot push the MDE below the floor set by ``icc``.
    * ``flaky-task test``: the runs per task at which the flaky-task test flags a coin-flip task among
      ``n_tasks`` with probability ``power`` (:func:`flaky_runs_needed`; glitch rate ``noise``), and its
      power at ``runs`` in the note.

    Returns
    -------
    DataFrame
        ``design, n_tasks, runs, sd_unit, mde, tasks_needed, runs_needed, note``.
    """
    from statsmodels.stats.power import TTestIndPower, TTestPower

    if not 0 < base_rate < 1:
        raise ValueError(f"base_rate must be in (0, 1); got {base_rate!r}.")
    if not 0 <= icc < 1:
        raise ValueError(f"icc must be in [0, 1); got {icc!r}.")
    if int(n_tasks) != n_tasks or n_tasks < 3 or int(runs) != runs or runs < 1:
        raise ValueError(f"n_tasks must be a whole number >= 3 and runs >= 1; got {n_tasks!r} and {runs!r}.")
    s2 = base_rate * (1 - base_rate)
    psi = discordance if discordance is not None else 2 * s2 * (1 - icc)
    rows = []
    mde = mcnemar_mde(int(n_tasks), psi, power=power, alpha=alpha)
    need = mcnemar_sample_size((psi + effect) / 2, (psi - effect) / 2, power=power, alpha=alpha) if (
        effect is not None and effect < psi) else float("nan")
    rows.append({"design": "mcnemar", "n_tasks": n_tasks, "runs": 1, "sd_unit": float("nan"), "mde": mde,
                 "tasks_needed": need, "runs_needed": float("nan"),
                 "note": f"one pass/fail run per task; exact McNemar power; discordance {psi:.3g}"})
    paired, indep = TTestPower(), TTestIndPower()
    sd_p = np.sqrt(2 * s2 * (1 - icc) / runs)
    dz = float(paired.solve_power(nobs=n_tasks, alpha=alpha, power=power))
    row = {"design": "paired tasks", "n_tasks": n_tasks, "runs": runs, "sd_unit": sd_p, "mde": dz * sd_p,
           "tasks_needed": float("nan"), "runs_needed": float("nan"), "note": "task effect shared (best case)"}
    if effect is not None:
        row["tasks_needed"] = float(paired.solve_power(effect_size=effect / sd_p, alpha=alpha, power=power))
        row["runs_needed"] = 2 * s2 * (1 - icc) * dz**2 / effect**2
    rows.append(row)
    sd_i = np.sqrt(s2 * (icc + (1 - icc) / runs))
    d = float(indep.solve_power(nobs1=n_tasks, alpha=alpha, power=power, ratio=1.0))
    row = {"design": "independent tasks", "n_tasks": n_tasks, "runs": runs, "sd_unit": sd_i, "mde": d * sd_i,
           "tasks_needed": float("nan"), "runs_needed": float("nan"),
           "note": f"nothing shared (worst case); design effect {1 + (runs - 1) * icc:.3g}; "
                   f"MDE floor with {n_tasks} tasks {d * np.sqrt(s2 * icc):.3g}"}
    if effect is not None:
        row["tasks_needed"] = float(indep.solve_power(effect_size=effect / sd_i, alpha=alpha, power=power))
        room = (effect / d) ** 2 / s2 - icc
        row["runs_needed"] = (1 - icc) / room if room > 0 else float("inf")
    rows.append(row)
    needed = flaky_runs_needed(n_tasks=int(n_tasks), power=power, noise=noise, alpha=alpha)
    have = flaky_power(int(runs), n_tasks=int(n_tasks), noise=noise, alpha=alpha) if runs >= 2 else 0.0
    rows.append({"design": "flaky-task test", "n_tasks": n_tasks, "runs": runs, "sd_unit": float("nan"),
                 "mde": float("nan"), "tasks_needed": float("nan"),
                 "runs_needed": float("nan") if needed is None else float(needed),
                 "note": f"power {have:.2f} to flag one coin-flip task among {n_tasks} (the others stable) at {runs} run(s) (exact, "
                         f"BH at {alpha:g}, glitch rate {noise:g}); runs_needed for {power:.0%}"})
    return pd.DataFrame(rows)
