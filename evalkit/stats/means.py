"""Means with their standard errors: CLT, clustered (CR1), and paired differences.

Conventions follow Miller (2024), "Adding Error Bars to Evals": the standard error of a
mean score is sd / sqrt(n); when items share a cluster (several questions per passage,
several trials per task) the cluster-robust SE is used; two models compared on the same
items are compared through their paired differences, which removes the shared item
difficulty (the gain is visible in the correlation between the two models' scores).

Intervals use t quantiles (df = n - 1, or G - 1 with G clusters), never 1.96.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from evalkit._cluster import cr1_factor
from evalkit.stats._result import Estimate
from evalkit.stats._validate import as_pairs, as_sample, check_confidence_level
from evalkit.stats.ttest import t_interval

__all__ = ["mean_se", "paired_difference"]


def _cluster_codes(clusters: ArrayLike, n: int) -> np.ndarray:
    c = pd.Series(np.asarray(clusters, dtype=object).reshape(-1))
    if c.size != n:
        raise ValueError(f"clusters must have one label per observation: got {c.size} labels for {n} values.")
    if c.isna().any():
        raise ValueError(f"clusters has {int(c.isna().sum())} missing labels; every observation needs a cluster.")
    return pd.factorize(c)[0]


def _se(values: np.ndarray, codes: np.ndarray | None) -> tuple[float, float, int | None]:
    """(se, df, n_clusters): CLT SE with n - 1 df, or CR1 cluster-robust SE with G - 1 df."""
    n = values.size
    if codes is None:
        return float(values.std(ddof=1) / np.sqrt(n)), float(n - 1), None
    g = int(codes.max()) + 1
    if g < 2:
        raise ValueError("A clustered standard error needs at least 2 clusters; all observations share one.")
    resid_sums = np.bincount(codes, weights=values - values.mean(), minlength=g)
    # CR1: G/(G-1) * (N-1)/(N-K) with K = 1 regressor (the constant) -> G/(G-1).
    var = cr1_factor(g, n, 1) * float(np.sum(resid_sums**2)) / n**2
    return float(np.sqrt(var)), float(g - 1), g


def mean_se(
    x: ArrayLike, *, clusters: ArrayLike | None = None, confidence_level: float = 0.95
) -> Estimate:
    """Mean with its standard error and t interval; cluster-robust (CR1) when ``clusters`` is given.

    Parameters
    ----------
    x : array_like
        Scores, at least two.
    clusters : array_like, optional
        Cluster label per score (e.g. the task of each trial). The SE then equals
        statsmodels' ``OLS(x, ones).fit(cov_type="cluster", cov_kwds={"groups": clusters})``
        (CR1, the G/(G-1) correction), and the interval uses t with G - 1 df.
    confidence_level : float

    Returns
    -------
    Estimate
        ``details`` holds ``sd`` and, when clustered, ``n_clusters`` and the design effect
        (clustered variance / CLT variance).
    """
    check_confidence_level(confidence_level)
    v = as_sample(x, name="x")
    codes = None if clusters is None else _cluster_codes(clusters, v.size)
    se, df, g = _se(v, codes)
    if se == 0.0 and codes is None:
        raise ValueError(f"All {v.size} values equal {float(v[0])!r} (zero variance): the standard error is 0 "
                         "and a t interval is meaningless; report the constant instead.")
    details: dict[str, float | int] = {"sd": float(v.std(ddof=1))}
    if g is not None:
        clt = v.std(ddof=1) / np.sqrt(v.size)
        details.update(n_clusters=g, design_effect=float((se / clt) ** 2) if clt > 0 else float("nan"))
    what = "mean with " + ("cluster-robust (CR1) standard error" if g else "CLT standard error")
    return _t_estimate(what, float(v.mean()), se, df, g, v.size, confidence_level, details)


def _t_estimate(
    what: str, mean: float, se: float, df: float, g: int | None, n: int, confidence_level: float,
    details: dict[str, float | int],
) -> Estimate:
    """An :class:`Estimate` with a t(df) interval ``mean +- q se``."""
    return Estimate(
        method=f"{what}, t({df:g}) interval",
        estimate=mean,
        se=se,
        n=int(n),
        df=df,
        handling=f"{g} clusters" if g else "",
        confidence_level=confidence_level,
        details=details,
        _ci=lambda level: t_interval(mean, se, df, level),
    )


def paired_difference(
    x: ArrayLike, y: ArrayLike, *, clusters: ArrayLike | None = None, confidence_level: float = 0.95
) -> Estimate:
    """Mean of ``x - y`` over shared items, its SE and interval, and the correlation of x and y.

    Parameters
    ----------
    x, y : array_like
        Scores of two systems on the same items, aligned (see
        :func:`evalkit.stats.paired_scores` to align a long table and report unmatched items).
    clusters : array_like, optional
        Cluster label per item for a CR1 SE of the difference.

    Returns
    -------
    Estimate
        ``details``: ``mean_x``, ``mean_y``, ``correlation`` (Pearson), ``se_unpaired``
        (sqrt(se_x^2 + se_y^2), what ignoring the pairing would give) and
        ``variance_reduction`` = 1 - se^2 / se_unpaired^2.
    """
    check_confidence_level(confidence_level)
    d = as_pairs(x, y)
    a = np.asarray(x, dtype=float).reshape(-1)
    b = np.asarray(y, dtype=float).reshape(-1)
    codes = None if clusters is None else _cluster_codes(clusters, d.size)
    se, df, g = _se(d, codes)
    if se == 0.0:
        raise ValueError(f"All {d.size} paired differences equal {float(d[0])!r} (zero variance); "
                         "the standard error of the difference is 0.")
    se_unpaired = float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
    corr = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")
    details = {
        "mean_x": float(a.mean()), "mean_y": float(b.mean()), "correlation": corr, "se_unpaired": se_unpaired,
        "variance_reduction": float(1 - se**2 / se_unpaired**2) if se_unpaired > 0 else float("nan"),
    }
    what = "paired mean difference with " + ("CR1 clustered" if g else "CLT") + " standard error"
    return _t_estimate(what, float(d.mean()), se, df, g, d.size, confidence_level, details)
