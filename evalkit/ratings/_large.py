"""Wald variances for many players: one factorisation, no pseudo-inverse, no dense n x n products.

For a Bradley–Terry fit with a sparse information Laplacian ``H`` (2,000 players and more,
below :data:`~evalkit.ratings._iterative.ITERATIVE_MIN_PLAYERS`, ``l2 == 0``; for Davidson's ties
bordered by ``log(nu)``), the centred covariance is ``P G P`` (Hessian) or ``P G M G P`` (sandwich), where
``G`` is the inverse of ``H`` with player 0 grounded (its row and column removed, then padded
with zeros), ``P = I - 11'/n`` the centring and ``M`` the (sparse) meat, whose rows sum to 0.
Only what the intervals need is computed:

- the diagonal, block by block: ``G_kk`` or ``x_k' M x_k`` with ``x_k = G e_k``;
- ``A 1`` (for the centring) and, with an anchor, ``A e_a``: a few solves and sparse products.

``H_g`` is factorised once (LAPACK ``getrf``, in place; faster here than Cholesky) and every
column block, solve and matrix-vector product reuses the factors (``getrs``); memory is one
``(n-1)^2`` matrix plus a block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import lapack

if TYPE_CHECKING:
    from evalkit.ratings.bt import BTFit

__all__ = ["large_variances"]

_BLOCK = 512
# The meat is multiplied as a dense matrix when more than this share of its entries is filled
# (and it has at most _DENSE_MEAT_MAX rows: 134 MB at 4,096).
_DENSE_MEAT_FILL = 0.05
_DENSE_MEAT_MAX = 4096


def _grounded_factor(info) -> tuple[np.ndarray, np.ndarray]:
    """LU factors of the information with player 0 removed (one factorisation, in place)."""
    h = info[1:, 1:].toarray().T  # symmetric: the transpose is the same matrix, in Fortran order
    lu, piv, code = lapack.dgetrf(h, overwrite_a=1)  # in place (no copy for Fortran order)
    if code != 0:
        raise ValueError("The information matrix is singular: the ratings are not identified.")
    return lu, piv


def large_variances(fit: BTFit, meat=None, *, anchor: int | None = None) -> np.ndarray:
    """Variances of the centred strengths (or of differences with player ``anchor``).

    Parameters
    ----------
    fit : BTFit
        A fit with a sparse information matrix and ``l2 == 0`` (for Davidson's ties bordered by the
        ``log(nu)`` row and column).
    meat : scipy.sparse matrix, optional
        The sandwich's ``M`` (the information's shape; rows summing to 0 over the strengths);
        ``None`` gives the Hessian variances.
    anchor : int, optional
        Index of the anchor: then ``Var(theta_k - theta_anchor)`` (0 for the anchor).

    From :data:`~evalkit.ratings._iterative.ITERATIVE_MIN_PLAYERS` players on, the variances are
    estimated without any dense matrix (:func:`~evalkit.ratings._iterative.iterative_variances`).
    """
    from evalkit.ratings._iterative import ITERATIVE_MIN_PLAYERS, iterative_variances

    n = len(fit.theta)
    if n >= ITERATIVE_MIN_PLAYERS:
        return iterative_variances(fit, meat, anchor=anchor).variances
    size = fit.information.shape[0]  # n, or n + 1 with Davidson's log(nu)
    lu, piv = _grounded_factor(fit.information)

    def solve(rhs: np.ndarray) -> np.ndarray:  # H_g^{-1} rhs with the one factorisation
        return lapack.dgetrs(lu, piv, rhs)[0]

    m = None if meat is None else meat.tocsr()[1:, 1:]
    if m is not None and n <= _DENSE_MEAT_MAX and m.nnz > _DENSE_MEAT_FILL * (size - 1) ** 2:
        # a dense-ish meat (2,000 players x 1e6 comparisons: 40 % of the pairs met) multiplies
        # the column blocks ~2x faster by BLAS than by scipy's sparse kernel
        m = m.toarray()
    diag = np.zeros(n)
    for start in range(0, n - 1, _BLOCK):  # the strengths' columns (not log(nu)'s)
        stop = min(start + _BLOCK, n - 1)
        eye = np.zeros((size - 1, stop - start), order="F")
        eye[np.arange(start, stop), np.arange(stop - start)] = 1.0
        cols = solve(eye)  # columns start..stop of H_g^{-1}
        if m is None:
            diag[1 + start:1 + stop] = cols[np.arange(start, stop), np.arange(stop - start)]
        else:
            diag[1 + start:1 + stop] = np.einsum("ij,ij->j", cols, m @ cols)

    def apply(v: np.ndarray) -> np.ndarray:  # A v for v padded (A = G or G M G), padded strengths
        y = solve(v[1:])
        if m is not None:
            y = solve(m @ y)
        return np.concatenate([[0.0], y])[:n]

    def unit(k: int | None) -> np.ndarray:  # e_k, or the strengths' ones (k None), padded
        v = np.zeros(size)
        if k is None:
            v[:n] = 1.0
        else:
            v[k] = 1.0
        return v

    if anchor is not None:
        col = apply(unit(anchor))
        var = diag + diag[anchor] - 2.0 * col
        var[anchor] = 0.0
        return var
    a1 = apply(unit(None))
    return diag - 2.0 * a1 / n + a1.sum() / n**2
