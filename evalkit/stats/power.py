"""Power, minimum detectable effect and sample size for t-tests; fewest wins for a sign test.

With a dozen tasks, a sign test cannot reach p < .05 unless one system wins 10 of 11 or 12
non-tied tasks (15 of 20, 21 of 30): :func:`sign_test_min_wins` says so before a study is run.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from evalkit.stats._validate import check_alternative

__all__ = ["ttest_power", "minimum_detectable_effect", "ttest_sample_size", "sign_test_min_wins"]

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
