"""Bradley–Terry maximum likelihood on aggregated pair counts (Newton / IRLS).

Model: ``P(i beats j) = 1 / (1 + exp(-(theta_i - theta_j)))`` with ``theta`` the natural-log
strengths, centred to mean 0. Ties count as half a win to each side (``ties="half"``,
the choice of evalica, arena-rank and FastChat), are dropped (``ties="drop"``), or follow
Davidson's (1970) model with an estimated tie parameter (``ties="davidson"``, see
:mod:`evalkit.ratings.davidson`). An optional L2 prior ``l2/2 * sum(theta**2)`` makes the
estimate exist for any data.

Newton's method on the concave log-likelihood converges quadratically: a fit takes
4–8 iterations, each a ``bincount`` over the pairs and one linear solve with the weighted
graph Laplacian (dense LU below 400 players, Jacobi-preconditioned conjugate gradients
on the sparse Laplacian above).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from evalkit._special import expit, log_expit, logit
from evalkit.ratings._linalg import (
    _CG_MIN_PLAYERS,
    PairPattern,
    information_matrix,
    pair_gradient,
    solve_laplacian,
)
from evalkit.ratings.counts import PairCounts
from evalkit.ratings.existence import check_existence

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BTFit", "fit_bt"]

TiesMode = Literal["half", "drop", "davidson"]
#: The covariance of a fit: the sandwich (robust) or the inverse Hessian (model-based).
CovKind = Literal["sandwich", "hessian"]
_TIES = ("half", "drop", "davidson")
_SOLVERS = ("newton", "choix")
# Newton steps shorter than this (max-norm, natural-log units) are taken whole without evaluating the
# likelihood: there its cubic term is ~1e-3 of the quadratic gain, so the line search would accept them.
_FULL_STEP = 1e-2


@dataclass(frozen=True)
class BTFit:
    """A Bradley–Terry (or Davidson) fit.

    Attributes
    ----------
    theta : numpy.ndarray
        Natural-log strengths, centred to mean 0, in the order of ``players``.
    players : tuple of str
    ties : {"half", "drop", "davidson"}
    l2 : float
        Strength of the L2 prior (0 = maximum likelihood).
    n_iter : int
        Newton iterations used.
    grad_norm : float
        Max-norm of the gradient of the (penalised) log-likelihood at ``theta``.
    converged : bool
        Whether the last Newton step was below ``tol`` (or, converging quadratically, put the next
        one below ``tol / 1000``).
    loglik : float
        Log-likelihood at the estimate (without the prior term).
    tie_param : float or None
        Davidson's ``nu`` (``P(tie) = nu * sqrt(pi_i pi_j) / (pi_i + pi_j + nu sqrt(pi_i pi_j))``);
        ``None`` for the other tie modes. evalica's ``newman`` reports ``v = nu / 2``.
    information : numpy.ndarray or scipy.sparse.csr_matrix
        Observed information (minus the Hessian of the penalised log-likelihood); for
        Davidson the last row / column is for ``log(nu)``. Sparse (CSR) from 2,000 players
        on (ties "half"/"drop"): one entry per compared pair instead of ``n**2``.
    counts : PairCounts
        The data the fit was made on (needed for sandwich intervals and bootstraps).
    """

    theta: np.ndarray
    players: tuple[str, ...]
    ties: TiesMode
    l2: float
    n_iter: int
    grad_norm: float
    converged: bool
    loglik: float
    tie_param: float | None
    information: np.ndarray = field(repr=False)
    counts: PairCounts = field(repr=False)

    @property
    def singular(self) -> bool:
        """True when the information has the centring null direction (no prior)."""
        return self.l2 == 0

    def covariance(
        self,
        kind: CovKind = "sandwich",
        *,
        ridge: float = 0.0,
        frame: pd.DataFrame | None = None,
        cluster: str | None = None,
        cluster_correction: str = "CR1",
    ) -> np.ndarray:
        """Covariance of ``theta`` (centred parametrisation), ``n x n``.

        Parameters
        ----------
        kind : {"sandwich", "hessian"}
            ``"sandwich"``: the robust (Huber–White) ``H^+ M H^+`` with ``M`` the
            outer product of per-comparison (or per-cluster) scores, valid when the model
            is misspecified; ``"hessian"``: the model-based inverse information ``H^+``.
        ridge, frame, cluster, cluster_correction
            See :func:`evalkit.ratings.uncertainty.covariance` (``cluster`` gives the
            cluster-robust sandwich for comparisons that share a prompt or a judge, with the
            CR1 factor ``G / (G - 1)`` unless ``cluster_correction="CR0"``).
        """
        from evalkit.ratings.uncertainty import covariance

        return covariance(self, kind=kind, ridge=ridge, frame=frame, cluster=cluster,
                          cluster_correction=cluster_correction)

    def se(
        self,
        kind: CovKind = "sandwich",
        *,
        frame: pd.DataFrame | None = None,
        cluster: str | None = None,
        cluster_correction: str = "CR1",
    ) -> np.ndarray:
        """Standard errors of ``theta`` (centred parametrisation); see :meth:`covariance`."""
        cov = self.covariance(kind, frame=frame, cluster=cluster, cluster_correction=cluster_correction)
        return np.sqrt(np.clip(np.diag(cov), 0.0, None))


def bt_data(counts: PairCounts, ties: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, W, L)``: wins of ``i`` and of ``j`` with ties split or dropped; empty pairs removed."""
    half = 0.5 * counts.ties if ties == "half" else 0.0
    w = counts.wins_i + half
    lo = counts.wins_j + half
    keep = (w + lo) > 0
    return counts.i[keep], counts.j[keep], w[keep], lo[keep]


