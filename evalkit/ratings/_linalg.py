"""Dense linear algebra shared by the rating fits: pair Laplacians and centred solves.

scipy.sparse is imported only by the large-problem paths (>= 400 players).
"""

from __future__ import annotations

import numpy as np

__all__ = ["is_sparse", "pair_gradient", "laplacian", "sparse_laplacian", "information_matrix", "PairPattern", "dense", "solve_centred", "solve_laplacian", "jacobi_cg", "pinv_centred"]

# From this many players on, Newton steps use conjugate gradients on the sparse Laplacian (below, a
# dense LU: at 200 players, 19,900 pairs, it is faster than filling the CSR pattern and iterating).
_CG_MIN_PLAYERS = 400
# From this many players on, a fit keeps its information matrix sparse (CSR): 10,000 players
# would need 800 MB dense, while a Laplacian has one entry per compared pair.
SPARSE_MIN_PLAYERS = 2000


def is_sparse(mat: object) -> bool:
    """Whether ``mat`` is a scipy sparse matrix (without importing scipy when it is not loaded)."""
    import sys

    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(mat)


def pair_gradient(i: np.ndarray, j: np.ndarray, r: np.ndarray, n: int) -> np.ndarray:
    """``sum_k r_k (e_i - e_j)``: per-player sum of pair residuals."""
    return np.bincount(i, weights=r, minlength=n) - np.bincount(j, weights=r, minlength=n)


class PairPattern:
    """The CSR sparsity pattern of the pair Laplacian of ``(i, j)`` (distinct pairs, ``i != j``),
    computed once: every Newton step only refills the values (no COO -> CSR sort per step).

    The matrices are the ones ``coo_matrix(...).tocsr()`` builds (same entries, columns sorted
    within each row), so products and solves with them are bit-identical."""

    def __init__(self, i: np.ndarray, j: np.ndarray, n: int) -> None:
        self.i, self.j, self.n = i, j, n
        k = len(i)
        idx = np.int32 if n + 2 * k < 2**31 - 1 else np.int64
        key = i * n + j
        if k and np.all(i < j) and np.all(key[1:] > key[:-1]):
            # PairCounts order (i < j, sorted by i then j): row r holds its pairs (r', r) with r' < r
            # (sorted by r'), the diagonal, then its pairs (r, j') (sorted by j'); only the lower part
            # needs a sort, a stable one on j (radix for 16-bit keys) that keeps i ascending within j
            lo_cnt = np.bincount(j, minlength=n)
            up_cnt = np.bincount(i, minlength=n)
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lo_cnt + 1 + up_cnt, out=indptr[1:])
            first_up = np.zeros(n, dtype=np.int64)
            np.cumsum(up_cnt[:-1], out=first_up[1:])
            pos_up = indptr[i] + lo_cnt[i] + 1 + (np.arange(k) - first_up[i])
            jj = j.astype(np.uint16) if n <= 2**16 else j
            lo_order = np.argsort(jj, kind="stable")
            first_lo = np.zeros(n, dtype=np.int64)
            np.cumsum(lo_cnt[:-1], out=first_lo[1:])
            j_sorted = j[lo_order]
            pos_lo = np.empty(k, dtype=np.int64)
            pos_lo[lo_order] = indptr[j_sorted] + (np.arange(k) - first_lo[j_sorted])
            pos_diag = indptr[:-1] + lo_cnt
            self.positions = np.concatenate([pos_up, pos_lo, pos_diag])
            indices = np.empty(2 * k + n, dtype=idx)
            indices[self.positions] = np.concatenate([j, i, np.arange(n)])
        else:
            rows = np.concatenate([i, j, np.arange(n)])
            cols = np.concatenate([j, i, np.arange(n)])
            order = np.lexsort((cols, rows))
            self.positions = np.empty(len(order), dtype=np.int64)
            self.positions[order] = np.arange(len(order))
            indices = cols[order].astype(idx)
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        self.indices, self.indptr = indices, indptr.astype(idx)
        self._scratch = None
        self.degrees: np.ndarray = np.zeros(n)

    def matrix(self, w: np.ndarray, *, ridge: float = 0.0, scratch: bool = False):
        """``sum_k w_k (e_i - e_j)(e_i - e_j)^T + ridge I`` as a CSR matrix (its diagonal is then
        :attr:`degrees`). ``scratch=True`` refills one matrix kept by the pattern (for the solves of a
        Newton iteration; the previous values are overwritten) instead of building a new one."""
        from scipy.sparse import csr_matrix

        n, k = self.n, len(self.i)
        deg = np.bincount(self.i, weights=w, minlength=n) + np.bincount(self.j, weights=w, minlength=n) + ridge
        self.degrees = deg
        mat = self._scratch if scratch else None
        if mat is None:
            mat = csr_matrix((np.empty(len(self.positions)), self.indices, self.indptr), shape=(n, n), copy=False)
            mat.has_sorted_indices = True
            if scratch:
                self._scratch = mat
        neg = -w
        mat.data[self.positions[:k]] = neg
        mat.data[self.positions[k:2 * k]] = neg
        mat.data[self.positions[2 * k:]] = deg
        return mat


def _distinct_pairs(i: np.ndarray, j: np.ndarray, n: int) -> bool:
    """Whether no pair appears twice (in either orientation) and none is a self-pair."""
    if np.any(i == j):
        return False
    key = np.minimum(i, j) * n + np.maximum(i, j)
    return bool(len(key) < 2 or np.all(key[1:] > key[:-1]) or len(np.unique(key)) == len(key))


