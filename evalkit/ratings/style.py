"""Covariate- (style-) controlled Bradley–Terry: LMArena's style control, arena-rank's ContextualBradleyTerry.

Model, per comparison ``r`` of ``player_a`` against ``player_b`` with covariates ``z_r``
(differences a - b, e.g. of answer length)::

    logit P(a beats b) = theta_a - theta_b + z_r @ beta

Ties count as half a win (the outcome 0.5 enters the binomial likelihood as a fractional
response, as in statsmodels' ``Logit`` / ``GLM(Binomial)``). ``weight`` is a frequency
weight: a row of weight ``w`` counts as ``w`` identical rows, in the fit and in the
sandwich alike. Intervals come from the sandwich ``H^-1 M H^-1`` (HC0: ``M`` sums the
outer products of per-row scores, each row counted ``w`` times), cluster-robust when
``cluster`` is given (scores summed per cluster; the CR1 factor ``G / (G - 1) * (N - 1) / (N - K)``
by default, :mod:`evalkit._cluster`, and then ``t(G - 1)`` quantiles and p-values), or from the
model-based ``H^-1``.

The solver is Newton's method on the concave log-likelihood with a full-rank reference
coding (the first player's strength fixed at 0); results are reported for centred
strengths (mean 0) and the covariate coefficients, with the covariance mapped to that
parametrisation. :mod:`evalkit.ratings.position` is the special case ``z_r = 1`` (the
answer shown first / on the left), i.e. home advantage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit, log_expit

from evalkit._cluster import cluster_df, t_label, t_quantile, t_two_sided_pvalue
from evalkit.io.schema import validate_comparisons
from evalkit.ratings.counts import aggregate, encode_players
from evalkit.ratings.elo import ELO_SCALE
from evalkit.ratings.existence import check_existence

__all__ = ["LogitFit", "StyleFit", "fit_logit", "fit_style_bt", "length_feature", "design"]

CovKind = Literal["sandwich", "hessian"]
#: A design or score matrix: a numpy array, or a scipy.sparse matrix (scipy publishes no types).
Matrix = Any


@dataclass(frozen=True)
class LogitFit:
    """A (frequency-weighted, fractional-response) logistic regression fit.

    Attributes
    ----------
    coef : numpy.ndarray
        Coefficients, one per design column.
    information : numpy.ndarray
        ``X' diag(w p (1 - p)) X`` at the estimate.
    scores : scipy.sparse matrix or numpy.ndarray
        Per-row score vectors ``(y - p) x`` (unweighted), ``(rows, columns)``.
    weight : numpy.ndarray
        Frequency weights of the rows.
    loglik : float
    n_iter : int
    converged : bool
    """

    coef: np.ndarray
    information: np.ndarray = field(repr=False)
    scores: Matrix = field(repr=False)
    weight: np.ndarray = field(repr=False)
    loglik: float
    n_iter: int
    converged: bool

    def covariance(
        self, kind: CovKind = "sandwich", *, groups: np.ndarray | None = None, cr1: bool = False
    ) -> np.ndarray:
        """``H^-1`` (``"hessian"``) or ``H^-1 M H^-1`` (``"sandwich"``; per cluster with ``groups``).

        ``cr1`` multiplies the cluster meat by ``G / (G - 1) * (N - 1) / (N - K)`` (Stata's CR1, as
        statsmodels' ``cov_type="cluster"`` with its default ``use_correction=True``; ``N`` the total
        frequency weight, ``K`` the number of coefficients). Without it: CR0.
        """
        h_inv = np.linalg.inv(self.information)
        if kind == "hessian":
            return h_inv
        s = self.scores
        if groups is None:
            w = self.weight
            meat = s.T @ (s.multiply(w[:, None]) if sparse.issparse(s) else s * w[:, None])
        else:
            codes, uniq = pd.factorize(pd.Series(groups))
            agg = sparse.coo_matrix(
                (self.weight, (codes, np.arange(len(codes)))), shape=(len(uniq), len(codes))
            ).tocsr() @ s
            meat = agg.T @ agg
            if cr1:
                from evalkit._cluster import cr1_factor

                meat = meat * cr1_factor(len(uniq), float(self.weight.sum()), len(self.coef))
        meat = np.asarray(meat.todense() if sparse.issparse(meat) else meat)
        return h_inv @ meat @ h_inv


def _weighted_gram(x: Matrix, v: np.ndarray) -> np.ndarray:
    """``X' diag(v) X`` as a dense array."""
    if sparse.issparse(x):
        return np.asarray((x.T @ x.multiply(v[:, None])).todense())
    return x.T @ (x * v[:, None])