def _bt_loglik(
    theta: np.ndarray, i: np.ndarray, j: np.ndarray, w: np.ndarray, lo: np.ndarray
) -> float:
    d = theta[i] - theta[j]
    return float(np.sum(w * log_expit(d)) + np.sum(lo * log_expit(-d)))


def _start(i: np.ndarray, j: np.ndarray, w: np.ndarray, lo: np.ndarray, n: int) -> np.ndarray:
    """Starting point: logit of each player's smoothed score share (saves ~2 Newton steps)."""
    won = np.bincount(i, weights=w, minlength=n) + np.bincount(j, weights=lo, minlength=n)
    played = np.bincount(i, weights=w + lo, minlength=n) + np.bincount(
        j, weights=w + lo, minlength=n
    )
    return logit((won + 0.5) / (played + 1.0))


def _newton_bt(
    counts: PairCounts, ties: str, l2: float, tol: float, max_iter: int, init: np.ndarray | None
) -> tuple[np.ndarray, int, bool, np.ndarray, float, np.ndarray]:
    """``(theta, n_iter, converged, information, loglik, gradient)`` by damped Newton."""
    n = counts.n_players
    i, j, w, lo = bt_data(counts, ties)
    tot = w + lo
    theta = _start(i, j, w, lo, n) if init is None else np.array(init, dtype=float)
    if l2 == 0:
        theta -= theta.mean()
    obj = _bt_loglik(theta, i, j, w, lo) - 0.5 * l2 * theta @ theta
    converged, it = False, 0
    last: float | None = None  # the previous step's max-norm
    # the pairs of PairCounts are distinct: one sparsity pattern serves every step
    pattern = PairPattern(i, j, n) if n >= _CG_MIN_PLAYERS else None
    for it in range(1, max_iter + 1):  # noqa: B007
        p = expit(theta[i] - theta[j])
        grad = pair_gradient(i, j, w - tot * p, n) - l2 * theta
        step = solve_laplacian(i, j, tot * p * (1.0 - p), grad, n, ridge=l2, pattern=pattern)
        if np.max(np.abs(step)) < _FULL_STEP:  # the quadratic model holds: the full step is taken
            theta, obj = theta + step, None
        else:  # Damped Newton: halve the step until the penalised log-likelihood does not drop.
            if obj is None:
                obj = _bt_loglik(theta, i, j, w, lo) - 0.5 * l2 * theta @ theta
            for _ in range(30):
                new = theta + step
                new_obj = _bt_loglik(new, i, j, w, lo) - 0.5 * l2 * new @ new
                if new_obj >= obj - 1e-12 * abs(obj):
                    break
                step = step / 2
            theta, obj = new, new_obj
        if l2 == 0:
            theta -= theta.mean()
        size = float(np.max(np.abs(step)))
        # converged when the step is below tol, or when Newton's quadratic convergence (the step
        # shrinking as the square of the last, s_k <= C s_{k-1}^2) puts the next one below tol / 1000:
        # that solve would move theta by less than the tolerance asked for
        if size < tol or (last is not None and size < 1e-4 and size / last**2 * size**2 < tol / 1000):
            converged = True
            break
        last = size
    p = expit(theta[i] - theta[j])
    info = information_matrix(i, j, tot * p * (1.0 - p), n, ridge=l2, pattern=pattern)
    grad = pair_gradient(i, j, w - tot * p, n) - l2 * theta
    return theta, it, converged, info, _bt_loglik(theta, i, j, w, lo), grad


def _choix_bt(
    counts: PairCounts, ties: str, tol: float, max_iter: int
) -> tuple[np.ndarray, int, bool]:
    import choix

    n = counts.n_players
    i, j, w, lo = bt_data(counts, ties)
    mat = np.zeros((n, n))
    np.add.at(mat, (i, j), w)
    np.add.at(mat, (j, i), lo)
    theta = np.asarray(
        choix.ilsr_pairwise_dense(mat, alpha=0.0, tol=tol, max_iter=max_iter), dtype=float
    )
    return theta - theta.mean(), -1, True


