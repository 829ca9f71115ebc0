"""Many Bradley–Terry fits at once: the chord (quasi-Newton) iteration of the bootstrap.

Every step uses the full-data inverse information (one factorisation for all replicates),
starts at the full-data estimate and is accelerated by Anderson mixing of depth 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["batched_newton"]


def _incidence(i: np.ndarray, j: np.ndarray, n: int):
    """Sparse ``n x K`` matrix with ``+1`` at ``(i_k, k)`` and ``-1`` at ``(j_k, k)``."""
    from scipy.sparse import coo_matrix

    k = len(i)
    return coo_matrix(
        (
            np.concatenate([np.ones(k), -np.ones(k)]),
            (np.concatenate([i, j]), np.tile(np.arange(k), 2)),
        ),
        shape=(n, k),
    ).tocsr()


def batched_newton(i, j, w, lo, theta0, h_inv0, l2, tol, max_iter):
    """Quasi-Newton for ``b`` BT fits at once (``w``, ``lo``: ``(b, K)`` wins of i / j).

    Every step uses the full-data inverse information ``h_inv0`` (the chord method):
    replicates start at the full-data estimate ``theta0`` and are close to it, so the
    steps contract fast, and one factorisation serves all replicates. The chord
    iteration is a contraction; Anderson mixing of depth 1 (per replicate) roughly
    halves the number of steps. Returns theta and a converged mask (the caller refits
    the others with the damped single solver).
    """
    b = w.shape[0]
    inc = _incidence(i, j, theta0.shape[0])
    x = np.tile(theta0, (b, 1))
    tot = w + lo
    done = np.zeros(b, dtype=bool)
    prev_x = prev_f = None
    for _ in range(max_iter):
        q = x[:, i]  # in place: d -> p = 1 / (1 + exp(-d)) -> residual w - tot * p
        q -= x[:, j]
        np.negative(q, out=q)
        with np.errstate(over="ignore"):
            np.exp(q, out=q)
        q += 1.0
        np.reciprocal(q, out=q)
        q *= tot
        np.subtract(w, q, out=q)
        f = ((inc @ q.T).T - l2 * x) @ h_inv0  # chord step: G(x) - x
        done = np.max(np.abs(f), axis=1) < tol
        if done.all():
            break
        new = x + f
        if prev_f is not None:
            df = f - prev_f
            denom = np.einsum("bn,bn->b", df, df)
            gamma = np.divide(np.einsum("bn,bn->b", f, df), denom, out=np.zeros(b), where=denom > 0)
            new -= gamma[:, None] * (new - (prev_x + prev_f))
        prev_x, prev_f = x, f
        x = new
    return x, done & np.isfinite(x).all(axis=1)
