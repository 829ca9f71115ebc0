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

from evalkit.ratings._linalg import laplacian, pair_gradient, solve_centred
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


def _derivatives(theta, lam, i, j, wi, wj, t, n, l2):
    """Gradient and observed information of the penalised log-likelihood in ``(theta, lambda)``."""
    a, b, c = davidson_probabilities(theta[i] - theta[j], lam)
    tot = wi + wj + t
    g_d = 0.5 * (wi - wj) - 0.5 * tot * (a - b)
    grad = np.empty(n + 1)
    grad[:n] = pair_gradient(i, j, g_d, n) - l2 * theta
    grad[n] = np.sum(t - tot * c)
    h_dd = 0.25 * tot * (a + b - (a - b) ** 2)
    h_dl = -0.5 * tot * c * (a - b)
    info = np.zeros((n + 1, n + 1))
    info[:n, :n] = laplacian(i, j, h_dd, n)
    if l2:
        info[np.arange(n), np.arange(n)] += l2
    cross = pair_gradient(i, j, h_dl, n)
    info[:n, n] = cross
    info[n, :n] = cross
    info[n, n] = np.sum(tot * c * (1.0 - c))
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
    for it in range(1, max_iter + 1):  # noqa: B007
        grad, info = _derivatives(theta, lam, i, j, wi, wj, t, n, l2)
        if np.ptp(theta) > _DIVERGED or abs(lam) > _DIVERGED:
            break
        step = solve_centred(info, grad, n, singular=l2 == 0)
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
    grad, info = _derivatives(theta, lam, i, j, wi, wj, t, n, l2)
    loglik = _loglik(theta, lam, i, j, wi, wj, t)
    return theta, it, converged, info, float(np.exp(lam)), loglik, grad
