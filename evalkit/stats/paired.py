"""Nonparametric tests of paired samples: Wilcoxon signed-rank, McNemar, sign-flip
permutation test and the paired bootstrap.

Each names how zero differences (ties) were handled: scipy's ``wilcoxon`` drops zeros by
default (``zero_method="wilcox"``); evalkit keeps that default but prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from evalkit._rng import RNGLike, as_generator
from evalkit.stats._result import TestResult
from evalkit.stats._validate import as_pairs, check_alternative, check_confidence_level

__all__ = ["wilcoxon_test", "mcnemar_test", "permutation_test", "paired_bootstrap"]

_ZERO_METHODS = {
    "wilcox": "zero differences dropped before ranking (zero_method='wilcox')",
    "pratt": "zero differences ranked, then their ranks dropped (zero_method='pratt')",
    "zsplit": "ranks of zero differences split between the signs (zero_method='zsplit')",
}


def _signed_rank_counts(n: int) -> np.ndarray:
    """Number of sign vectors giving each value 0..n(n+1)/2 of W+ (exact null of n ranks)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


def _hodges_lehmann_ci(d: np.ndarray, level: float) -> tuple[float, float]:
    """Interval for the pseudo-median from ordered Walsh averages (Hollander & Wolfe).

    Exact signed-rank quantiles for up to 300 non-zero differences (an O(n^3) vectorised
    recursion on counts), the continuity-corrected normal approximation beyond.
    """
    d = d[d != 0]
    n = d.size
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    alpha = 1.0 - level
    m = walsh.size  # n(n+1)/2
    if n <= 300:
        cdf = np.cumsum(_signed_rank_counts(n)) / 2.0**n
        k = int(np.searchsorted(cdf, alpha / 2.0, side="right"))  # P(W+ <= k-1) <= alpha/2
    else:
        z = stats.norm.ppf(1 - alpha / 2.0)
        k = int(np.floor(n * (n + 1) / 4.0 - z * np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0) + 0.5))
    k = max(k, 1)
    return float(walsh[k - 1]), float(walsh[m - k])


def wilcoxon_test(
    x: ArrayLike, y: ArrayLike | None = None, *, zero_method: str = "wilcox",
    alternative: str = "two-sided", confidence_level: float = 0.95,
) -> TestResult:
    """Wilcoxon signed-rank test of paired samples (or of differences ``x``).

    Parameters
    ----------
    x, y : array_like
        Paired samples or differences.
    zero_method : {"wilcox", "pratt", "zsplit"}
        How zero differences are treated (scipy's options, named in the result).
    alternative, confidence_level
        ``"greater"``: x tends to exceed y. The interval is for the Hodges-Lehmann
        pseudo-median of the differences.

    Returns
    -------
    TestResult
        ``statistic`` and ``pvalue`` exactly as ``scipy.stats.wilcoxon(x - y, zero_method,
        alternative)``; ``estimate`` the Hodges-Lehmann pseudo-median (median of Walsh
        averages of the non-zero differences); ``effect_size`` the matched-pairs
        rank-biserial correlation (W+ - W-) / (W+ + W-).
    """
    check_alternative(alternative)
    check_confidence_level(confidence_level)
    if zero_method not in _ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {tuple(_ZERO_METHODS)}; got {zero_method!r}.")
    d = as_pairs(x, y)
    nonzero = d[d != 0]
    if nonzero.size == 0:
        raise ValueError(f"All {d.size} paired differences are zero; the signed-rank test is undefined.")
    res = stats.wilcoxon(d, zero_method=zero_method, alternative=alternative)
    ranks = stats.rankdata(np.abs(d if zero_method != "wilcox" else nonzero))
    signs = np.sign(d if zero_method != "wilcox" else nonzero)
    w_plus = float(ranks[signs > 0].sum())
    w_minus = float(ranks[signs < 0].sum())
    if zero_method == "zsplit":
        w_zero = float(ranks[signs == 0].sum())
        w_plus += w_zero / 2
        w_minus += w_zero / 2
    r_rb = (w_plus - w_minus) / (w_plus + w_minus)
    walsh_i, walsh_j = np.triu_indices(nonzero.size)
    hl = float(np.median((nonzero[walsh_i] + nonzero[walsh_j]) / 2.0))

    def ci(level: float) -> tuple[float, float]:
        if alternative == "two-sided":
            return _hodges_lehmann_ci(nonzero, level)
        low, high = _hodges_lehmann_ci(nonzero, 2 * level - 1)
        return (-np.inf, high) if alternative == "less" else (low, np.inf)

    return TestResult(
        method="Wilcoxon signed-rank test",
        statistic=float(res.statistic),
        statistic_name="W (scipy convention)",
        pvalue=float(res.pvalue),
        alternative=alternative,
        n=int(d.size),
        estimate=hl,
        estimate_name="Hodges-Lehmann pseudo-median of the differences",
        effect_size=float(r_rb),
        effect_size_name="matched-pairs rank-biserial correlation",
        handling=f"{d.size - nonzero.size} zero differences; " + _ZERO_METHODS[zero_method],
        confidence_level=confidence_level,
        details={"w_plus": w_plus, "w_minus": w_minus, "n_zero": int(d.size - nonzero.size)},
        _ci=ci,
    )


