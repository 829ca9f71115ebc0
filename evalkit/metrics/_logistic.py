"""The weighted, L2-penalised logistic fit of METR's time horizon, solved exactly.

METR (``eval-analysis-public``, ``src/utils/logistic.py``) fits
``sklearn.linear_model.LogisticRegression(C=1/regularization)`` of the success on
``x = log2(human minutes)`` with sample weights. sklearn's lbfgs objective, with the intercept
unpenalised, is ``0.5 * slope**2 + C * sum_i w_i * logloss_i``; dividing by ``C``, the
optimum is that of

    f(a, b) = sum_i w_i * [-(y_i * log p_i + (1 - y_i) * log(1 - p_i))] + regularization / 2 * b**2,
    p_i = 1 / (1 + exp(-(a + b * x_i))),

which is what :func:`fit_penalised_logistic` minimises. A fractional ``y`` enters the same
formula (METR's current code splits it into a weighted 0 and 1, which is the same
likelihood). The fit is Newton's method on the exact gradient and Hessian, with step halving,
until the first-order conditions hold to machine precision (``max |grad f| <= 1e-12 * sum w``
or no further decrease is possible), so it is *the* optimum, not a solver's stopping point.

sklearn's lbfgs stops when the largest gradient component of its objective, which it scales
by ``1 / (C * sum w)`` (sklearn >= 1.2), falls below ``tol = 1e-4``: a gradient of up to
``1e-4 * sum w`` of ``f``. :func:`lbfgs_horizon_slack` turns that into the relative change of a
horizon it allows (first order: ``|d x_q| <= tol * sum w * ||H^-1 grad x_q||_1``).

Many fits at once (one per agent, one per bootstrap replicate) go through
:func:`fit_many`, vectorised over rows of ``(W, WY)`` matrices: for each fit and each distinct
``x``, the total weight and the total weight of successes, which is all the likelihood uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LogisticFit", "fit_penalised_logistic", "fit_many", "lbfgs_horizon_slack", "logit", "SKLEARN_LBFGS_TOL"]

SKLEARN_LBFGS_TOL = 1e-4  # LogisticRegression's default ``tol`` (gtol of L-BFGS-B)
_MAX_ITER = 200


def logit(q: float | np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return np.log(q / (1.0 - q))


def _log1pexp(z: np.ndarray) -> np.ndarray:
    """log(1 + exp(z)), stable for both signs."""
    return np.logaddexp(0.0, z)


@dataclass(frozen=True)
class LogisticFit:
    """One fitted success curve ``P(success) = 1 / (1 + exp(-(intercept + slope * log2(minutes))))``.

    Attributes
    ----------
    intercept, slope : float
        The penalised optimum (``slope`` per doubling of human minutes). ``slope = -inf`` and
        ``intercept = 0`` when every run failed (METR's convention: horizon 0), ``+inf`` when
        every run succeeded (horizon infinite).
    regularization : float
        The L2 penalty on the slope (``1 / C`` of sklearn).
    gradient : tuple of float
        ``grad f`` at the optimum (both first-order conditions; ``(nan, nan)`` for a degenerate fit).
    iterations : int
        Newton steps taken.
    weight_sum : float
        ``sum w``.
    """

    intercept: float
    slope: float
    regularization: float
    gradient: tuple[float, float]
    iterations: int
    weight_sum: float

    @property
    def max_abs_gradient(self) -> float:
        """``max |grad f|`` at the optimum: how well the first-order conditions hold."""
        return float(np.max(np.abs(self.gradient)))

    def log2_minutes_at(self, q: float) -> float:
        """``x_q = (logit(q) - intercept) / slope``: log2 of the human minutes of success probability ``q``."""
        if not np.isfinite(self.slope):
            return -np.inf if self.slope < 0 else np.inf
        return float((logit(q) - self.intercept) / self.slope)

    def horizon(self, q: float = 0.5) -> float:
        """The human minutes at which the fitted success probability is ``q``: ``2 ** x_q``."""
        return float(np.exp2(self.log2_minutes_at(q)))

    def predict(self, minutes: np.ndarray) -> np.ndarray:
        """The fitted success probability at ``minutes``."""
        x = np.log2(np.asarray(minutes, dtype=float))
        if not np.isfinite(self.slope):
            return np.full_like(x, 0.0 if self.slope < 0 else 1.0)
        return 1.0 / (1.0 + np.exp(-(self.intercept + self.slope * x)))


def _objective(a: np.ndarray, b: np.ndarray, x: np.ndarray, w: np.ndarray, wy: np.ndarray,
               lam: float) -> np.ndarray:
    z = a[:, None] + b[:, None] * x[None, :]
    # -[wy log p + (w - wy) log(1 - p)] = w * log(1 + e^z) - wy * z
    return (w * _log1pexp(z) - wy * z).sum(axis=1) + 0.5 * lam * b**2


def _grad_hess(a: np.ndarray, b: np.ndarray, x: np.ndarray, w: np.ndarray, wy: np.ndarray,
               lam: float) -> tuple[np.ndarray, ...]:
    z = a[:, None] + b[:, None] * x[None, :]
    p = 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic, without overflow
    r = w * p - wy
    v = w * p * (1.0 - p)
    ga = r.sum(axis=1)
    gb = (r * x).sum(axis=1) + lam * b
    haa = v.sum(axis=1)
    hab = (v * x).sum(axis=1)
    hbb = (v * x * x).sum(axis=1) + lam
    return ga, gb, haa, hab, hbb


def fit_many(x: np.ndarray, w: np.ndarray, wy: np.ndarray, *, regularization: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Penalised logistic fits of many data sets that share the design points ``x``.

    Parameters
    ----------
    x : (T,) array
        Distinct values of log2(minutes).
    w, wy : (F, T) arrays
        For each fit ``f`` and point ``t``: the total weight of its runs and the total weight
        times success (``sum w * y``).
    regularization : float
        Penalty on the slope, > 0.

    Returns
    -------
    (intercept, slope, gradient, iterations) : arrays of shape (F,), (F,), (F, 2), (F,)
        Fits with no success have slope ``-inf`` (intercept 0), with no failure ``+inf``;
        their gradient is NaN. A fit with no weight at all is NaN.
    """
    x = np.asarray(x, dtype=float)
    w = np.atleast_2d(np.asarray(w, dtype=float))
    wy = np.atleast_2d(np.asarray(wy, dtype=float))
    if not regularization > 0:
        raise ValueError(f"regularization must be > 0 (METR's headline setting is 0.1); got {regularization!r}.")
    lam = float(regularization)
    n_fits = w.shape[0]
    total = w.sum(axis=1)
    succ = wy.sum(axis=1)
    scale = np.maximum(total, 1e-300)
    degenerate = (succ <= 1e-14 * scale) | (succ >= total * (1 - 1e-14)) | (total <= 0)
    a = np.zeros(n_fits)
    b = np.zeros(n_fits)
    ok = ~degenerate
    mean = np.clip(succ[ok] / total[ok], 1e-12, 1 - 1e-12)
    a[ok] = np.log(mean / (1 - mean))
    iters = np.zeros(n_fits, dtype=np.int64)
    active = ok.copy()
    xa, wa, wya = x, w, wy
    tol = 1e-13 * np.maximum(total, 1.0)
    for _ in range(_MAX_ITER):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        ai, bi = a[idx], b[idx]
        ga, gb, haa, hab, hbb = _grad_hess(ai, bi, xa, wa[idx], wya[idx], lam)
        det = haa * hbb - hab * hab
        da = -(hbb * ga - hab * gb) / det
        db = -(-hab * ga + haa * gb) / det
        f0 = _objective(ai, bi, xa, wa[idx], wya[idx], lam)
        step = np.ones(idx.size)
        accepted = np.zeros(idx.size, dtype=bool)
        na, nb = ai.copy(), bi.copy()
        for _halving in range(60):
            ta, tb = ai + step * da, bi + step * db
            f1 = _objective(ta, tb, xa, wa[idx], wya[idx], lam)
            good = (f1 <= f0 + 1e-15 * np.abs(f0)) & ~accepted
            na[good], nb[good] = ta[good], tb[good]
            accepted |= good
            if accepted.all():
                break
            step = np.where(accepted, step, step * 0.5)
        moved = accepted & ((na != ai) | (nb != bi))
        a[idx], b[idx] = na, nb
        iters[idx] += 1
        gmax = np.maximum(np.abs(ga), np.abs(gb))
        # done: the gradient vanishes to rounding, or Newton can no longer move the point
        done = (gmax <= tol[idx]) | ~moved
        active[idx[done]] = False
    ga, gb, _, _, _ = _grad_hess(a, b, x, w, wy, lam)
    grad = np.column_stack([ga, gb])
    no_success = degenerate & (succ <= 1e-14 * scale) & (total > 0)
    all_success = degenerate & ~no_success & (total > 0)
    a[degenerate], grad[degenerate] = 0.0, np.nan
    b[no_success], b[all_success] = -np.inf, np.inf
    a[total <= 0] = b[total <= 0] = np.nan
    return a, b, grad, iters


def fit_penalised_logistic(log2_minutes: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None, *,
                           regularization: float = 0.1) -> LogisticFit:
    """The exact optimum of METR's penalised logistic fit (module docstring).

    Parameters
    ----------
    log2_minutes : array
        ``log2`` of each run's task length in human minutes.
    y : array
        Success of each run, in [0, 1].
    weights : array, optional
        Sample weights (default 1 each, METR's ``weighting: null``).
    regularization : float
        ``1 / C`` of sklearn; METR's headline setting is 0.1.
    """
    x = np.asarray(log2_minutes, dtype=float).ravel()
    yy = np.asarray(y, dtype=float).ravel()
    ww = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float).ravel()
    if not (x.shape == yy.shape == ww.shape):
        raise ValueError(f"log2_minutes, y and weights must have one value per run; got {x.size}, {yy.size}, "
                         f"{ww.size}.")
    if x.size == 0:
        raise ValueError("The fit needs at least one run.")
    if not (np.isfinite(x).all() and np.isfinite(yy).all() and np.isfinite(ww).all()):
        raise ValueError("log2_minutes, y and weights must be finite numbers.")
    if ((yy < 0) | (yy > 1)).any():
        raise ValueError("y must be in [0, 1] (1 = success).")
    if (ww < 0).any():
        raise ValueError("weights must be >= 0.")
    ux, inv = np.unique(x, return_inverse=True)
    w = np.bincount(inv, weights=ww, minlength=ux.size)
    wy = np.bincount(inv, weights=ww * yy, minlength=ux.size)
    a, b, g, it = fit_many(ux, w[None, :], wy[None, :], regularization=regularization)
    return LogisticFit(intercept=float(a[0]), slope=float(b[0]), regularization=float(regularization),
                       gradient=(float(g[0, 0]), float(g[0, 1])), iterations=int(it[0]), weight_sum=float(ww.sum()))


