"""The one CR1 small-sample factor and the t(G - 1) reference of every cluster-robust interval in evalkit.

A cluster-robust ("sandwich over clusters") variance with ``G`` clusters is biased down by about
``(G - 1) / G``, and its ratio to the true variance is roughly chi-square with ``G - 1`` degrees of
freedom, so evalkit multiplies the cluster meat by Stata's CR1 factor (statsmodels' ``cov_type="cluster"``
with its default ``use_correction=True``)::

    G / (G - 1) * (N - 1) / (N - K)

(``N`` observations, as total frequency weight; ``K`` estimated parameters: 1 for a mean, so the factor is
``G / (G - 1)``) and reads the interval off ``t(G - 1)``, never the normal (Cameron & Miller 2015, section
VI; Miller 2024). With 10 clusters the normal quantile under-covers a 95 % interval by 3 points
(``scripts/coverage.py``); fewer than :data:`MIN_CLUSTERS` clusters are warned of
(:func:`cluster_warning`). A leaf module: numpy and ``scipy.special`` only.
"""

from __future__ import annotations

import math

__all__ = ["cr1_factor", "cluster_df", "t_quantile", "t_two_sided_pvalue", "t_label", "MIN_CLUSTERS",
           "SmallClusterWarning", "cluster_warning"]

#: Fewer clusters than this: cluster-robust and cluster-bootstrap intervals are rough.
MIN_CLUSTERS = 30


class SmallClusterWarning(UserWarning):
    """A cluster-robust SE or cluster bootstrap rests on few clusters."""


def cluster_warning(n_clusters: int, what: str, *, emit: bool = True) -> str | None:
    """A warning text when ``n_clusters < 30`` (also issued as a :class:`SmallClusterWarning` with ``emit``)."""
    if n_clusters >= MIN_CLUSTERS:
        return None
    msg = (f"{what} rests on only {n_clusters} clusters (fewer than about {MIN_CLUSTERS}): cluster-robust and "
           "cluster-bootstrap intervals are then too narrow and unstable; read them as rough.")
    if emit:
        import warnings

        warnings.warn(msg, SmallClusterWarning, stacklevel=2)
    return msg


def cr1_factor(n_clusters: int, n_obs: float, n_params: int) -> float:
    """``G / (G - 1) * (N - 1) / (N - K)``: the CR1 factor of a cluster-robust meat.

    Raises
    ------
    ValueError
        With fewer than two clusters, or no more observations than parameters.
    """
    g = int(n_clusters)
    if g < 2:
        raise ValueError(f"A cluster-robust covariance needs at least two clusters; got {g}.")
    if not n_obs > n_params:
        raise ValueError(f"The CR1 factor needs more observations ({n_obs:g}) than parameters ({n_params}).")
    return g / (g - 1.0) * (n_obs - 1.0) / (n_obs - n_params)


def cluster_df(n_clusters: int | None) -> float:
    """Degrees of freedom of a cluster-robust t interval: ``G - 1`` (infinite without clusters)."""
    return math.inf if n_clusters is None else float(int(n_clusters) - 1)


def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (the normal's for ``df = inf``)."""
    from scipy.special import ndtri, stdtrit

    if math.isinf(df):
        return float(ndtri(q))
    return float(stdtrit(df, q))


def t_two_sided_pvalue(stat: float, df: float) -> float:
    """``2 P(T > |stat|)`` for ``T ~ t(df)`` (the normal for ``df = inf``)."""
    from scipy.special import ndtr, stdtr

    if math.isinf(df):
        return float(2.0 * ndtr(-abs(stat)))
    return float(2.0 * stdtr(df, -abs(stat)))


def t_label(df: float) -> str:
    """``"t(12)"`` for a finite ``df``, ``"normal"`` for an infinite one (how an interval names its quantile)."""
    return "normal" if math.isinf(df) else f"t({df:g})"
