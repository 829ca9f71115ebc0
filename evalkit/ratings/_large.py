"""Wald variances for many players: one factorisation, no pseudo-inverse, no dense n x n products.

For a Bradley–Terry fit with a sparse information Laplacian ``H`` (2,000 players and more,
``l2 == 0``), the centred covariance is ``P G P`` (Hessian) or ``P G M G P`` (sandwich), where
``G`` is the inverse of ``H`` with player 0 grounded (its row and column removed, then padded
with zeros), ``P = I - 11'/n`` the centring and ``M`` the (sparse) meat, whose rows sum to 0.
Only what the intervals need is computed:

- the diagonal, block by block: ``G_kk`` or ``x_k' M x_k`` with ``x_k = G e_k``;
- ``A 1`` (for the centring) and, with an anchor, ``A e_a``: a few solves and sparse products.

``H_g`` is factorised once (LU, then the explicit inverse in place: LAPACK ``getrf`` +
``getri``, faster here than Cholesky); memory is one ``(n-1)^2`` matrix plus a block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import lapack

if TYPE_CHECKING:
    from evalkit.ratings.bt import BTFit

__all__ = ["large_variances"]

_BLOCK = 512


def _grounded_inverse(info) -> np.ndarray:
    """``H_g^{-1}`` for the information with player 0 removed (one LU factorisation, inverted in place)."""
    h = info[1:, 1:].toarray().T  # symmetric: the transpose is the same matrix, in Fortran order
    lu, piv, code = lapack.dgetrf(h, overwrite_a=1)  # in place (no copy for Fortran order)
    if code != 0:
        raise ValueError("The information matrix is singular: the ratings are not identified.")
    inv, code = lapack.dgetri(lu, piv, overwrite_lu=1)
    if code != 0:
        raise ValueError("The information matrix could not be inverted.")
    return inv


def large_variances(fit: BTFit, meat=None, *, anchor: int | None = None) -> np.ndarray:
    """Variances of the centred strengths (or of differences with player ``anchor``).

    Parameters
    ----------
    fit : BTFit
        A fit with a sparse information matrix and ``l2 == 0``.
    meat : scipy.sparse matrix, optional
        The sandwich's ``M`` (rows summing to 0); ``None`` gives the Hessian variances.
    anchor : int, optional
        Index of the anchor: then ``Var(theta_k - theta_anchor)`` (0 for the anchor).
    """
    n = len(fit.theta)
    x = _grounded_inverse(fit.information)  # (n-1) x (n-1), symmetric
    m = None if meat is None else meat.tocsr()[1:, 1:]
    diag = np.zeros(n)
    for start in range(0, n - 1, _BLOCK):
        cols = x[:, start:start + _BLOCK]
        if m is None:
            diag[1 + start:1 + start + cols.shape[1]] = np.diagonal(cols[start:start + cols.shape[1]])
        else:
            diag[1 + start:1 + start + cols.shape[1]] = np.einsum("ij,ij->j", cols, m @ cols)

    def apply(v: np.ndarray) -> np.ndarray:  # A v for v padded (A = G or G M G), padded result
        y = x @ v[1:]
        if m is not None:
            y = x @ (m @ y)
        return np.concatenate([[0.0], y])

    if anchor is not None:
        col = apply(np.eye(n)[anchor])
        var = diag + diag[anchor] - 2.0 * col
        var[anchor] = 0.0
        return var
    a1 = apply(np.ones(n))
    return diag - 2.0 * a1 / n + a1.sum() / n**2