def sparse_laplacian(i: np.ndarray, j: np.ndarray, w: np.ndarray, n: int, *, ridge: float = 0.0,
                     pattern: PairPattern | None = None):
    """``sum_k w_k (e_i - e_j)(e_i - e_j)^T + ridge I`` as a sparse CSR ``n x n`` matrix
    (``pattern``: the :class:`PairPattern` of ``(i, j)``, reused across calls)."""
    if pattern is None and _distinct_pairs(i, j, n):
        pattern = PairPattern(i, j, n)
    if pattern is not None:
        return pattern.matrix(w, ridge=ridge)
    from scipy.sparse import coo_matrix

    deg = np.bincount(i, weights=w, minlength=n) + np.bincount(j, weights=w, minlength=n) + ridge
    rows = np.concatenate([i, j, np.arange(n)])
    cols = np.concatenate([j, i, np.arange(n)])
    return coo_matrix((np.concatenate([-w, -w, deg]), (rows, cols)), shape=(n, n)).tocsr()


def information_matrix(i: np.ndarray, j: np.ndarray, w: np.ndarray, n: int, *, ridge: float = 0.0,
                       pattern: PairPattern | None = None):
    """The information Laplacian (plus ``ridge`` on the diagonal): dense below
    :data:`SPARSE_MIN_PLAYERS` players, sparse CSR from there on."""
    if n >= SPARSE_MIN_PLAYERS:
        return sparse_laplacian(i, j, w, n, ridge=ridge, pattern=pattern)
    mat = laplacian(i, j, w, n)
    if ridge:
        mat[np.diag_indices(n)] += ridge
    return mat


def dense(mat) -> np.ndarray:
    """A dense copy-free view of ``mat`` (densified when it is a sparse matrix)."""
    return mat.toarray() if is_sparse(mat) else mat


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
    # LU (LAPACK gesv), not Cholesky: on this machine's OpenBLAS potrf is ~30x slower at n = 1000.
    try:
        return np.linalg.solve(mat, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(mat, rhs, rcond=None)[0]


def pinv_centred(mat: np.ndarray, n: int, *, singular: bool) -> np.ndarray:
    """Inverse of ``mat`` on the subspace ``sum(x[:n]) == 0`` (Moore–Penrose when singular)."""
    eye = np.eye(mat.shape[0])
    if not singular:
        return np.linalg.solve(mat, eye)
    v = _centre_vector(n, mat.shape[0] - n)
    vv = np.outer(v, v)
    return np.linalg.solve(mat + vv, eye) - vv


def jacobi_cg(mat, rhs: np.ndarray, inv_diag: np.ndarray, *, rtol: float, atol: float,
              maxiter: int) -> tuple[np.ndarray, int]:
    """Conjugate gradients for ``mat x = rhs`` from ``x = 0`` with the Jacobi preconditioner
    ``inv_diag``: ``(x, 0)`` when ``||r|| < max(atol, rtol ||rhs||)``, else ``(x, maxiter)``.

    The same arithmetic, step for step, as ``scipy.sparse.linalg.cg(mat, rhs, rtol=, atol=,
    maxiter=, M=diags(inv_diag))`` (SciPy 1.12-1.17), without its per-iteration operator wrapping,
    which costs more than the products themselves on a few hundred players."""
    b = np.asarray(rhs, dtype=float).ravel()
    bnrm2 = np.linalg.norm(b)
    tol = max(float(atol), float(rtol) * float(bnrm2))
    x = np.zeros_like(b)
    if bnrm2 == 0:
        return b, 0
    r = b.copy()
    rho_prev, p = 0.0, b
    for it in range(maxiter):
        if np.linalg.norm(r) < tol:
            return x, 0
        z = inv_diag * r
        rho = np.dot(r, z)
        if it > 0:
            p *= rho / rho_prev
            p += z
        else:
            p = z.copy()
        q = mat @ p
        alpha = rho / np.dot(p, q)
        x += alpha * p
        r -= alpha * q
        rho_prev = rho
    return x, maxiter


def solve_laplacian(
    i: np.ndarray, j: np.ndarray, w: np.ndarray, rhs: np.ndarray, n: int, *, ridge: float = 0.0,
    pattern: PairPattern | None = None,
) -> np.ndarray:
    """Solve ``(L(w) + ridge I) x = rhs`` (``sum(x) == 0`` when ``ridge == 0``; ``rhs`` must sum to 0).

    Dense LU for small ``n``; for ``n >= 400`` conjugate gradients on the sparse Laplacian
    with a Jacobi preconditioner (to a relative residual of 1e-9: an inexact Newton step
    that still converges superlinearly), falling back to the
    dense solve if CG does not converge.
    """
    if n >= _CG_MIN_PLAYERS:
        if pattern is not None:  # the Newton iteration's own matrix, refilled
            mat = pattern.matrix(w, ridge=ridge, scratch=True)
            deg = pattern.degrees
        else:
            mat = sparse_laplacian(i, j, w, n, ridge=ridge)
            deg = mat.diagonal()
        if np.all(deg > 0):
            atol = 1e-14 * float(np.linalg.norm(deg))  # round-off level of the gradient
            x, info = jacobi_cg(mat, rhs, 1.0 / deg, rtol=1e-9, atol=atol, maxiter=500)
            if info == 0:
                return x - x.mean() if ridge == 0 else x
    mat = laplacian(i, j, w, n)
    if ridge:
        mat[np.diag_indices(n)] += ridge
    return solve_centred(mat, rhs, n, singular=ridge == 0)