def lbfgs_horizon_slack(fit: LogisticFit, x: np.ndarray, w: np.ndarray, q: float = 0.5,
                        tol: float = SKLEARN_LBFGS_TOL) -> float:
    """How far sklearn's lbfgs may stop from the optimum, as a relative change of the ``q`` horizon.

    At lbfgs's stopping rule ``max |grad| <= tol`` on sklearn's scaled objective, the gradient
    of ``f`` may be up to ``g = tol * sum w`` in each component; to first order the optimum then
    moves by ``H^-1 g`` and ``x_q`` by at most ``g * ||H^-1 grad x_q||_1``. Returns
    ``2 ** that - 1`` (e.g. 0.003 = 0.3 %). NaN for a degenerate fit.

    Parameters
    ----------
    x, w : arrays
        The fit's data: log2 minutes and weights of each run (or of each distinct point).
    """
    if not (np.isfinite(fit.slope) and fit.slope != 0):
        return float("nan")
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    z = fit.intercept + fit.slope * x
    p = 0.5 * (1.0 + np.tanh(0.5 * z))
    v = w * p * (1 - p)
    h = np.array([[v.sum(), (v * x).sum()], [(v * x).sum(), (v * x * x).sum() + fit.regularization]])
    xq = fit.log2_minutes_at(q)
    grad_xq = np.array([-1.0 / fit.slope, -xq / fit.slope])
    sens = np.linalg.solve(h, grad_xq)  # H symmetric: d x_q = grad_xq . H^-1 g
    dx = tol * float(w.sum()) * float(np.abs(sens).sum())
    return float(np.exp2(dx) - 1.0)
