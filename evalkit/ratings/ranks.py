"""Rank intervals and tie groups for a leaderboard.

Three answers to "which ranks are these ratings compatible with?":

* :func:`fastchat_rank` - FastChat / LMArena's rule: ``rank_i = 1 + #{j : low_j > high_i}``,
  from each model's own (marginal) interval. One number per model; models with
  overlapping intervals share it. Simple, but the marginal intervals do not hold for all
  models at once.
* :func:`rank_intervals` - simultaneous rank intervals (Mogstad, Romano, Shaikh & Wilhelm
  2024, "Inference for ranks"): max-|t| over all pairwise differences of the bootstrap (or
  Gaussian) replicates gives one critical value ``c`` such that every pairwise difference
  lies within ``c`` standard errors in ``level`` of replicates. Model ``i`` is ranked above
  ``j`` when ``(r_i - r_j) / se_ij > c``; then ``rank_low = 1 + #{j above i}`` and
  ``rank_high = n - #{j below i}``. All intervals hold jointly with probability ``level``.
* :func:`tie_groups` - consecutive groups by rating: a model starts a new group when it is
  significantly below (by the same simultaneous test) the best model of the current group.
  Members of a group are statistically indistinguishable from its best member.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalkit._rng import RNGLike, as_generator
from evalkit.ratings.elo import ELO_SCALE

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.ratings.bootstrap import BTBootstrap
    from evalkit.ratings.bt import BTFit, CovKind

__all__ = ["fastchat_rank", "pairwise_dominance", "rank_intervals", "tie_groups", "gaussian_replicates",
           "rank_columns", "add_rank_columns", "rank_values", "fit_rank_values",
           "RANK_MAX_PLAYERS"]


#: Simultaneous rank intervals are computed up to this many players by default: 1000 players is
#: ~500,000 pairs x 2000 replicates, about 3 s on two cores; above it only ``rank_fastchat``.
RANK_MAX_PLAYERS = 1000
#: From this many players, rank intervals draw their Gaussian replicates through a Cholesky factor
#: (:func:`gaussian_replicates` with ``differences_only=True``; about 10x cheaper than the
#: eigen-decomposition at 1,000 players) and take max-|t| over all pairs in float32.
CHOLESKY_MIN_PLAYERS = 400


def fastchat_rank(ci_low: np.ndarray, ci_high: np.ndarray) -> np.ndarray:
    """FastChat's rank: 1 + the number of models whose lower bound exceeds this model's upper bound."""
    lo, hi = np.asarray(ci_low, dtype=float), np.asarray(ci_high, dtype=float)
    # models with lo > hi_i: those past hi_i in the sorted lower bounds (n log n, no n x n table;
    # a NaN bound exceeds nothing and is exceeded by nothing, as in the pairwise comparison)
    ok = np.sort(lo[~np.isnan(lo)])
    above = len(ok) - np.searchsorted(ok, hi, side="right")
    return 1 + np.where(np.isnan(hi), 0, above)


_CHUNK = 2_000_000  # replicate x pair cells per block


class _PairStats:
    """Pairwise differences ``i < j`` of the estimate, their bootstrap SEs and t-statistics, and the
    replicates' max |deviation| / SE over any subset of pairs (computed in blocks, never B x all pairs)."""

    def __init__(self, estimate: np.ndarray, replicates: np.ndarray) -> None:
        est = np.asarray(estimate, dtype=float)
        reps = np.asarray(replicates, dtype=float)
        if reps.ndim != 2 or reps.shape[1] != est.size:
            raise ValueError(f"'replicates' must be (B, {est.size}); got shape {reps.shape}.")
        reps = reps[np.all(np.isfinite(reps), axis=1)]
        if len(reps) < 20:
            raise ValueError(f"'replicates' needs at least 20 finite rows; got {len(reps)}.")
        self.n = est.size
        self.dev = reps - est  # (B, n): replicate deviations
        self.iu, self.ju = np.triu_indices(self.n, 1)
        d_hat = est[self.iu] - est[self.ju]
        cov = self.dev.T @ self.dev / len(reps)
        var = np.diag(cov)[self.iu] + np.diag(cov)[self.ju] - 2 * cov[self.iu, self.ju]
        self.se = np.sqrt(np.clip(var, 0.0, None))
        safe = np.where(self.se > 0, self.se, np.inf)
        self.safe = safe
        # no spread: a nonzero difference is certain (+/- inf), an exact tie is t = 0 (identical players)
        certain = np.where(d_hat > 0, np.inf, np.where(d_hat < 0, -np.inf, 0.0))
        self.t = np.where(self.se > 0, d_hat / safe, certain)

    def max_abs_t(self, pairs: np.ndarray | None = None) -> np.ndarray:
        """Per replicate, max over ``pairs`` (indices into ``iu``/``ju``; default all) of |deviation| / SE."""
        out = np.zeros(len(self.dev))
        if pairs is None:  # all pairs, model by model: contiguous rows (models x replicates)
            # from CHOLESKY_MIN_PLAYERS players in float32 (half the memory traffic of ~n^2/2 x B
            # values; a relative error ~1e-7 in a Monte Carlo quantile), below it the same bits as float64
            dtype = np.float32 if self.n >= CHOLESKY_MIN_PLAYERS else np.float64
            dev_t = np.ascontiguousarray(self.dev.T, dtype=dtype)
            safe = self.safe.astype(dtype)
            best = np.zeros(len(self.dev), dtype=dtype)
            start = 0
            for i in range(self.n - 1):
                stop = start + self.n - 1 - i  # pairs (i, i+1..n-1) are iu/ju[start:stop]
                block = dev_t[i + 1:] - dev_t[i]
                np.abs(block, out=block)
                block /= safe[start:stop, None]
                np.maximum(best, block.max(axis=0), out=best)
                start = stop
            return best.astype(np.float64)
        step = max(1, _CHUNK // max(len(self.dev), 1))
        for k in range(0, len(pairs), step):
            p = pairs[k:k + step]
            block = np.abs(self.dev[:, self.iu[p]] - self.dev[:, self.ju[p]]) / self.safe[p]
            out = np.maximum(out, block.max(axis=1))
        return out


def pairwise_dominance(
    estimate: np.ndarray, replicates: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, float]:
    """``above[i, j]``: ``i`` is significantly above ``j``, simultaneously over all pairs.

    Parameters
    ----------
    estimate : (n,) array
        Point ratings (any scale on which differences matter).
    replicates : (B, n) array
        Bootstrap (or Gaussian) replicates of the ratings; rows with NaN are ignored.
    level : float

    Returns
    -------
    above : (n, n) bool array
    critical : float
        The max-|t| critical value.
    """
    if not 0 < level < 1:
        raise ValueError(f"'level' must be in (0, 1); got {level!r}.")
    ps = _PairStats(estimate, replicates)
    crit = float(np.quantile(ps.max_abs_t(), level))
    above = np.zeros((ps.n, ps.n), dtype=bool)
    above[ps.iu, ps.ju] = ps.t > crit
    above[ps.ju, ps.iu] = ps.t < -crit
    return above, crit


def rank_intervals(
    estimate: np.ndarray, replicates: np.ndarray, *, level: float = 0.95, simultaneous: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``(rank_low, rank_high)`` of every model (1 = best).

    ``simultaneous=True``: all intervals hold jointly at ``level`` (max-|t| over all pairs).
    ``simultaneous=False``: each model's own interval holds at ``level`` (max-|t| over the
    ``n - 1`` pairs involving that model; Mogstad et al.'s marginal set): narrower, but read
    one model at a time.
    """
    if simultaneous:
        above, _ = pairwise_dominance(estimate, replicates, level=level)
        n = above.shape[0]
        return 1 + above.sum(axis=0), n - above.sum(axis=1)
    if not 0 < level < 1:
        raise ValueError(f"'level' must be in (0, 1); got {level!r}.")
    ps = _PairStats(estimate, replicates)
    lo, hi = np.ones(ps.n, dtype=int), np.full(ps.n, ps.n)
    for i in range(ps.n):
        mine = np.flatnonzero((ps.iu == i) | (ps.ju == i))
        crit = np.quantile(ps.max_abs_t(mine), level)
        t_i = np.where(ps.iu[mine] == i, ps.t[mine], -ps.t[mine])  # t of (i - other)
        lo[i] += int(np.sum(t_i < -crit))
        hi[i] -= int(np.sum(t_i > crit))
    return lo, hi


def tie_groups(estimate: np.ndarray, above: np.ndarray) -> np.ndarray:
    """Group number (1 = top) of each model: a new group starts at the first model significantly
    below the best model of the current group (``above`` from :func:`pairwise_dominance`)."""
    est = np.asarray(estimate, dtype=float)
    order = np.argsort(-est, kind="stable")
    group = np.zeros(est.size, dtype=int)
    g, leader = 1, order[0]
    for k in order:
        if above[leader, k]:
            g, leader = g + 1, k
        group[k] = g
    return group


def gaussian_replicates(estimate: np.ndarray, cov: np.ndarray, *, n_draws: int = 2000,
                        rng: RNGLike, df: float = float("inf"), differences_only: bool = False) -> np.ndarray:
    """Draws from ``N(estimate, cov)`` (a parametric bootstrap for Wald intervals), ``(n_draws, n)``;
    with a finite ``df`` from the multivariate t with ``df`` degrees of freedom (a cluster-robust
    covariance over ``G`` clusters: ``df = G - 1``, as its Wald intervals).

    ``cov`` may be singular (centred ratings; a cluster-robust covariance over ``G < n`` clusters
    has rank ``G - 1``): draws use its symmetric square root ``V sqrt(W) V'``, eigenvalues at
    round-off level (below ``n * eps * max(W)``, the rank tolerance of ``numpy.linalg.matrix_rank``)
    set to 0. Unlike the factor ``V sqrt(W)``, whose eigenvectors LAPACK may return with other signs,
    or another basis of a repeated eigenvalue, when ``cov`` changes in its last bits, this root is
    unique: covariances that differ by round-off (the same fit summed in another order, by another
    engine) give draws that differ by round-off, not other draws.

    ``differences_only=True`` (for statistics of differences only, such as rank intervals), from
    :data:`CHOLESKY_MIN_PLAYERS` players: the draws come from the Cholesky factor of
    ``cov + c 11'`` (``c`` the mean variance), which is positive definite where ``cov`` is singular
    only along ``1`` (centred ratings). Each draw then carries one extra common shift, which no
    difference ``x_i - x_j`` sees: the differences have exactly the distribution of ``cov``'s.
    Where the factorisation fails, the eigen-decomposition is used.
    """
    gen = as_generator(rng)
    sym = 0.5 * (np.asarray(cov, float) + np.asarray(cov, float).T)
    n = len(sym)
    factor = None
    if differences_only and n >= CHOLESKY_MIN_PLAYERS:
        c = float(np.trace(sym)) / n
        try:
            factor = np.linalg.cholesky(sym + c)  # + c 11'
        except np.linalg.LinAlgError:
            factor = None
    if factor is None:
        w, v = np.linalg.eigh(sym)
        tol = n * np.finfo(float).eps * max(float(w.max(initial=0.0)), 0.0)
        factor = (v * np.sqrt(np.where(w > tol, w, 0.0))) @ v.T
    z = gen.standard_normal((n_draws, n))
    if np.isfinite(df):
        z /= np.sqrt(gen.chisquare(df, size=(n_draws, 1)) / df)
    return np.asarray(estimate, float) + z @ factor.T


def fit_rank_values(
    fit: BTFit, *, boot: BTBootstrap | None = None, se: CovKind = "sandwich", frame: pd.DataFrame | None = None,
    cluster: str | None = None, level: float = 0.95, rng: RNGLike | None = None,
    max_players: int = RANK_MAX_PLAYERS, cov: np.ndarray | None = None, df: float = float("inf"),
) -> tuple[dict[str, np.ndarray] | None, str]:
    """:func:`rank_values` of a fit, in fit order: from the bootstrap replicates when there are
    at least 20 (a cluster bootstrap's with its small-sample scaling), else 2000 Gaussian draws from
    the fit's ``se`` covariance (``cov`` when the caller already has it; t draws with ``df`` degrees of
    freedom for a cluster-robust one; not computed above ``max_players``, where the columns are skipped)."""
    est = ELO_SCALE * fit.theta
    if boot is not None and len(boot.theta) >= 20:
        reps = boot.elo(base=0.0, small_sample=True, level=level)  # centred, on the scale of est
        how = f"{len(boot.theta)} bootstrap replicates" + (
            f" (deviations scaled by {boot.small_sample_factor(level):.3g})" if boot.clustered else "")
        return rank_values(fit.players, est, replicates=reps,
                           how=how, level=level, max_players=max_players)
    if len(fit.players) > max_players:  # do not compute a covariance that will not be used
        return rank_values(fit.players, est, level=level, max_players=max_players)
    if cov is None:
        cov = fit.covariance(se, frame=frame, cluster=cluster)
    return rank_values(fit.players, est, cov=cov * ELO_SCALE**2, how=se, level=level, rng=rng,
                       max_players=max_players, df=df)


def rank_columns(
    table: pd.DataFrame, fit: BTFit, *, boot: BTBootstrap | None = None, se: CovKind = "sandwich",
    frame: pd.DataFrame | None = None, cluster: str | None = None, level: float = 0.95,
    rng: RNGLike | None = None, max_players: int = RANK_MAX_PLAYERS, cov: np.ndarray | None = None,
) -> pd.DataFrame:
    """Add ``rank_fastchat``, ``rank_low``, ``rank_high`` and ``tie_group`` to a leaderboard.

    ``rank_fastchat`` applies FastChat's rule to the table's own ``ci_low`` / ``ci_high``;
    the simultaneous columns use the bootstrap replicates when given, else ``n_draws = 2000``
    Gaussian draws from the fit's ``se`` covariance (seeded by ``rng``, 0 when None: the
    Wald intervals themselves are deterministic). ``attrs["ranks"]`` says which. Above
    ``max_players`` only ``rank_fastchat`` is filled (the others are NA, and ``attrs`` says so).
    ``cov`` is the fit's centred ``se`` covariance when the caller already has it.
    """
    cols, info = fit_rank_values(fit, boot=boot, se=se, frame=frame, cluster=cluster, level=level, rng=rng,
                                 max_players=max_players, cov=cov)
    return _place(table, fit.players, cols, info)


def rank_values(
    players: tuple[str, ...], estimate: np.ndarray, *, replicates: np.ndarray | None = None,
    cov: np.ndarray | None = None, how: str = "", level: float = 0.95, rng: RNGLike | None = None,
    max_players: int = RANK_MAX_PLAYERS, df: float = float("inf"),
) -> tuple[dict[str, np.ndarray] | None, str]:
    """``rank_low, rank_high, tie_group`` in ``players`` order (None above ``max_players``) and
    the note that says how they were made: the numpy core of :func:`add_rank_columns`."""
    est = np.asarray(estimate, dtype=float)
    if len(est) > max_players:
        return None, (f"simultaneous rank intervals skipped: {len(est)} players > max_players "
                      f"= {max_players} (the cost grows as players^2 x replicates; call "
                      "evalkit.ratings.ranks.rank_intervals directly)")
    if replicates is None:
        if cov is None:
            raise ValueError("Pass bootstrap 'replicates' or a covariance 'cov'.")
        replicates = gaussian_replicates(est, cov, rng=0 if rng is None else rng, df=df, differences_only=True)
        kind = "Gaussian" if not np.isfinite(df) else f"t({df:g})"
        how = f"2000 {kind} draws from the {how + ' ' if how else ''}covariance"
    above, crit = pairwise_dominance(est, replicates, level=level)
    cols = {"rank_low": 1 + above.sum(axis=0), "rank_high": len(est) - above.sum(axis=1),
            "tie_group": tie_groups(est, above)}
    return cols, (f"simultaneous {level:.0%} rank intervals (max-|t| over all pairs, "
                  f"critical value {crit:.3g}) from {how}; rank_fastchat = 1 + models "
                  "whose lower bound is above this model's upper bound")


def add_rank_columns(
    table: pd.DataFrame, players: tuple[str, ...], estimate: np.ndarray, *, replicates: np.ndarray | None = None,
    cov: np.ndarray | None = None, how: str = "", level: float = 0.95, rng: RNGLike | None = None,
    max_players: int = RANK_MAX_PLAYERS, df: float = float("inf"),
) -> pd.DataFrame:
    """:func:`rank_columns` for any fit: ``estimate`` (Elo, in ``players`` order) with bootstrap
    ``replicates`` or a covariance ``cov`` (then 2000 Gaussian draws seeded by ``rng``, 0 when None)."""
    cols, info = rank_values(players, estimate, replicates=replicates, cov=cov, how=how, level=level, rng=rng,
                             max_players=max_players, df=df)
    return _place(table, players, cols, info)


def _place(table: pd.DataFrame, players: tuple[str, ...], cols: dict[str, np.ndarray] | None,
           info: str) -> pd.DataFrame:
    """``table`` with ``rank_fastchat`` and the rank columns (given in ``players`` order; NA when
    skipped) placed on its rows, and ``attrs["ranks"] = info``."""
    import pandas as pd

    out = table.copy()
    out["rank_fastchat"] = fastchat_rank(out["ci_low"].to_numpy(), out["ci_high"].to_numpy())
    if cols is None:
        out["rank_low"], out["rank_high"], out["tie_group"] = pd.NA, pd.NA, pd.NA
    else:
        pos = pd.Index(players).get_indexer(out["model"])
        for name, values in cols.items():
            out[name] = values[pos]
    out.attrs.update(table.attrs, ranks=info)
    return out
