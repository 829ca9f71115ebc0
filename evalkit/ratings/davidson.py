"""Davidson's (1970) tie model, fitted jointly with the strengths by Newton's method.

``P(i wins) = pi_i / D``, ``P(j wins) = pi_j / D``, ``P(tie) = nu sqrt(pi_i pi_j) / D`` with
``D = pi_i + pi_j + nu sqrt(pi_i pi_j)`` and ``pi = exp(theta)``. In terms of
``d = theta_i - theta_j`` and ``lambda = log(nu)`` the three probabilities are the softmax
of ``(d/2, -d/2, lambda)``, so the log-likelihood is concave in ``(theta, lambda)``.
Newman (2023) writes the same model with ``2 v`` in place of ``nu``; evalica's
``newman`` reports ``v``.
"""

from __future__ import annotations

import numpy as np

from evalkit.ratings import _linalg
from evalkit.ratings._linalg import (
    PairPattern,
    laplacian,
    pair_gradient,
    solve_centred,
    solve_laplacian,
)
from evalkit.ratings.counts import PairCounts

__all__ = ["davidson_probabilities", "newton_davidson"]

# Strength differences / |log(nu)| beyond this many natural-log units (odds of e^30) mean
# the iteration is following a direction of recession: the estimate does not exist. The
# beat-or-tie graph check is necessary for Davidson's model but not sufficient.
_DIVERGED = 30.0


def davidson_probabilities(d: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P(i wins), P(j wins), P(tie))`` for strength differences ``d`` and ``lambda = log(nu)``."""
    z = np.stack([0.5 * d, -0.5 * d, np.full_like(d, lam)])
    z = z - z.max(axis=0)
    e = np.exp(z)
    e /= e.sum(axis=0)
    return e[0], e[1], e[2]


def _loglik(theta, lam, i, j, wi, wj, t) -> float:
    d = theta[i] - theta[j]
    z = np.stack([0.5 * d, -0.5 * d, np.full_like(d, lam)])
    m = z.max(axis=0)
    log_d = m + np.log(np.exp(z - m).sum(axis=0))
    return float(np.sum(wi * (0.5 * d - log_d) + wj * (-0.5 * d - log_d) + t * (lam - log_d)))


class _Info:
    """The observed information in ``(theta, lambda)`` by its blocks: the pair weights ``h_dd`` of
    the strengths' Laplacian (plus ``l2`` on its diagonal), the border ``cross`` and the corner."""

    def __init__(self, i, j, h_dd, cross, corner, n, l2, pattern):
        self.i, self.j, self.h_dd, self.cross, self.corner = i, j, h_dd, cross, corner
        self.n, self.l2, self.pattern = n, l2, pattern

    def matrix(self):
        """Dense ``(n+1) x (n+1)``; sparse CSR (bordered Laplacian) with a pair pattern (many players)."""
        n = self.n
        if self.pattern is not None:
            from scipy.sparse import bmat, csr_matrix

            lap = self.pattern.matrix(self.h_dd, ridge=self.l2)
            col = csr_matrix(self.cross[:, None])
            return bmat([[lap, col], [col.T, csr_matrix([[self.corner]])]], format="csr")
        info = np.zeros((n + 1, n + 1))
        info[:n, :n] = laplacian(self.i, self.j, self.h_dd, n)
        if self.l2:
            info[np.arange(n), np.arange(n)] += self.l2
        info[:n, n] = self.cross
        info[n, :n] = self.cross
        info[n, n] = self.corner
        return info

    def solve(self, grad: np.ndarray) -> np.ndarray:
        """The Newton step ``info^+ grad`` (``sum(step[:n]) == 0`` without a prior)."""
        n = self.n
        if self.pattern is None:
            return solve_centred(self.matrix(), grad, n, singular=self.l2 == 0)
        # the border by its Schur complement: two conjugate-gradient solves with the Laplacian
        def lap_solve(rhs: np.ndarray) -> np.ndarray:
            return solve_laplacian(self.i, self.j, self.h_dd, rhs, n, ridge=self.l2, pattern=self.pattern)

        v, u = lap_solve(grad[:n]), lap_solve(self.cross)
        y = (grad[n] - self.cross @ v) / (self.corner - self.cross @ u)
        return np.concatenate([v - u * y, [y]])


