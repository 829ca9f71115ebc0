"""Dense linear algebra shared by the rating fits: pair Laplacians and centred solves."""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["pair_gradient", "laplacian", "solve_centred", "pinv_centred"]


def pair_gradient(i: np.ndarray, j: np.ndarray, r: np.ndarray, n: int) -> np.ndarray:
    """``sum_k r_k (e_i - e_j)``: per-player sum of pair residuals."""
    return np.bincount(i, weights=r, minlength=n) - np.bincount(j, weights=r, minlength=n)


def laplacian(i: np.ndarray, j: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """``sum_k w_k (e_i - e_j)(e_i - e_j)^T`` as a dense ``n x n`` matrix."""
    off = np.bincount(i * n + j, weights=w, minlength=n * n).reshape(n, n)
    off = off + off.T
    mat = -off
    mat[np.diag_indices(n)] = off.sum(axis=1)
    return mat


def _centre_vector(n: int, k: int) -> np.ndarray:
    v = np.zeros(n + k)
    v[:n] = 1.0 / np.sqrt(n)
    return v


def solve_centred(mat: np.ndarray, rhs: np.ndarray, n: int, *, singular: bool) -> np.ndarray:
    """Solve ``mat x = rhs`` for ``x`` with ``sum(x[:n]) == 0``.

    ``mat`` is ``(n + k) x (n + k)`` with the first ``n`` coordinates the strengths;
    when ``singular`` it has the null vector ``(1, ..., 1, 0, ...)``, which is removed by
    adding its outer product (``rhs`` must be orthogonal to it).
    """
    if singular:
        v = _centre_vector(n, mat.shape[0] - n)
        mat = mat + np.outer(v, v)
    try:
        return scipy.linalg.solve(mat, rhs, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        return np.linalg.lstsq(mat, rhs, rcond=None)[0]


def pinv_centred(mat: np.ndarray, n: int, *, singular: bool) -> np.ndarray:
    """Inverse of ``mat`` on the subspace ``sum(x[:n]) == 0`` (Moore–Penrose when singular)."""
    if not singular:
        return np.linalg.inv(mat)
    v = _centre_vector(n, mat.shape[0] - n)
    vv = np.outer(v, v)
    return np.linalg.inv(mat + vv) - vv
