"""Wald variances for very many players: iterative solves and a stochastic diagonal, no n x n matrix.

At 10,000 players a dense inverse information is 800 MB and its factorisation minutes of CPU; a sparse
Cholesky does not help either, since a comparison graph is an expander (its factor fills in). Here:

- ``J^+ R`` (``J`` the sparse information, ``J^+`` its inverse on centred strengths) for a block of
  right-hand sides by Jacobi-preconditioned block conjugate gradients on the Laplacian (a Davidson fit's
  ``log(nu)`` border by its Schur complement: one extra solve, ``u = L^+ c``, for the whole fit);
- the diagonal of ``A = J^+`` (Hessian) or ``A = J^+ M J^+`` (sandwich) by **Hutchinson's estimator
  with a control variate**: ``diag(A) = diag(B) + E[z * ((A - B) z)]`` over Rademacher probes ``z``,
  with ``B`` the first terms of the Neumann series of ``J^+`` in its diagonal ``D`` and off-diagonal
  weights ``W`` (Hessian ``D^-1 + D^-1 W D^-1``; sandwich ``D^-1 M D^-1 + D^-1 W D^-1 M D^-1 +
  D^-1 M D^-1 W D^-1``), whose diagonal is exact and cheap (sparse). ``A - B`` keeps only the
  higher-order terms, so the probes' noise is small; probes are added in blocks until the largest
  Monte Carlo standard error of a variance is below ``rel_error`` of it (or ``max_probes`` is reached).
  The estimate is unbiased; its error is reported (:class:`IterativeVariances`).
- Variances of differences with an anchor use one exact column ``A e_anchor``.

The probes are seeded (same data, same bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from evalkit.ratings.bt import BTFit

__all__ = ["ITERATIVE_MIN_PLAYERS", "TARGET_REL_ERROR", "IterativeVariances", "iterative_variances", "block_cg"]

#: From this many players on, Wald variances come from :func:`iterative_variances` (below, one dense
#: factorisation of the grounded information: :mod:`evalkit.ratings._large`, exact, ~8 s at 3,000 players
#: and growing as n^3, where this estimate takes under a second).
ITERATIVE_MIN_PLAYERS = 2500
#: probes are added until the largest Monte Carlo standard error of a variance is below this share of it
#: (or MAX_PROBES is reached)
TARGET_REL_ERROR = 5e-3
MAX_PROBES = 256
_PROBE_BLOCK = 32
_SEED = 20260101


@dataclass(frozen=True)
class IterativeVariances:
    """The estimated variances and how well they are known."""

    variances: np.ndarray
    n_probes: int
    #: the largest Monte Carlo standard error of a variance, relative to it
    max_rel_error: float

    def describe(self) -> str:
        return (f"variances by Hutchinson's estimator with a Neumann-series control variate "
                f"({self.n_probes} probes; Monte Carlo standard error <= {self.max_rel_error:.1e} of each "
                f"variance, {self.max_rel_error / 2:.1e} of each interval's width)")


def block_cg(mat: Any, rhs: np.ndarray, inv_diag: np.ndarray, *, rtol: float = 1e-7,
             maxiter: int = 1000) -> np.ndarray:
    """Jacobi-preconditioned conjugate gradients for ``mat X = rhs``, one column per system, all
    columns advanced together (one sparse product per step); raises when a column does not
    reach ``||r|| <= rtol ||rhs||``."""
    x = np.zeros_like(rhs)
    r = rhs.copy()
    tol = rtol * np.linalg.norm(rhs, axis=0)
    z = inv_diag[:, None] * r
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    for _it in range(maxiter):
        if np.all(np.linalg.norm(r, axis=0) <= tol):
            return x
        q = mat @ p
        pq = np.einsum("ij,ij->j", p, q)
        alpha = np.divide(rz, pq, out=np.zeros_like(rz), where=pq > 0)
        x += alpha * p
        r -= alpha * q
        z = inv_diag[:, None] * r
        rz_new = np.einsum("ij,ij->j", r, z)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        rz = rz_new
        p *= beta
        p += z
    if np.all(np.linalg.norm(r, axis=0) <= tol):
        return x
    raise ValueError(f"Conjugate gradients did not converge in {maxiter} steps: the information matrix is "
                     "ill-conditioned (a comparison graph with weakly linked parts). Use interval='bootstrap'.")


class _Solver:
    """``J^+ R`` on centred strengths for a sparse information ``J`` (``n`` strengths, optionally
    bordered by Davidson's ``log(nu)``)."""

    def __init__(self, info: Any, n: int) -> None:
        info = info.tocsr()
        self.n, self.k = n, info.shape[0] - n
        self.lap = info[:n, :n].tocsr() if self.k else info
        self.deg = self.lap.diagonal()
        if np.any(self.deg <= 0):
            raise ValueError("A player has no comparisons: the ratings are not identified.")
        self.inv_deg = 1.0 / self.deg
        if self.k:
            self.c = np.asarray(info[:n, n].toarray()).ravel()
            self.u = self._lap_solve(self.c[:, None])[:, 0]
            self.schur = float(info[n, n]) - float(self.c @ self.u)

    def _lap_solve(self, rhs: np.ndarray) -> np.ndarray:
        rhs = rhs - rhs.mean(axis=0)
        x = block_cg(self.lap, rhs, self.inv_deg)
        return x - x.mean(axis=0)

    def __call__(self, rhs: np.ndarray) -> np.ndarray:
        n = self.n
        v = self._lap_solve(rhs[:n])
        if not self.k:
            return v
        y = (rhs[n] - self.c @ v) / self.schur
        return np.vstack([v - self.u[:, None] * y, y[None, :]])


def _control(solver: _Solver, meat: Any) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """``(diag(P B P), P B P @ Z)``: the Neumann control variate on the strengths, centred as ``J^+``
    is (``P = I - 11'/n``; zero on a border)."""
    diag_b, apply_b = _neumann(solver, meat)
    n = solver.n
    b1 = apply_b(np.ones((n + solver.k, 1)))[:n, 0]  # B 1 (B is symmetric)
    diag_c = diag_b - 2.0 * b1 / n + b1.sum() / n**2

    def apply_c(z: np.ndarray) -> np.ndarray:
        zc = z.copy()
        zc[:n] -= z[:n].mean(axis=0)
        out = apply_b(zc)
        out[:n] -= out[:n].mean(axis=0)
        return out

    return diag_c, apply_c


def _neumann(solver: _Solver, meat: Any) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """``(diag(B), B @ Z)``: the first Neumann terms of ``J^+`` (or ``J^+ M J^+``) on the strengths."""
    n, k, lap, inv_d = solver.n, solver.k, solver.lap, solver.inv_deg

    def pad(x: np.ndarray) -> np.ndarray:
        return x if not k else np.vstack([x, np.zeros((k, x.shape[1]))])

    def w_times(x: np.ndarray) -> np.ndarray:  # W x with W = D - L, the off-diagonal weights
        return solver.deg[:, None] * x - lap @ x

    if meat is None:
        def apply_h(z: np.ndarray) -> np.ndarray:
            y = inv_d[:, None] * z[:n]
            return pad(y + inv_d[:, None] * w_times(y))

        return inv_d, apply_h
    m = meat.tocsr()[:n, :n].tocsr() if k else meat.tocsr()
    m_diag = m.diagonal()
    cross = m_diag - np.asarray(lap.multiply(m) @ inv_d).ravel()  # sum_j W_rj M_jr / d_j
    diag_b = inv_d**2 * (m_diag + 2.0 * cross)

    def apply_s(z: np.ndarray) -> np.ndarray:
        y = inv_d[:, None] * z[:n]
        my = inv_d[:, None] * (m @ y)
        return pad(my + inv_d[:, None] * w_times(my) + inv_d[:, None] * (m @ (inv_d[:, None] * w_times(y))))

    return diag_b, apply_s


def iterative_variances(fit: BTFit, meat: Any = None, *, anchor: int | None = None, rel_error: float = TARGET_REL_ERROR,
                        max_probes: int = MAX_PROBES) -> IterativeVariances:
    """Variances of the centred strengths (or of differences with player ``anchor``) of a fit with a
    sparse information matrix and ``l2 == 0``; ``meat``: the sandwich's ``M`` (sparse, the size of the
    information), ``None`` for the Hessian variances. See the module docstring."""
    n = len(fit.theta)
    solver = _Solver(fit.information, n)
    size = n + solver.k
    m = None if meat is None else meat.tocsr()

    def apply(z: np.ndarray) -> np.ndarray:
        x = solver(z)
        return x if m is None else solver(m @ x)

    diag_b, apply_b = _control(solver, m)
    gen = np.random.default_rng(_SEED)
    total, total_sq, count = np.zeros(n), np.zeros(n), 0
    rel = np.inf
    while count < max_probes:
        z = gen.integers(0, 2, size=(size, _PROBE_BLOCK)).astype(float) * 2.0 - 1.0
        est = z[:n] * (apply(z) - apply_b(z))[:n]
        total += est.sum(axis=1)
        total_sq += np.einsum("ij,ij->i", est, est)
        count += _PROBE_BLOCK
        mean = total / count
        spread = np.clip(total_sq / count - mean**2, 0.0, None) * count / (count - 1)
        diag = diag_b + mean
        rel = float(np.max(np.sqrt(spread / count) / np.abs(diag)))
        if rel <= rel_error:
            break
    var = diag_b + total / count
    if anchor is not None:
        e = np.zeros((size, 1))
        e[anchor] = 1.0
        col = apply(e)[:n, 0]
        var = var + var[anchor] - 2.0 * col
        var[anchor] = 0.0
    return IterativeVariances(var, count, rel)
