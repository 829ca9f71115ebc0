"""Elo scale for Bradley–Terry strengths: centred or anchored, with intervals that say what they are for.

``elo = base + 400 / ln(10) * theta``. *Centred*: the mean rating is ``base`` and each
interval is for that model's rating relative to the field average. *Anchored*
(``anchor="model"``): the anchor model is fixed at ``base`` and each interval is for the
model's **difference with the anchor**, whose variance is
``Var(theta_k) + Var(theta_a) - 2 Cov(theta_k, theta_a)``; the anchor itself has no
interval. Shifting the centred intervals instead would silently drop the anchor's own
uncertainty from everyone else's (a common mistake).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from evalkit._special import norm_ppf
from evalkit.ratings._linalg import is_sparse

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.ratings.bt import BTFit

__all__ = ["ELO_SCALE", "theta_to_elo", "elo_intervals", "elo_table", "parse_anchor", "interval_label",
           "interval_df"]

#: Elo points per unit of natural-log strength, 400 / ln(10).
ELO_SCALE: float = 400.0 / np.log(10.0)


def _anchor_index(players: tuple[str, ...], anchor: str) -> int:
    try:
        return players.index(str(anchor))
    except ValueError:
        shown = list(players[:10]) + (["..."] if len(players) > 10 else [])
        raise ValueError(
            f"The anchor model {anchor!r} is not among the rated players {shown}."
        ) from None


def parse_anchor(text: str) -> tuple[str, float]:
    """Parse ``"MODEL=1000"`` (the CLI's ``--anchor``) into ``("MODEL", 1000.0)``."""
    model, sep, value = str(text).rpartition("=")
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not sep or not model or not np.isfinite(number):
        raise ValueError(
            f"'--anchor' must look like MODEL=1000 (a model name, '=', a number); got {text!r}."
        )
    return model, number


def interval_label(anchor: str | None) -> str:
    """What an interval is for: ``"centred"`` or ``"difference with <anchor>"``."""
    return "centred" if anchor is None else f"difference with {anchor}"


def theta_to_elo(
    theta: np.ndarray, players: tuple[str, ...], *, base: float = 1000.0, anchor: str | None = None
) -> np.ndarray:
    """Elo ratings ``base + 400/ln(10) * (theta - reference)``.

    ``theta`` may be ``(n,)`` or ``(B, n)`` (bootstrap replicates); the reference is each
    row's mean (centred) or the anchor's ``theta`` (anchored).
    """
    theta = np.asarray(theta, dtype=float)
    if anchor is None:
        ref = theta.mean(axis=-1, keepdims=True)
    else:
        k = _anchor_index(players, anchor)
        ref = theta[..., k : k + 1]
    return base + ELO_SCALE * (theta - ref)


def _large(fit: BTFit, se: str, frame, cluster, correction, anchor: int | None) -> np.ndarray:
    """Variances for many players (sparse information): see :mod:`evalkit.ratings._large`."""
    from evalkit.ratings._large import large_variances
    from evalkit.ratings.uncertainty import cluster_factor, meat, n_params

    if se not in ("sandwich", "hessian"):
        raise ValueError(f"'se' must be 'sandwich' or 'hessian'; got {se!r}.")
    if se == "hessian":
        return large_variances(fit, anchor=anchor)
    mid = meat(fit, frame, cluster=cluster, sparse=True)
    if cluster is not None:
        mid = mid * cluster_factor(frame, cluster, correction, n_params=n_params(fit))[0]
    return large_variances(fit, mid, anchor=anchor)


def uses_sparse_intervals(fit: BTFit) -> bool:
    """Whether :func:`elo_table` takes the sparse large-problem path (no dense covariance)."""
    return bool(is_sparse(fit.information) and fit.l2 == 0)


def variance_note(fit: BTFit) -> str | None:
    """How the Wald variances of a fit are estimated when not exactly (very many players), else None."""
    from evalkit.ratings._iterative import ITERATIVE_MIN_PLAYERS, TARGET_REL_ERROR

    if not uses_sparse_intervals(fit) or len(fit.theta) < ITERATIVE_MIN_PLAYERS:
        return None
    return (f"variances estimated for {len(fit.theta):,} players by Hutchinson's estimator with a "
            f"Neumann-series control variate (block conjugate gradients, no n x n matrix; Monte Carlo "
            f"standard error <= {TARGET_REL_ERROR:.1e} of each variance, {TARGET_REL_ERROR / 2:.1e} of each "
            "interval's width)")


def elo_intervals(
    fit: BTFit,
    *,
    base: float = 1000.0,
    anchor: str | None = None,
    se: Literal["sandwich", "hessian"] = "sandwich",
    level: float = 0.95,
    frame: pd.DataFrame | None = None,
    cluster: str | None = None,
    cluster_correction: str = "CR1",
    cov: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The columns of :func:`elo_table` as numpy arrays in fit order: ``theta, elo, se,
    ci_low, ci_high`` (no pandas; same parameters). A cluster-robust interval (``cluster``) takes
    its quantile from ``t(G - 1)``, the others from the normal."""
    if not 0 < level < 1:
        raise ValueError(f"'level' must be in (0, 1); got {level!r}.")
    if cov is None and uses_sparse_intervals(fit):
        var = _large(fit, se, frame, cluster, cluster_correction,
                     None if anchor is None else _anchor_index(fit.players, anchor))
    else:
        if cov is None:
            cov = fit.covariance(se, frame=frame, cluster=cluster, cluster_correction=cluster_correction)
        var = np.diag(cov)
    if anchor is not None and cov is not None:
        k = _anchor_index(fit.players, anchor)
        var = np.diag(cov) + cov[k, k] - 2.0 * cov[:, k]
        var[k] = 0.0
    sd = ELO_SCALE * np.sqrt(np.clip(var, 0.0, None))
    elo = theta_to_elo(fit.theta, fit.players, base=base, anchor=anchor)
    df = interval_df(frame, cluster)
    if np.isinf(df):
        q = norm_ppf(0.5 + level / 2)
    else:
        from evalkit._cluster import t_quantile

        q = t_quantile(0.5 + level / 2, df)
    return {"theta": fit.theta, "elo": elo, "se": sd, "ci_low": elo - q * sd, "ci_high": elo + q * sd}


def interval_df(frame: pd.DataFrame | None, cluster: str | None) -> float:
    """Degrees of freedom of a Wald interval: ``G - 1`` for a cluster-robust one (``G`` clusters of
    ``cluster`` in ``frame``), infinite (the normal quantile) otherwise."""
    if cluster is None or frame is None:
        return float("inf")
    from evalkit.ratings.uncertainty import sql_clustered

    if sql_clustered(frame):  # counts whose cluster scores DuckDB computes know G
        counts: Any = frame
        return float(int(counts.n_clusters) - 1)
    return float(frame[cluster].nunique() - 1)


def elo_table(
    fit: BTFit,
    *,
    base: float = 1000.0,
    anchor: str | None = None,
    se: Literal["sandwich", "hessian"] = "sandwich",
    level: float = 0.95,
    frame: pd.DataFrame | None = None,
    cluster: str | None = None,
    cluster_correction: str = "CR1",
    cov: np.ndarray | None = None,
) -> pd.DataFrame:
    """Elo ratings of a fit with Wald intervals (normal quantile; ``t(G - 1)`` when cluster-robust).

    Parameters
    ----------
    fit : BTFit
    base : float, default 1000
        Mean rating (centred) or the anchor's rating (anchored).
    anchor : str, optional
        Model fixed at ``base``; intervals are then for differences with it.
    se : {"sandwich", "hessian"}, default "sandwich"
        Robust or model-based standard errors (:meth:`BTFit.covariance`).
    level : float, default 0.95
    frame, cluster : optional
        The fit's comparisons frame (exact sandwich for weights / continuous outcomes)
        and a cluster column for the cluster-robust sandwich; see :meth:`BTFit.covariance`.
    cluster_correction : {"CR1", "CR0"}, default "CR1"
        Small-sample factor of the cluster-robust sandwich (``G / (G - 1)`` or none).
    cov : numpy.ndarray, optional
        The fit's centred covariance of this ``se`` kind, when the caller already has it
        (it is then not computed again).

    Returns
    -------
    pandas.DataFrame
        One row per player in fit order: ``model, theta, elo, se, ci_low, ci_high,
        interval`` (``se`` in Elo points; ``interval`` says ``"centred"`` or
        ``"difference with <anchor>"``).
    """
    import pandas as pd

    cols = elo_intervals(fit, base=base, anchor=anchor, se=se, level=level, frame=frame, cluster=cluster,
                         cluster_correction=cluster_correction, cov=cov)
    out = pd.DataFrame({"model": list(fit.players), **cols, "interval": [interval_label(anchor)] * len(fit.theta)})
    note = variance_note(fit) if cov is None else None
    if note:
        out.attrs["variances"] = note
    return out
