"""Model-based (inverse Hessian) and robust (sandwich) covariances of Bradley–Terry strengths.

Both are for the centred parametrisation (``sum(theta) == 0``); see :mod:`evalkit.ratings.elo`
for intervals of differences with an anchor model.

The sandwich is ``H^+ M H^+`` with ``H`` the observed information and ``M`` the sum of
outer products of score vectors: per comparison (Huber–White, "HC0"), or per cluster
(Liang–Zeger cluster-robust: all comparisons on the same prompt / by the same judge
summed first, times the CR1 factor ``G / (G - 1) * (N - 1) / (N - K)`` by default) when ``cluster``
is given; intervals built on it use ``t(G - 1)`` (:mod:`evalkit._cluster`).

Weights are frequency weights everywhere: a comparison of weight ``w`` counts as ``w``
comparisons, in the Hessian, in ``M`` (``w u u'``, not ``(w u)(w u)'``) and in the
bootstraps. Without a frame, ``M`` is computed from the aggregated pair counts (exact for
0 / 0.5 / 1 outcomes; counts of continuous outcomes raise, since their squares are not in the
counts); with the frame, or its cells (:class:`~evalkit.io.counts.ComparisonCounts`), it is exact
for continuous outcomes too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from evalkit._special import expit
from evalkit.ratings._linalg import dense, laplacian, pair_gradient, pinv_centred, sparse_laplacian
from evalkit.ratings.counts import encode_players, split_outcomes

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.ratings.bt import BTFit

__all__ = ["covariance", "meat", "cluster_factor", "n_params"]

_KINDS = ("sandwich", "hessian")
_CORRECTIONS = ("CR1", "CR0")


def _class_scores(
    fit: BTFit, d: np.ndarray
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...] | None]:
    """Scores of one i-win, one j-win and one tie, in ``d = theta_i - theta_j`` (and ``log nu``)."""
    if fit.ties == "davidson":
        from evalkit.ratings.davidson import davidson_probabilities

        assert fit.tie_param is not None  # a Davidson fit always has its tie parameter
        a, b, t = davidson_probabilities(d, float(np.log(fit.tie_param)))
        shift = 0.5 * (a - b)
        return (0.5 - shift, -0.5 - shift, -shift), (-t, -t, 1.0 - t)
    p = expit(d)
    tie = 0.5 - p if fit.ties == "half" else np.zeros_like(p)
    return (1.0 - p, -p, tie), None


def _assemble(n: int, i, j, w_dd, w_dl=None, w_ll=None, *, sparse: bool = False) -> np.ndarray:
    """Pair-level second moments into the ``(n [+1]) x (n [+1])`` meat matrix."""
    if w_dl is None:
        return sparse_laplacian(i, j, w_dd, n) if sparse else laplacian(i, j, w_dd, n)
    cross = pair_gradient(i, j, w_dl, n)
    if sparse:  # the Laplacian bordered by log(nu)'s row and column, CSR
        from scipy.sparse import bmat, csr_matrix

        col = csr_matrix(cross[:, None])
        return bmat([[sparse_laplacian(i, j, w_dd, n), col], [col.T, csr_matrix([[w_ll]])]], format="csr")
    out = np.zeros((n + 1, n + 1))
    out[:n, :n] = laplacian(i, j, w_dd, n)
    out[:n, n] = cross
    out[n, :n] = cross
    out[n, n] = w_ll
    return out


def meat(
    fit: BTFit, frame: pd.DataFrame | None = None, *, cluster: str | None = None,
    sparse: bool = False,
) -> np.ndarray:
    """``M``: sum of outer products of score vectors at the estimate.

    Parameters
    ----------
    fit : BTFit
    frame : pandas.DataFrame, optional
        The comparisons the fit was made on (canonical frame): scores per row, exact for
        weights and continuous outcomes. Default: from ``fit.counts``.
    cluster : str, optional
        Column of ``frame``: scores are summed within each cluster first.
    sparse : bool, default False
        Return a sparse CSR matrix, for many players.
    """
    n = len(fit.theta)
    if frame is None:
        if cluster is not None:
            raise ValueError("A cluster-robust sandwich needs the comparisons frame (frame=...).")
        c = fit.counts
        if getattr(c, "continuous", False):
            raise ValueError(
                "These counts come from continuous outcomes (scores between 0 and 1 other than 0.5): the pair "
                "counts hold the sum of the outcomes but not of their squares, so a sandwich from them alone "
                "would be wrong (5.9 Elo off in SE on AlpacaEval-style preferences). Pass the comparisons or "
                "their cells: fit.covariance('sandwich', frame=frame) or leaderboard(frame), which does so."
            )
        g_d, g_l = _class_scores(fit, fit.theta[c.i] - fit.theta[c.j])
        cnt = (c.wins_i, c.wins_j, c.ties)
        w_dd = sum(m * g * g for m, g in zip(cnt, g_d, strict=True))
        if g_l is None:
            return _assemble(n, c.i, c.j, w_dd, sparse=sparse)
        w_dl = sum(m * g * h for m, g, h in zip(cnt, g_d, g_l, strict=True))
        w_ll = float(sum(np.sum(m * h * h) for m, h in zip(cnt, g_l, strict=True)))
        return _assemble(n, c.i, c.j, w_dd, w_dl, w_ll, sparse=sparse)

    if cluster is not None and sql_clustered(frame):
        return _sql_meat(fit, frame, sparse=sparse)
    players, a, b = encode_players(frame["player_a"].to_numpy(), frame["player_b"].to_numpy())
    if players != fit.players:
        raise ValueError(
            "'frame' has other players than the fit; pass the frame the fit was made on."
        )
    weight = frame["weight"].to_numpy(float)
    # per-comparison (unit-weight) class shares; a row of weight w is w such comparisons
    i, j, u_d, u_l = _unit_scores(fit, a, b, frame["outcome"].to_numpy(float))
    if cluster is None:  # frequency weights: w copies of the score u, sum of outer products w u u'
        if u_l is None:
            return _assemble(n, i, j, weight * u_d * u_d, sparse=sparse)
        return _assemble(n, i, j, weight * u_d * u_d, weight * u_d * u_l,
                         float(np.sum(weight * u_l * u_l)), sparse=sparse)
    s_d = weight * u_d
    s_l = None if u_l is None else weight * u_l
    if cluster not in frame.columns or frame[cluster].isna().any():
        raise ValueError(
            f"The cluster column {cluster!r} must be in the frame and have no missing values; "
            f"the frame has {list(frame.columns)}."
        )
    import pandas as pd
    from scipy.sparse import coo_matrix

    codes = pd.factorize(frame[cluster].astype(str))[0]
    k = n if s_l is None else n + 1
    rows = np.concatenate([codes, codes] + ([] if s_l is None else [codes]))
    cols = np.concatenate([i, j] + ([] if s_l is None else [np.full(len(i), n)]))
    vals = np.concatenate([s_d, -s_d] + ([] if s_l is None else [s_l]))
    scores = coo_matrix((vals, (rows, cols)), shape=(int(codes.max()) + 1, k)).tocsr()
    product = (scores.T @ scores).tocsr()
    return product if sparse else np.asarray(product.todense())


def sql_clustered(frame: object) -> bool:
    """Whether ``frame`` is counts collapsed over their cluster whose cluster scores DuckDB computes
    (:class:`evalkit.engine._clustered.SqlClusterCounts`, still collapsed)."""
    return bool(getattr(frame, "collapsed", False)) and hasattr(frame, "cluster_meat")


def _unit_scores(fit: BTFit, a: np.ndarray, b: np.ndarray, outcome: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(i, j, u_d, u_l)``: each comparison as the pair ``i < j`` and the score of one comparison of
    unit weight in ``d = theta_i - theta_j`` (and Davidson's ``log nu``)."""
    win, loss, tie = split_outcomes(outcome, np.ones(len(outcome)))
    swap = a > b
    i, j = np.where(swap, b, a), np.where(swap, a, b)
    wi, wj = np.where(swap, loss, win), np.where(swap, win, loss)
    g_d, g_l = _class_scores(fit, fit.theta[i] - fit.theta[j])
    u_d = wi * g_d[0] + wj * g_d[1] + tie * g_d[2]
    u_l = None if g_l is None else wi * g_l[0] + wj * g_l[1] + tie * g_l[2]
    return i, j, u_d, u_l