def _as_pass_fail(v: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(v).reshape(-1)
    if arr.dtype == bool:
        return arr
    num = np.asarray(arr, dtype=float)
    bad = ~np.isin(num, (0.0, 1.0))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        shown = arr[first].item() if isinstance(arr[first], np.generic) else arr[first]
        raise ValueError(
            f"{name} must be pass/fail (bool or 0/1); got {shown!r} at position {first} "
            f"({int(bad.sum())} values not 0/1)."
        )
    return num == 1.0


def mcnemar_test(
    x: ArrayLike, y: ArrayLike, *, exact: bool = True, correction: bool = True,
    alternative: str = "two-sided", confidence_level: float = 0.95,
) -> TestResult:
    """McNemar's test for paired pass/fail outcomes of two systems on the same items.

    Parameters
    ----------
    x, y : array_like of bool or 0/1
        Pass (1) / fail (0) of each system per item, aligned.
    exact : bool
        Exact binomial test on the discordant pairs (default) or the chi-square version.
    correction : bool
        Continuity correction of the chi-square version.
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: x passes more often than y (exact test only; the chi-square test is
        two-sided).

    Returns
    -------
    TestResult
        ``statistic`` = b (x passes, y fails) for the exact test, the chi-square otherwise;
        ``estimate`` the difference in pass rates (b - c) / n with a Wald interval for paired
        proportions (one-sided for a one-sided ``alternative``; with few discordant pairs it can
        disagree with the exact test, whose p-value is the answer); ``effect_size`` the
        conditional odds ratio b / c.

    Notes
    -----
    The p-value equals ``statsmodels.stats.contingency_tables.mcnemar([[a, b], [c, d]],
    exact=..., correction=...)``.
    """
    check_confidence_level(confidence_level)
    check_alternative(alternative)
    if alternative != "two-sided" and not exact:
        raise ValueError("The chi-square McNemar test is two-sided; use exact=True for a one-sided test.")
    a, c_ = _paired_pass_fail(x, y)
    b = int(np.count_nonzero(a & ~c_))
    c = int(np.count_nonzero(~a & c_))
    n = int(a.size)
    if b + c == 0:
        raise ValueError(
            f"No discordant pairs among {n} items (both systems pass or fail together): "
            "McNemar's test has nothing to test."
        )
    stat, p, method = _mcnemar_pvalue(b, c, exact=exact, correction=correction, alternative=alternative)
    diff = (b - c) / n
    se = float(np.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n)
    return TestResult(
        method=method,
        statistic=stat,
        statistic_name="b (x pass, y fail)" if exact else "chi2",
        pvalue=p,
        alternative=alternative,
        n=n,
        df=None if exact else 1.0,
        estimate=diff,
        estimate_name="difference in pass rates (x - y)",
        effect_size=b / c if c else float("inf"),
        effect_size_name="conditional odds ratio b / c",
        handling=f"{n - b - c} concordant pairs carry no information and are not tested",
        confidence_level=confidence_level,
        details={"b": b, "c": c, "both_pass": int(np.count_nonzero(a & c_)),
                 "both_fail": int(np.count_nonzero(~a & ~c_)), "se": se},
        _ci=_paired_rate_ci(diff, se, alternative),
    )


def _paired_pass_fail(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated, aligned pass/fail vectors of at least 2 items."""
    a = _as_pass_fail(x, "x")
    c_ = _as_pass_fail(y, "y")
    if a.shape != c_.shape:
        raise ValueError(f"x and y must be paired: x has {a.size} items and y has {c_.size}.")
    if a.size < 2:
        raise ValueError(f"McNemar's test needs at least 2 paired items; got {a.size}.")
    return a, c_


def _mcnemar_pvalue(b: int, c: int, *, exact: bool, correction: bool, alternative: str) -> tuple[float, float, str]:
    """(statistic, p-value, method) of McNemar's exact or chi-square test on the discordant counts."""
    if exact:
        p = float(stats.binomtest(b, b + c, 0.5, alternative=alternative).pvalue)
        return float(b), p, "McNemar's exact test"
    stat = (abs(b - c) - (1.0 if correction else 0.0)) ** 2 / (b + c)
    method = "McNemar's chi-square test" + (" (continuity-corrected)" if correction else "")
    return stat, float(stats.chi2.sf(stat, 1)), method


def _paired_rate_ci(diff: float, se: float, alternative: str) -> Callable[[float], tuple[float, float]]:
    """Wald interval of the paired difference in pass rates, sided like the test.

    With few discordant pairs it can disagree with the exact test (the p-value is the test).
    """

    def ci(level: float) -> tuple[float, float]:
        if alternative == "two-sided":
            q = stats.norm.ppf(0.5 + level / 2)
            return max(-1.0, diff - q * se), min(1.0, diff + q * se)
        q = stats.norm.ppf(level)
        return (max(-1.0, diff - q * se), 1.0) if alternative == "greater" else (-1.0, min(1.0, diff + q * se))

    return ci


def permutation_test(
    x: ArrayLike, y: ArrayLike | None = None, *, n_resamples: int = 9999, rng: RNGLike = 0,
    alternative: str = "two-sided",
) -> TestResult:
    """Sign-flip permutation test of the mean paired difference.

    Exact (all 2**n sign vectors) when 2**n <= ``n_resamples``, otherwise Monte Carlo with
    ``n_resamples`` random sign vectors drawn from ``rng`` and p = (k + 1) / (B + 1).
    The two-sided p-value is twice the smaller one-sided p-value (capped at 1), as in
    ``scipy.stats.permutation_test(..., permutation_type="samples")``.

    Returns
    -------
    TestResult
        ``statistic`` and ``estimate`` the mean difference; ``details["exact"]``.
    """
    check_alternative(alternative)
    d = as_pairs(x, y)
    n = d.size
    observed = float(d.mean())
    exact = n < 63 and 2**n <= n_resamples
    if exact:
        bits = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(float)
        null = (1.0 - 2.0 * bits) @ d / n
        adj = 0
    else:
        gen = as_generator(rng)
        null = np.empty(n_resamples)
        for start in range(0, n_resamples, 1000):
            stop = min(start + 1000, n_resamples)
            signs = gen.choice(np.array([-1.0, 1.0]), size=(stop - start, n))
            null[start:stop] = signs @ d / n
        adj = 1
    eps = 1e-14 * max(1.0, abs(observed))  # scipy's tolerance for ties with the observed value
    p_greater = (np.count_nonzero(null >= observed - eps) + adj) / (null.size + adj)
    p_less = (np.count_nonzero(null <= observed + eps) + adj) / (null.size + adj)
    p = {"greater": p_greater, "less": p_less,
         "two-sided": min(1.0, 2 * min(p_greater, p_less))}[alternative]
    method = "Sign-flip permutation test" + (" (exact)" if exact else f" (Monte Carlo, {n_resamples} resamples)")
    return _mean_difference_result(
        method, d, float(p), alternative, handling="zero differences kept (their sign flip changes nothing)",
        details={"exact": bool(exact), "n_resamples": int(null.size)},
    )


def _mean_difference_result(
    method: str, d: np.ndarray, pvalue: float, alternative: str, *, handling: str,
    details: dict[str, Any], confidence_level: float = 0.95,
    ci: Callable[[float], tuple[float, float]] | None = None,
) -> TestResult:
    """Result of a resampling test of the mean paired difference (statistic = estimate = mean(d))."""
    observed = float(d.mean())
    sd = float(d.std(ddof=1))
    return TestResult(
        method=method, statistic=observed, statistic_name="mean difference", pvalue=pvalue,
        alternative=alternative, n=int(d.size), estimate=observed, estimate_name="mean paired difference",
        effect_size=observed / sd if sd > 0 else None, effect_size_name="Cohen's d_z",
        handling=handling, confidence_level=confidence_level, details=details, _ci=ci,
    )


def paired_bootstrap(
    x: ArrayLike, y: ArrayLike | None = None, *, n_resamples: int = 9999, rng: RNGLike = 0,
    confidence_level: float = 0.95, alternative: str = "two-sided",
) -> TestResult:
    """Paired (item) bootstrap-t test of the mean difference, with the bootstrap-t interval.

    Items are resampled with replacement (indices drawn by ``rng.integers(0, n, (B, n))`` in
    batches), so pairing is kept. Each resample gives ``t* = (mean* - mean) / se*`` (``se`` the
    sample SD / sqrt(n)); the p-value compares the observed ``t = mean / se`` with the ``t*``
    (two-sided: ``(#{|t*| >= |t|} + 1) / (B + 1)``), and the interval is
    ``[mean - q_hi se, mean - q_lo se]`` with ``q`` the quantiles of ``t*`` (Efron & Tibshirani
    1993, ch. 12). A resample whose items all agree (``se* = 0``) has ``t* = 0`` when its mean equals
    the observed one and is infinite otherwise.

    Earlier versions inverted the percentile interval of the bootstrap means, which rejected 6.8 %
    of the time at alpha = 0.05 with 24 tasks (its variance is biased by (n - 1) / n and it has no
    t correction; ``scripts/coverage.py``).

    Returns
    -------
    TestResult
        ``statistic`` and ``estimate`` the mean difference; ``details["se"]`` the bootstrap SE of
        the mean, ``details["t"]`` the observed t.
    """
    check_alternative(alternative)
    check_confidence_level(confidence_level)
    d = as_pairs(x, y)
    n = d.size
    if n < 2:
        raise ValueError(f"The paired bootstrap needs at least 2 pairs; got {n}.")
    gen = as_generator(rng)
    mean = float(d.mean())
    se = float(d.std(ddof=1) / np.sqrt(n))
    if se == 0.0:
        raise ValueError(f"All {n} paired differences equal {float(d[0])!r} (zero variance): the bootstrap-t "
                         "test is undefined.")
    means = np.empty(n_resamples)
    tstar = np.empty(n_resamples)
    for start in range(0, n_resamples, 1000):
        stop = min(start + 1000, n_resamples)
        sample = d[gen.integers(0, n, size=(stop - start, n))]
        m = sample.mean(axis=1)
        s = sample.std(axis=1, ddof=1) / np.sqrt(n)
        dev = m - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(s > 0, dev / np.where(s > 0, s, 1.0), np.where(np.abs(dev) > 1e-14, np.sign(dev) * np.inf, 0.0))
        means[start:stop], tstar[start:stop] = m, t
    t_obs = mean / se
    eps = 1e-12 * max(1.0, abs(t_obs))
    p_greater = (np.count_nonzero(tstar >= t_obs - eps) + 1) / (n_resamples + 1)  # H1: mean > 0
    p_less = (np.count_nonzero(tstar <= t_obs + eps) + 1) / (n_resamples + 1)
    p_two = (np.count_nonzero(np.abs(tstar) >= abs(t_obs) - eps) + 1) / (n_resamples + 1)
    p = {"greater": p_greater, "less": p_less, "two-sided": p_two}[alternative]

    def ci(level: float) -> tuple[float, float]:
        if alternative == "two-sided":
            q_lo, q_hi = np.quantile(tstar, [0.5 - level / 2, 0.5 + level / 2])
            return float(mean - q_hi * se), float(mean - q_lo * se)
        if alternative == "greater":
            return float(mean - np.quantile(tstar, level) * se), np.inf
        return -np.inf, float(mean - np.quantile(tstar, 1 - level) * se)

    return _mean_difference_result(
        f"Paired bootstrap-t test of the mean difference ({n_resamples} resamples)", d, float(p), alternative,
        handling="items resampled with replacement; pairs kept together",
        details={"se": float(means.std(ddof=1)), "t": float(t_obs), "n_resamples": int(n_resamples)},
        confidence_level=confidence_level, ci=ci,
    )
