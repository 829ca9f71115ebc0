"""t-tests: Welch (from samples or from summary statistics) and the paired t-test.

evalkit never runs Student's pooled-variance t-test silently: two-sample tests are Welch's,
with the Welch-Satterthwaite degrees of freedom. (scipy's ``ttest_ind`` and statsmodels'
``ttest_ind`` both default to the pooled test.) A summary-statistics test must be told
whether the dispersion is a standard deviation or a standard error of the mean: on seed
002's MLR-Bench totals (1.58 +- 0.38 vs 2.40 +- 0.28, n = 5) the two readings give
p = 0.0055 and p = 0.124.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from evalkit.stats._result import TestResult
from evalkit.stats._validate import (
    as_pairs,
    as_sample,
    check_alternative,
    check_confidence_level,
)

__all__ = ["welch_ttest", "welch_ttest_from_stats", "paired_ttest", "t_interval", "t_pvalue"]


def t_pvalue(t: float, df: float, alternative: str) -> float:
    """p-value of a t statistic with ``df`` degrees of freedom (df may be ``inf``)."""
    if np.isnan(t) or np.isnan(df):
        return float("nan")
    dist = stats.norm if np.isinf(df) else stats.t(df)
    if alternative == "two-sided":
        return float(min(1.0, 2.0 * dist.sf(abs(t))))
    if alternative == "greater":
        return float(dist.sf(t))
    return float(dist.cdf(t))


def t_interval(
    estimate: float, se: float, df: float, confidence_level: float, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Interval ``estimate +- q * se`` with a t(df) quantile (normal if df is inf).

    One-sided alternatives give one-sided intervals, as scipy does: ``"less"`` ->
    (-inf, high), ``"greater"`` -> (low, inf).
    """
    dist = stats.norm if np.isinf(df) else stats.t(df)
    if alternative == "two-sided":
        q = dist.ppf(0.5 + confidence_level / 2.0)
        return estimate - q * se, estimate + q * se
    q = dist.ppf(confidence_level)
    if alternative == "less":
        return -np.inf, estimate + q * se
    return estimate - q * se, np.inf


def _hedges_correction(df: float) -> float:
    """Exact small-sample factor J(df) = Gamma(df/2) / (sqrt(df/2) Gamma((df-1)/2))."""
    return float(np.exp(special.gammaln(df / 2) - special.gammaln((df - 1) / 2)) / np.sqrt(df / 2))


def _welch(
    m1: float, v1: float, n1: int, m2: float, v2: float, n2: int,
    *, alternative: str, confidence_level: float, method: str, handling: str,
) -> TestResult:
    """Welch's test from means, variances (ddof 1) and sizes."""
    check_alternative(alternative)
    check_confidence_level(confidence_level)
    for name, n in (("n1", n1), ("n2", n2)):
        if n < 2:
            raise ValueError(f"Welch's t-test needs at least 2 observations per group; {name} = {n}.")
    for name, v in (("first", v1), ("second", v2)):
        if not np.isfinite(v) or v < 0:
            raise ValueError(f"The {name} group's dispersion must be a finite non-negative number; got {v!r}.")
    a, b = v1 / n1, v2 / n2
    se = float(np.sqrt(a + b))
    if se == 0.0:
        raise ValueError(
            "Both groups have zero variance, so the t statistic is undefined; "
            "compare the values directly or use an exact test."
        )
    diff = float(m1 - m2)
    t = diff / se
    r = a / (a + b)  # Welch-Satterthwaite in scaled form: no underflow of a**2, b**2 for tiny variances
    df = float(1.0 / (r**2 / (n1 - 1) + (1.0 - r) ** 2 / (n2 - 1)))
    pooled_sd = float(np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)))
    d = diff / pooled_sd if pooled_sd > 0 else float("nan")
    g = d * _hedges_correction(n1 + n2 - 2)
    return TestResult(
        method=method,
        statistic=float(t),
        statistic_name="t",
        pvalue=t_pvalue(t, df, alternative),
        alternative=alternative,
        n=int(n1 + n2),
        df=df,
        estimate=diff,
        estimate_name="difference in means (first - second)",
        effect_size=float(d),
        effect_size_name="Cohen's d (pooled SD)",
        handling=handling,
        confidence_level=confidence_level,
        details={
            "mean1": float(m1), "mean2": float(m2), "sd1": float(np.sqrt(v1)), "sd2": float(np.sqrt(v2)),
            "n1": int(n1), "n2": int(n2), "se": se, "hedges_g": float(g),
        },
        _ci=lambda level: t_interval(diff, se, df, level, alternative),
    )