def _sql_meat(fit: BTFit, counts, *, sparse: bool) -> np.ndarray:
    """The cluster-robust meat ``S^T S`` with ``S`` (clusters x players, sparse) summed by DuckDB
    from the unit scores of the collapsed cells (:mod:`evalkit.engine._clustered`)."""
    players, a, b = counts.codes()
    if players != fit.players:
        raise ValueError("'frame' has other players than the fit; pass the counts the fit was made on.")
    n = len(fit.theta)
    i, _, u_d, u_l = _unit_scores(fit, a, b, counts.column("outcome").astype(float))
    # u_d is the score of the pair's lower code i: player_a's when a is i, else minus it
    u_a = np.where(a == i, u_d, -u_d)
    product = counts.cluster_meat(u_a, n if u_l is None else n + 1, u_l)
    return product if sparse else np.asarray(product.todense())


def cluster_factor(frame: pd.DataFrame, cluster: str, correction: str, *, n_params: int = 1) -> tuple[float, int]:
    """The small-sample factor of a cluster-robust meat and the number of clusters ``G``.

    ``"CR1"``: ``G / (G - 1) * (N - 1) / (N - K)`` (:func:`evalkit._cluster.cr1_factor`, Stata's and
    statsmodels' ``cov_type="cluster"`` factor, the one factor every cluster-robust interval in evalkit
    uses; ``N`` the total frequency weight of ``frame``, ``K = n_params``); ``"CR0"``: 1.
    """
    from evalkit._cluster import cr1_factor

    if correction not in _CORRECTIONS:
        raise ValueError(f"'cluster_correction' must be one of {_CORRECTIONS}; got {correction!r}.")
    sql = sql_clustered(frame)
    counts: Any = frame  # SqlClusterCounts (engine): G and the total weight without the per-cluster cells
    g = int(counts.n_clusters) if sql else int(frame[cluster].nunique())
    if correction == "CR0":
        return 1.0, g
    if g < 2:
        raise ValueError(
            f"A cluster-robust covariance needs at least two clusters; the column {cluster!r} has {g}."
        )
    if sql:
        return cr1_factor(g, float(counts.total_weight), n_params), g
    weight = frame["weight"].to_numpy(float) if "weight" in frame.columns else np.ones(len(frame))
    return cr1_factor(g, float(weight.sum()), n_params), g