def _derivatives(theta, lam, i, j, wi, wj, t, n, l2, pattern=None):
    """Gradient and observed information of the penalised log-likelihood in ``(theta, lambda)``."""
    a, b, c = davidson_probabilities(theta[i] - theta[j], lam)
    tot = wi + wj + t
    g_d = 0.5 * (wi - wj) - 0.5 * tot * (a - b)
    grad = np.empty(n + 1)
    grad[:n] = pair_gradient(i, j, g_d, n) - l2 * theta
    grad[n] = np.sum(t - tot * c)
    h_dd = 0.25 * tot * (a + b - (a - b) ** 2)
    h_dl = -0.5 * tot * c * (a - b)
    info = _Info(i, j, h_dd, pair_gradient(i, j, h_dl, n), float(np.sum(tot * c * (1.0 - c))), n, l2, pattern)
    return grad, info


def newton_davidson(
    counts: PairCounts, *, l2: float, tol: float, max_iter: int, init: np.ndarray | None
) -> tuple[np.ndarray, int, bool, np.ndarray, float, float, np.ndarray]:
    """Newton's method for Davidson's model.

    Returns
    -------
    theta, n_iter, converged, information, nu, loglik, gradient
    """
    n = counts.n_players
    keep = counts.total > 0
    i, j = counts.i[keep], counts.j[keep]
    wi, wj, t = counts.wins_i[keep], counts.wins_j[keep], counts.ties[keep]
    n_ties, n_dec = float(t.sum()), float(wi.sum() + wj.sum())
    if n_ties <= 0 or n_dec <= 0:
        raise ValueError(
            "ties='davidson' estimates how often comparisons end in a tie and needs both ties and "
            f"decided comparisons; got {n_ties:g} ties and {n_dec:g} decided comparisons. "
            "Use ties='half' or ties='drop'."
        )
    frac = n_ties / (n_ties + n_dec)
    theta = np.zeros(n) if init is None else np.array(init, dtype=float)
    if l2 == 0:
        theta -= theta.mean()
    lam = float(np.log(2.0 * frac / (1.0 - frac)))
    obj = _loglik(theta, lam, i, j, wi, wj, t) - 0.5 * l2 * theta @ theta
    converged, it = False, 0
    # many players: a sparse information (one CSR pattern) and conjugate-gradient steps
    pattern = PairPattern(i, j, n) if n >= _linalg.SPARSE_MIN_PLAYERS else None
    for it in range(1, max_iter + 1):  # noqa: B007
        grad, info = _derivatives(theta, lam, i, j, wi, wj, t, n, l2, pattern)
        if np.ptp(theta) > _DIVERGED or abs(lam) > _DIVERGED:
            break
        step = info.solve(grad)
        for _ in range(30):
            new_t, new_l = theta + step[:n], lam + step[n]
            new_obj = _loglik(new_t, new_l, i, j, wi, wj, t) - 0.5 * l2 * new_t @ new_t
            if new_obj >= obj - 1e-12 * abs(obj):
                break
            step = step / 2
        theta, lam, obj = new_t, new_l, new_obj
        if l2 == 0:
            theta -= theta.mean()
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    if np.ptp(theta) > _DIVERGED or abs(lam) > _DIVERGED:
        raise ValueError(
            "The Davidson tie model has no finite maximum-likelihood estimate on this data: the strengths "
            f"and the tie parameter run off to infinity (strength range {np.ptp(theta):.0f} log-units, "
            f"log(nu) = {lam:.0f}). This happens when some pairs have ties and wins for only one side "
            "(e.g. A-B: 1 win for A, 2 ties, no win for B) and nothing else pins them. "
            "Use ties='half' or ties='drop', or add an L2 prior (l2=...)."
        )
    grad, info = _derivatives(theta, lam, i, j, wi, wj, t, n, l2, pattern)
    loglik = _loglik(theta, lam, i, j, wi, wj, t)
    return theta, it, converged, info.matrix(), float(np.exp(lam)), loglik, grad