def _check_fit_options(counts: PairCounts, *, ties: str, solver: str, l2: float, check: bool,
                       init: ArrayLike | None) -> np.ndarray | None:
    """Raise a ValueError for an option :func:`fit_bt` does not accept (or ratings that do not
    exist, when checked); return ``init`` as an array."""
    if ties not in _TIES:
        raise ValueError(f"'ties' must be one of {_TIES}; got {ties!r}.")
    if solver not in _SOLVERS:
        raise ValueError(f"'solver' must be one of {_SOLVERS}; got {solver!r}.")
    if not np.isfinite(l2) or l2 < 0:
        raise ValueError(f"'l2' must be a finite number >= 0; got {l2!r}.")
    if not isinstance(counts, PairCounts):
        raise ValueError(
            f"'counts' must be a PairCounts (see evalkit.ratings.aggregate); got {type(counts).__name__}."
        )
    n = counts.n_players
    if n < 2 or (check and l2 == 0):
        check_existence(counts, ties=ties)
    if init is not None:
        init = np.asarray(init, dtype=float)
        if init.shape != (n,):
            raise ValueError(
                f"'init' must have one value per player ({n}); got shape {init.shape}."
            )
    if ties == "davidson" and solver != "newton":
        raise ValueError("solver='choix' has no Davidson tie model; use solver='newton'.")
    if solver == "choix" and l2:
        raise ValueError(
            "solver='choix' fits maximum likelihood only; use l2=0 or solver='newton'."
        )
    return init


def _fit_logistic(counts: PairCounts, ties: str, l2: float, tol: float, max_iter: int, init: np.ndarray | None,
                  solver: str) -> tuple:
    """Ties "half" / "drop": ``(theta, n_iter, converged, information, loglik, gradient)`` by
    Newton, or by choix (then judged converged by the gradient: choix reports no diagnostics)."""
    n = counts.n_players
    if solver != "choix":
        return _newton_bt(counts, ties, l2, tol, max_iter, init)
    theta, n_iter, converged = _choix_bt(counts, ties, tol, max_iter)
    i, j, w, lo = bt_data(counts, ties)
    p = expit(theta[i] - theta[j])
    info = information_matrix(i, j, (w + lo) * p * (1 - p), n)
    loglik = _bt_loglik(theta, i, j, w, lo)
    grad = pair_gradient(i, j, w - (w + lo) * p, n) - l2 * theta
    converged = bool(np.max(np.abs(grad)) <= 1e-6 * max(1.0, float(np.sum(w + lo))))
    return theta, n_iter, converged, info, loglik, grad


def fit_bt(
    counts: PairCounts,
    *,
    ties: TiesMode = "half",
    l2: float = 0.0,
    check: bool = True,
    tol: float = 1e-10,
    max_iter: int = 100,
    init: ArrayLike | None = None,
    solver: Literal["newton", "choix"] = "newton",
) -> BTFit:
    """Fit a Bradley–Terry model by maximum likelihood (or MAP with an L2 prior).

    Parameters
    ----------
    counts : PairCounts
        Aggregated comparisons (:func:`evalkit.ratings.aggregate`).
    ties : {"half", "drop", "davidson"}, default "half"
        Ties as half a win to each side, dropped, or modelled (Davidson 1970).
    l2 : float, default 0.0
        L2 prior strength on ``theta``; 0 is plain maximum likelihood.
    check : bool, default True
        With ``l2 == 0``, check that the estimate exists before fitting (strongly
        connected beat-or-tie graph) and raise a ValueError naming the offending models
        if it does not. Turn off only when the caller has checked.
    tol : float, default 1e-10
        Convergence when the largest Newton step in ``theta`` is below ``tol``.
    max_iter : int, default 100
    init : array_like, optional
        Starting ``theta`` (warm start, e.g. from the full-data fit in a bootstrap).
    solver : {"newton", "choix"}, default "newton"
        ``"choix"`` solves with :func:`choix.ilsr_pairwise_dense` (Maystre & Grossglauser
        2015) as an independent cross-check; ``ties`` "half"/"drop" and ``l2 == 0`` only.
        The information matrix is still evaluated at the choix solution; ``n_iter`` is
        -1 (choix does not report it) and ``converged`` means a max-norm gradient below
        1e-6 times the number of comparisons.

    Returns
    -------
    BTFit
        ``converged`` is False when ``max_iter`` was reached; check it.

    Raises
    ------
    ValueError
        On an unknown option, a negative ``l2``, fewer than two players, or ratings that
        do not exist (the message names the models and the remedies).
    """
    init = _check_fit_options(counts, ties=ties, solver=solver, l2=l2, check=check, init=init)
    tie_param = None
    if ties == "davidson":
        from evalkit.ratings.davidson import newton_davidson

        theta, n_iter, converged, info, tie_param, loglik, grad = newton_davidson(
            counts, l2=l2, tol=tol, max_iter=max_iter, init=init
        )
    else:
        theta, n_iter, converged, info, loglik, grad = _fit_logistic(counts, ties, l2, tol, max_iter, init, solver)
    return BTFit(
        theta=theta,
        players=counts.players,
        ties=ties,
        l2=float(l2),
        n_iter=int(n_iter),
        grad_norm=float(np.max(np.abs(grad))),
        converged=bool(converged),
        loglik=float(loglik),
        tie_param=tie_param,
        information=info,
        counts=counts,
    )