def n_params(fit: BTFit) -> int:
    """Free parameters of a Bradley–Terry fit: ``n - 1`` strengths (centred), plus Davidson's tie parameter."""
    return len(fit.theta) - 1 + (fit.ties == "davidson")


def covariance(
    fit: BTFit,
    *,
    kind: Literal["sandwich", "hessian"] = "sandwich",
    ridge: float = 0.0,
    frame: pd.DataFrame | None = None,
    cluster: str | None = None,
    cluster_correction: str = "CR1",
) -> np.ndarray:
    """Covariance of the centred strengths ``theta`` of a fit (``n x n``).

    Parameters
    ----------
    fit : BTFit
    kind : {"sandwich", "hessian"}, default "sandwich"
        Robust ``H^+ M H^+`` or model-based ``H^+`` (``H`` the observed information).
    ridge : float, default 0.0
        Added to the diagonal of ``H`` before inverting (then a plain inverse is used).
        0 gives the exact covariance. arena-rank 0.1.1 uses ``ridge = 1e-5 * n_comparisons``
        "for numerical stability", which narrows its sandwich intervals by ~0.01 Elo on
        100 comparisons; pass the same value to reproduce its numbers.
    frame : pandas.DataFrame, optional
        The comparisons of the fit, for an exact sandwich with weights / continuous outcomes.
    cluster : str, optional
        Column of ``frame`` for a cluster-robust sandwich (comparisons in the same cluster
        may be dependent; clusters independent).
    cluster_correction : {"CR1", "CR0"}, default "CR1"
        Small-sample factor of the cluster-robust meat: ``G / (G - 1) * (N - 1) / (N - K)`` with
        ``G`` clusters (CR1), or none (CR0). See :func:`cluster_factor`.

    Returns
    -------
    numpy.ndarray
        For Davidson fits the ``log(nu)`` coordinate is profiled in (the matrix is the
        ``theta`` block of the joint covariance).
    """
    if kind not in _KINDS:
        raise ValueError(f"'kind' must be one of {_KINDS}; got {kind!r}.")
    if not np.isfinite(ridge) or ridge < 0:
        raise ValueError(f"'ridge' must be a finite number >= 0; got {ridge!r}.")
    if kind == "hessian" and cluster is not None:
        raise ValueError("'cluster' applies to kind='sandwich' only.")
    n = len(fit.theta)
    if ridge:
        info = dense(fit.information).copy()
        info[np.diag_indices(n)] += ridge
        h_inv = np.linalg.solve(info, np.eye(len(info)))
    else:
        h_inv = pinv_centred(dense(fit.information), n, singular=fit.singular)
    if kind == "hessian":
        cov = h_inv
    else:
        mid = meat(fit, frame, cluster=cluster)
        if cluster is not None:
            if frame is None:
                raise ValueError("A cluster-robust covariance needs the comparisons: pass frame=...")
            mid = mid * cluster_factor(frame, cluster, cluster_correction, n_params=n_params(fit))[0]
        cov = h_inv @ mid @ h_inv
    cov = cov[:n, :n]
    # Ratings are only identified up to a common shift: report the covariance of the centred
    # strengths. (With l2 > 0 or a ridge the inverse is regular and would otherwise carry a
    # variance of ~1/(n * l2) along the shift direction that the data say nothing about.)
    centre = np.eye(n) - 1.0 / n
    cov = centre @ cov @ centre
    return 0.5 * (cov + cov.T)
