"""Repeated-sampling estimators: unbiased pass@k and the expected best of k scores.

``pass_at_k`` is the unbiased estimator of Chen et al. (2021, *Evaluating Large Language
Models Trained on Code*): with ``n`` samples of which ``c`` pass, ``1 - C(n-c, k) / C(n, k)``,
computed stably in logs (``log`` of the product ``prod_{i=n-c+1}^{n} (1 - k / i)`` via
``gammaln``, then ``-expm1``), so large ``n`` neither overflows nor loses precision.
``best_of_k`` generalises it to any score: the expected maximum of ``k`` of the ``n``
observed scores drawn without replacement, which is unbiased for the best of ``k`` fresh
draws and equals ``pass_at_k`` on 0/1 scores.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

__all__ = ["pass_at_k", "best_of_k", "best_of_k_win_probability"]


def pass_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> np.ndarray:
    """Unbiased pass@k per problem (Chen et al. 2021); average the result over problems.

    Parameters
    ----------
    n : array_like of int
        Samples drawn per problem.
    c : array_like of int
        Correct samples per problem (``0 <= c <= n``).
    k : array_like of int
        Attempt budget (``1 <= k <= n``).

    Returns
    -------
    numpy.ndarray
        Broadcast shape of the inputs (a 0-d array for scalars).

    Examples
    --------
    >>> float(pass_at_k(5, 2, 3))
    0.9
    """
    n_, c_, k_ = np.broadcast_arrays(*(np.asarray(v) for v in (n, c, k)))
    for name, v in (("n", n_), ("c", c_), ("k", k_)):
        if not np.all(np.isfinite(v)) or not np.all(np.mod(v, 1) == 0):
            raise ValueError(f"{name} must be whole numbers; got {v!r}.")
    if np.any(c_ < 0) or np.any(c_ > n_):
        raise ValueError("c must satisfy 0 <= c <= n.")
    if np.any(k_ < 1) or np.any(k_ > n_):
        raise ValueError("k must satisfy 1 <= k <= n (pass@k needs at least k samples).")
    n_, c_, k_ = (v.astype(float) for v in (n_, c_, k_))
    # log C(n-c, k) - log C(n, k); zero when n - c < k (some correct sample always drawn).
    sure = (n_ - c_) < k_
    nc = np.where(sure, k_, n_ - c_)
    log_ratio = gammaln(nc + 1) - gammaln(nc - k_ + 1) - gammaln(n_ + 1) + gammaln(n_ - k_ + 1)
    # -expm1 keeps precision for small values; clipping removes round-off below 0.
    return np.where(sure, 1.0, np.where(c_ == 0, 0.0, np.clip(-np.expm1(log_ratio), 0.0, 1.0)))


def best_of_k(scores: ArrayLike, k: int) -> float:
    """Expected best of ``k`` scores drawn without replacement from the ``n`` observed ones.

    ``sum_i s_(i) C(i-1, k-1) / C(n, k)`` over the scores sorted ascending: an unbiased
    estimate of ``E[max of k fresh draws]``. On 0/1 scores it is :func:`pass_at_k`.

    Parameters
    ----------
    scores : array_like
        ``n`` observed scores of one problem (finite).
    k : int
        ``1 <= k <= n``.
    """
    s = np.sort(np.asarray(scores, dtype=float).ravel())
    n = s.size
    if n == 0 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a non-empty array of finite numbers.")
    if not (isinstance(k, (int, np.integer)) and 1 <= k <= n):
        raise ValueError(f"k must be an integer with 1 <= k <= n = {n}; got {k!r}.")
    i = np.arange(1, n + 1, dtype=float)
    ok = i >= k
    logw = np.full(n, -np.inf)
    logw[ok] = (
        gammaln(i[ok]) - gammaln(k) - gammaln(i[ok] - k + 1)
        - (gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1))
    )
    return float(np.sum(np.exp(logw) * s))


def best_of_k_win_probability(n: ArrayLike, m: ArrayLike) -> np.ndarray:
    """Closed form: the best of ``n`` i.i.d. continuous draws beats the best of ``m`` w.p. ``n/(n+m)``.

    This is the basis of the 400-Elo-per-decade reference: as a Bradley–Terry model it
    rates the best of ``n`` at ``400 log10 n`` Elo.
    """
    n_, m_ = np.asarray(n, dtype=float), np.asarray(m, dtype=float)
    if np.any(n_ <= 0) or np.any(m_ <= 0):
        raise ValueError("n and m must be > 0.")
    return n_ / (n_ + m_)