def welch_ttest(
    x: ArrayLike, y: ArrayLike, *, alternative: str = "two-sided", confidence_level: float = 0.95
) -> TestResult:
    """Welch's two-sample t-test (unequal variances) of mean(x) - mean(y).

    Parameters
    ----------
    x, y : array_like
        Independent samples, at least two finite values each.
    alternative : {"two-sided", "less", "greater"}
        ``"greater"`` tests mean(x) > mean(y).
    confidence_level : float
        Level of the interval for the difference in means.

    Returns
    -------
    TestResult
        ``statistic`` t, ``df`` the Welch-Satterthwaite df, ``estimate`` the difference in
        means, ``effect_size`` Cohen's d with the pooled SD; ``details["hedges_g"]`` is d
        times the exact small-sample correction J(n1 + n2 - 2).

    Notes
    -----
    Matches ``scipy.stats.ttest_ind(x, y, equal_var=False)`` -- never the pooled default.
    """
    a = as_sample(x, name="x")
    b = as_sample(y, name="y")
    return _welch(
        a.mean(), a.var(ddof=1), a.size, b.mean(), b.var(ddof=1), b.size,
        alternative=alternative, confidence_level=confidence_level,
        method="Welch two-sample t-test", handling="",
    )


def welch_ttest_from_stats(
    mean1: float, dispersion1: float, n1: int, mean2: float, dispersion2: float, n2: int,
    *, dispersion: Literal["sd", "sem"], alternative: str = "two-sided", confidence_level: float = 0.95,
) -> TestResult:
    """Welch's t-test from summary statistics (mean, dispersion, n of each group).

    Parameters
    ----------
    mean1, dispersion1, n1, mean2, dispersion2, n2 : float, float, int
        Each group's mean, dispersion and size.
    dispersion : {"sd", "sem"}
        Required: whether the dispersions are sample standard deviations (ddof 1) or
        standard errors of the mean. Papers write "+-" for both; the answer changes the
        test (seed 002: p = 0.0055 as SD, 0.124 as SEM).
    alternative, confidence_level
        As in :func:`welch_ttest`.

    Notes
    -----
    With ``dispersion="sd"`` this equals
    ``scipy.stats.ttest_ind_from_stats(m1, sd1, n1, m2, sd2, n2, equal_var=False)``;
    scipy wants the SD and returns no df.
    """
    if dispersion not in ("sd", "sem"):
        raise ValueError(
            f"dispersion must be 'sd' (sample standard deviation) or 'sem' (standard error of "
            f"the mean); got {dispersion!r}. Check the paper: '+-' is used for both."
        )
    n1, n2 = int(n1), int(n2)
    if n1 < 2 or n2 < 2:
        raise ValueError(f"Welch's t-test needs at least 2 observations per group; got n1={n1}, n2={n2}.")
    s1, s2 = float(dispersion1), float(dispersion2)
    if dispersion == "sem":
        s1, s2 = s1 * np.sqrt(n1), s2 * np.sqrt(n2)
    handling = f"dispersion given as {'standard deviation' if dispersion == 'sd' else 'standard error of the mean'}"
    return _welch(
        float(mean1), s1**2, n1, float(mean2), s2**2, n2,
        alternative=alternative, confidence_level=confidence_level,
        method="Welch two-sample t-test (from summary statistics)", handling=handling,
    )


def paired_ttest(
    x: ArrayLike, y: ArrayLike | None = None, *, alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> TestResult:
    """Paired t-test of the mean of ``x - y`` (or of ``x`` when ``y`` is None) against 0.

    Returns
    -------
    TestResult
        ``df = n - 1``; ``effect_size`` is Cohen's d_z = mean(d) / sd(d).

    Notes
    -----
    Matches ``scipy.stats.ttest_rel(x, y)`` and its ``confidence_interval()``.
    """
    check_alternative(alternative)
    check_confidence_level(confidence_level)
    d = as_pairs(x, y)
    n = d.size
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        raise ValueError(
            f"All {n} paired differences equal {float(d[0])!r} (zero variance): the paired t statistic "
            "is undefined. Use sign_test or a permutation test."
        )
    mean = float(d.mean())
    se = sd / np.sqrt(n)
    t = mean / se
    df = float(n - 1)
    return TestResult(
        method="Paired t-test",
        statistic=float(t),
        statistic_name="t",
        pvalue=t_pvalue(t, df, alternative),
        alternative=alternative,
        n=int(n),
        df=df,
        estimate=mean,
        estimate_name="mean paired difference",
        effect_size=mean / sd,
        effect_size_name="Cohen's d_z (mean / SD of differences)",
        handling="",
        confidence_level=confidence_level,
        details={"se": float(se), "sd_diff": sd, "hedges_g_z": mean / sd * _hedges_correction(n - 1)},
        _ci=lambda level: t_interval(mean, se, df, level, alternative),
    )