def _loglik(eta: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(w * (y * log_expit(eta) + (1.0 - y) * log_expit(-eta))))


def fit_logit(
    x: np.ndarray | sparse.spmatrix,
    y: np.ndarray,
    weight: np.ndarray | None = None,
    *,
    offset: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> LogitFit:
    """Damped Newton for a logistic regression without intercept (add a column of ones for one).

    Parameters
    ----------
    x : (rows, k) array or sparse matrix
        Full-rank design.
    y : (rows,) array in [0, 1]
        Responses (fractions allowed: quasi-binomial, as statsmodels ``Logit``).
    weight : (rows,) array, optional
        Frequency weights (default 1).
    offset : (rows,) array, optional
        Fixed term added to the linear predictor.
    tol, max_iter
        Converged when the largest Newton step is below ``tol``.
    """
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if weight is None else np.asarray(weight, dtype=float)
    off = np.zeros_like(y) if offset is None else np.asarray(offset, dtype=float)
    xs: Matrix = sparse.csr_matrix(x) if sparse.issparse(x) else np.asarray(x, dtype=float)
    beta = np.zeros(xs.shape[1])
    eta = off + xs @ beta
    obj = _loglik(eta, y, w)
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007
        p = expit(eta)
        grad = xs.T @ (w * (y - p))
        info = _weighted_gram(xs, w * p * (1 - p))
        try:
            step = np.linalg.solve(info, np.asarray(grad).ravel())
        except np.linalg.LinAlgError:  # information singular: the estimate runs off to infinity
            break
        for _ in range(30):
            new_eta = off + xs @ (beta + step)
            new_obj = _loglik(new_eta, y, w)
            if new_obj >= obj - 1e-12 * abs(obj):
                break
            step = step / 2
        beta, eta, obj = beta + step, new_eta, new_obj
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    p = expit(eta)
    info = _weighted_gram(xs, w * p * (1 - p))
    resid = y - p
    scores = xs.multiply(resid[:, None]).tocsr() if sparse.issparse(xs) else xs * resid[:, None]
    return LogitFit(coef=beta, information=info, scores=scores, weight=w, loglik=obj, n_iter=it,
                    converged=converged)


def design(a: np.ndarray, b: np.ndarray, n_players: int) -> sparse.csr_matrix:
    """Sparse ``+1`` (player_a) / ``-1`` (player_b) design with the first player's column dropped."""
    rows = np.arange(len(a))
    full = sparse.coo_matrix(
        (np.r_[np.ones(len(a)), -np.ones(len(b))], (np.r_[rows, rows], np.r_[a, b])),
        shape=(len(a), n_players),
    ).tocsr()
    return full[:, 1:]


def centring_map(n_players: int, n_extra: int) -> np.ndarray:
    """Linear map from (reference-coded strengths, extra coefficients) to (centred strengths, extra)."""
    k = n_players - 1 + n_extra
    m = np.zeros((n_players + n_extra, k))
    m[1:n_players, : n_players - 1] = np.eye(n_players - 1)
    m[:n_players] -= m[:n_players].mean(axis=0)
    m[n_players:, n_players - 1:] = np.eye(n_extra)
    return m


@dataclass(frozen=True)
class StyleFit:
    """A covariate-controlled Bradley–Terry fit.

    Attributes
    ----------
    players : tuple of str
    theta : numpy.ndarray
        Centred natural-log strengths (mean 0), controlled for the covariates.
    coef : pandas.Series
        Covariate coefficients (log-odds per unit of each covariate).
    cov : numpy.ndarray
        Covariance of ``(theta, coef)``, ``(n + k) x (n + k)``, of the kind ``cov_kind``.
    cov_kind : str
        E.g. ``"sandwich (HC0)"``, ``"cluster-robust sandwich over 13 clusters of 'item' (CR1)"``.
    n_clusters : int or None
    logit : LogitFit
        The underlying fit (reference coding), e.g. for other covariances.

    Intervals and p-values use ``t(G - 1)`` when the covariance is cluster-robust (:attr:`df`),
    the normal otherwise.
    """

    players: tuple[str, ...]
    theta: np.ndarray
    coef: pd.Series
    cov: np.ndarray = field(repr=False)
    cov_kind: str
    n_clusters: int | None
    logit: LogitFit = field(repr=False)

    @property
    def converged(self) -> bool:
        return self.logit.converged

    @property
    def df(self) -> float:
        """Degrees of freedom of the intervals: ``G - 1`` for a cluster-robust covariance, else infinite."""
        return cluster_df(self.n_clusters)

    def _q(self, level: float) -> float:
        return t_quantile(0.5 + level / 2, self.df)

    def se(self) -> np.ndarray:
        """Standard errors of ``(theta, coef)``."""
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    def coef_table(self, level: float = 0.95) -> pd.DataFrame:
        """Covariate coefficients with SE, Wald interval, statistic ``z = coef / se`` and p-value (both from
        ``t(df)``: ``df = G - 1`` when cluster-robust, else the normal); ``odds_ratio = exp(coef)``."""
        n = len(self.players)
        se = self.se()[n:]
        q = self._q(level)
        z = self.coef.to_numpy() / se
        return pd.DataFrame({
            "covariate": self.coef.index, "coef": self.coef.to_numpy(), "se": se,
            "ci_low": self.coef.to_numpy() - q * se, "ci_high": self.coef.to_numpy() + q * se,
            "z": z, "df": self.df, "pvalue": [t_two_sided_pvalue(v, self.df) for v in z],
            "odds_ratio": np.exp(self.coef.to_numpy()),
        })

    def table(self, *, base: float = 1000.0, level: float = 0.95) -> pd.DataFrame:
        """Elo (``base + 400 log10(e) * theta``, centred) with Wald intervals, best first."""
        n = len(self.players)
        q = self._q(level)
        elo = base + ELO_SCALE * self.theta
        half = q * ELO_SCALE * self.se()[:n]
        out = pd.DataFrame({"model": self.players, "elo": elo, "ci_low": elo - half, "ci_high": elo + half})
        out = out.sort_values(["elo", "model"], ascending=[False, True], kind="stable").reset_index(drop=True)
        out.insert(0, "rank", np.arange(1, n + 1))
        quantile = "" if np.isinf(self.df) else f", {t_label(self.df)}"
        out.attrs["interval"] = f"{self.cov_kind} {level:.0%} Wald{quantile}, centred"
        return out


def length_feature(len_a: np.ndarray, len_b: np.ndarray, *, standardize: bool = True) -> np.ndarray:
    """LMArena's style feature: ``(len_a - len_b) / (len_a + len_b)``, standardised to SD 1 by default."""
    la, lb = np.asarray(len_a, dtype=float), np.asarray(len_b, dtype=float)
    tot = la + lb
    d = np.divide(la - lb, tot, out=np.zeros_like(tot), where=tot > 0)
    if standardize:
        sd = d.std(ddof=0)
        d = (d - d.mean()) / sd if sd > 0 else d - d.mean()
    return d


def finish(
    lf: LogitFit, players: tuple[str, ...], names: Sequence[str], *, kind: CovKind,
    groups: np.ndarray | None, cluster: str | None, cr1: bool,
) -> StyleFit:
    """Map a reference-coded fit to centred strengths and a named covariance (shared by position.py)."""
    n, k = len(players), len(names)
    m = centring_map(n, k)
    est = m @ lf.coef
    cov = m @ lf.covariance(kind, groups=groups, cr1=cr1) @ m.T
    if kind == "hessian":
        label, n_cl = "model-based (inverse Hessian)", None
    elif groups is None:
        label, n_cl = "sandwich (HC0)", None
    else:
        n_cl = int(pd.Series(groups).nunique())
        label = f"cluster-robust sandwich over {n_cl} clusters of {cluster!r} ({'CR1' if cr1 else 'CR0'})"
    return StyleFit(players=players, theta=est[:n], coef=pd.Series(est[n:], index=list(names)),
                    cov=0.5 * (cov + cov.T), cov_kind=label, n_clusters=n_cl, logit=lf)


def not_converged(frame: pd.DataFrame, n_iter: int, what: str) -> None:
    """Raise a convergence error (the ratings exist: that is checked before fitting)."""
    raise ValueError(f"The {what} fit did not converge in {n_iter} Newton steps; the ratings exist, so a covariate "
                     "may separate the outcomes perfectly: check the covariates.")


def fit_style_bt(
    frame: pd.DataFrame,
    covariates: Sequence[str],
    *,
    intercept: bool = False,
    kind: CovKind = "sandwich",
    cluster: str | None = None,
    cr1: bool = True,
    tol: float = 1e-10,
) -> StyleFit:
    """Bradley–Terry with covariates (style control).

    Parameters
    ----------
    frame : pandas.DataFrame
        Canonical comparisons frame plus one numeric column per covariate, holding the
        covariate's a - b difference (e.g. :func:`length_feature` of the two lengths).
    covariates : sequence of str
        Covariate columns (may be empty when ``intercept`` is True).
    intercept : bool, default False
        Add a column of ones: an advantage of ``player_a`` (the position when ``player_a`` is
        the answer shown first; see :mod:`evalkit.ratings.position`), named ``"player_a"``.
    kind : {"sandwich", "hessian"}
    cluster : str, optional
        Column of dependent comparisons (cluster-robust sandwich).
    cr1 : bool, default True
        With ``cluster``: the CR1 factor ``G / (G - 1) * (N - 1) / (N - K)`` (see :meth:`LogitFit.covariance`).
    tol : float

    Returns
    -------
    StyleFit

    Raises
    ------
    ValueError
        On a missing or non-numeric covariate column (naming the first bad row), an unknown
        ``kind``, ratings that do not exist without covariates (a model that never loses or
        never wins; the message names them), or a fit that did not converge.
    """
    if kind not in ("sandwich", "hessian"):
        raise ValueError(f"'kind' must be 'sandwich' or 'hessian'; got {kind!r}.")
    frame = validate_comparisons(frame)
    names = list(covariates)
    for c in names:
        if c not in frame.columns:
            raise ValueError(f"Covariate column {c!r} is not in the frame; it has {list(frame.columns)}.")
        v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(v)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(f"Covariate column {c!r} must be finite numbers; got {frame[c].iloc[first]!r} in "
                             f"{int(bad.sum())} rows (first at row {first}).")
    check_existence(aggregate(frame, validate=False), ties="half")
    players, a, b = encode_players(frame["player_a"], frame["player_b"])
    z = [pd.to_numeric(frame[c]).to_numpy(dtype=float) for c in names]
    if intercept:
        z.append(np.ones(len(frame)))
        names.append("player_a")
    x = sparse.hstack([design(a, b, len(players))] + [sparse.csr_matrix(col[:, None]) for col in z]).tocsr()
    groups = None
    if cluster is not None:
        if cluster not in frame.columns or frame[cluster].isna().any():
            raise ValueError(f"The cluster column {cluster!r} must be in the frame without missing values; "
                             f"the frame has {list(frame.columns)}.")
        groups = frame[cluster].astype(str).to_numpy()
    lf = fit_logit(x, frame["outcome"].to_numpy(float), frame["weight"].to_numpy(float), tol=tol)
    if not lf.converged:
        not_converged(frame, lf.n_iter, "covariate-controlled Bradley–Terry")
    return finish(lf, players, names, kind=kind, groups=groups, cluster=cluster, cr1=cr1)
