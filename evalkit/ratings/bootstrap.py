"""Seeded, vectorised, warm-started bootstrap of Bradley–Terry strengths.

Resampling units are comparisons (rows) or clusters of rows (an ``item`` / ``judge`` /
``prompt`` column). The data arrive as cells (:class:`~evalkit.io.counts.ComparisonCounts`:
identical rows merged, weights as frequency weights), so a replicate is one multinomial
draw over the cells (``N`` = the total weight, rounded; probabilities ``weight / N``) or
over the clusters (``G`` draws, equal probabilities), and the unit counts become pair counts
by one gather + ``reduceat``. Rows are never touched.
Replicates are fitted in batches by a quasi-Newton (chord) iteration with the full-data
information, started at the full-data estimate and accelerated by Anderson mixing (the
point estimate always comes from the full fit). A replicate in which some model never
loses (or never wins, or is absent) has no finite maximum-likelihood estimate: it is not
fitted, it is counted, and the models responsible are counted per model, instead of
entering the percentiles as a +/- 3000 Elo outlier. Existence is checked exactly: a
cheap sufficient test on a backbone of two-way pairs, then strongly connected
components for the replicates that fail it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evalkit._deprecate import renamed_keywords
from evalkit._progress import ProgressFn, tick
from evalkit._rng import RNGLike, as_generator
from evalkit.io.counts import ComparisonCounts
from evalkit.ratings._batched import batched_newton
from evalkit.ratings._linalg import dense, pinv_centred
from evalkit.ratings._resample import _MAX_CELLS, resampling_units
from evalkit.ratings.bt import BTFit, TiesMode, fit_bt
from evalkit.ratings.counts import PairCounts, aggregate, as_cells
from evalkit.ratings.elo import theta_to_elo
from evalkit.ratings.existence import divergent_models, exists_batch

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BTBootstrap", "bootstrap_bt"]

@dataclass(frozen=True)
class BTBootstrap:
    """Bootstrap replicates of a Bradley–Terry fit.

    Attributes
    ----------
    fit : BTFit
        The full-data fit (the point estimate).
    theta : numpy.ndarray
        ``(n_valid, n_players)`` centred strengths of the replicates that have an estimate.
    n_resamples : int
        Replicates drawn (``n_boot``: the old name, deprecated).
    n_degenerate : int
        Replicates without a finite estimate (not in ``theta``).
    never_lose, never_win : numpy.ndarray of int
        Per player: in how many degenerate replicates it never lost / never won (or
        tied) against the models outside its group (absent players count in both).
    unit : str
        ``"comparison"`` or the cluster column.
    n_units : int
        Number of resampled units (rows or clusters).
    """

    fit: BTFit = field(repr=False)
    theta: np.ndarray = field(repr=False)
    n_resamples: int
    n_degenerate: int
    never_lose: np.ndarray = field(repr=False)
    never_win: np.ndarray = field(repr=False)
    unit: str
    n_units: int

    @property
    def n_boot(self) -> int:
        """Deprecated name of :attr:`n_resamples`."""
        warnings.warn("BTBootstrap.n_boot is deprecated and will be removed in evalkit 0.3; use n_resamples.",
                      DeprecationWarning, stacklevel=2)
        return self.n_resamples

    @property
    def degenerate_fraction(self) -> float:
        """Share of replicates without a finite estimate."""
        return self.n_degenerate / self.n_resamples if self.n_resamples else 0.0

    def elo(self, *, base: float = 1000.0, anchor: str | None = None) -> np.ndarray:
        """Replicates on the Elo scale, ``(n_valid, n_players)``, centred or anchored."""
        return theta_to_elo(self.theta, self.fit.players, base=base, anchor=anchor)

    def confidence_interval(
        self, level: float = 0.95, *, base: float = 1000.0, anchor: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Percentile interval of each player's Elo (centred, or difference with ``anchor``).

        Raises
        ------
        ValueError
            When no replicate had an estimate.
        """
        if not 0 < level < 1:
            raise ValueError(f"'level' must be in (0, 1); got {level!r}.")
        if len(self.theta) == 0:
            raise ValueError(
                f"None of the {self.n_resamples} bootstrap replicates has finite ratings; "
                "use an L2 prior (l2=...) or more data."
            )
        reps = self.elo(base=base, anchor=anchor)
        lo, hi = np.quantile(reps, [0.5 - level / 2, 0.5 + level / 2], axis=0)
        return lo, hi


def _backbone(c: PairCounts, ties: str, per_player: int = 4) -> np.ndarray:
    """Pairs most likely to stay two-way in a replicate: each player's ``per_player`` best.

    "Best" = largest ``min(wins_i + ties, wins_j + ties)`` (support in both directions).
    """
    tie = c.ties if ties != "drop" else 0.0
    both = np.minimum(c.wins_i + tie, c.wins_j + tie)
    pair = np.flatnonzero(both > 0)
    node = np.concatenate([c.i[pair], c.j[pair]])
    cand = np.concatenate([pair, pair])
    order = np.lexsort((-both[cand], node))
    node, cand = node[order], cand[order]
    start = np.searchsorted(node, node)  # first position of each player's run
    rank = np.arange(len(node)) - start
    return np.unique(cand[rank < per_player])


def _replicates_exist(c: PairCounts, backbone: np.ndarray, wi, wj, tt, ties: str) -> np.ndarray:
    """Whether each replicate has a finite MLE (exact).

    Fast sufficient test first: if the backbone pairs that stayed two-way in the replicate
    connect all players, the beat-or-tie graph is strongly connected. Replicates failing
    it get the full strongly-connected-components check.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    b, n = wi.shape[0], c.n_players
    tie = tt[:, backbone] > 0 if ties != "drop" else False
    two_way = ((wi[:, backbone] > 0) | tie) & ((wj[:, backbone] > 0) | tie)
    rep, e = np.nonzero(two_way)
    graph = coo_matrix(
        (np.ones(len(rep)), (rep * n + c.i[backbone][e], rep * n + c.j[backbone][e])),
        shape=(b * n, b * n),
    ).tocsr()
    labels = connected_components(graph, directed=False)[1].reshape(b, n)
    ok = (labels == labels[:, :1]).all(axis=1)
    if not ok.all():
        idx = np.flatnonzero(~ok)
        ok[idx] = exists_batch(c.i, c.j, wi[idx], wj[idx], tt[idx], n, tie_edges=ties != "drop")
    return ok


@renamed_keywords(n_boot="n_resamples")
def bootstrap_bt(
    frame: pd.DataFrame | ComparisonCounts,
    *,
    n_resamples: int = 1000,
    rng: RNGLike,
    cluster: str | None = None,
    ties: TiesMode = "half",
    l2: float = 0.0,
    fit: BTFit | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    progress: ProgressFn | None = None,
) -> BTBootstrap:
    """Bootstrap a Bradley–Terry fit by resampling comparisons or clusters.

    Parameters
    ----------
    frame : pandas.DataFrame or ComparisonCounts
        Canonical comparisons frame, or its cells (with the ``cluster`` column when
        resampling clusters).
    n_resamples : int, default 1000
        Number of replicates.
    rng : int, SeedSequence or numpy.random.Generator
        Seed or generator (required: same seed, identical replicates).
    cluster : str, optional
        Column whose values are resampled as blocks (e.g. ``"item"``, ``"judge"``),
        for comparisons that are not independent. Default: resample rows.
    ties, l2
        As in :func:`evalkit.ratings.fit_bt`.
    fit : BTFit, optional
        The full-data fit, if already made (its options are used).
    tol, max_iter
        Convergence of the replicate fits (largest step in theta; 1e-6 is 4e-5 Elo),
        warm-started at the full fit.
    progress : callable, optional
        ``progress("bootstrap", done, n_resamples)`` after each batch of replicates.

    Returns
    -------
    BTBootstrap
        Replicates that have no finite estimate are counted in ``n_degenerate`` (with
        the models responsible in ``never_lose`` / ``never_win``) and left out of ``theta``.
    """
    if int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"'n_resamples' must be a positive integer; got {n_resamples!r}.")
    cells = as_cells(frame, cluster=cluster)
    gen = as_generator(rng)
    if fit is None:
        fit = fit_bt(aggregate(cells), ties=ties, l2=l2)
    sums, draw = resampling_units(cells.cells, fit, cluster)
    c = fit.counts
    n, k = len(c.players), len(c.i)
    h_inv0 = (pinv_centred(dense(fit.information)[:n, :n], n, singular=fit.l2 == 0)
              if fit.ties != "davidson" else None)
    batch = int(max(1, min(n_resamples, _MAX_CELLS // max(n, 3 * k))))
    backbone = _backbone(c, fit.ties) if fit.l2 == 0 else None
    thetas, n_bad = [], 0
    never = np.zeros((2, n), dtype=np.int64)  # never_lose, never_win counts per model
    tick(progress, "bootstrap", 0, n_resamples)
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        stats = sums(draw(gen, size))  # (size, 3K) pair sums of the multinomial unit counts
        wi, wj, tt = stats[:, :k], stats[:, k : 2 * k], stats[:, 2 * k :]
        ok = np.ones(size, dtype=bool) if backbone is None else _replicates_exist(c, backbone, wi, wj, tt, fit.ties)
        _count_divergent(c, wi[~ok], wj[~ok], tt[~ok], fit.ties, never)
        n_bad += int((~ok).sum())
        if ok.any():
            thetas.append(_fit_replicates(fit, wi[ok], wj[ok], tt[ok], h_inv0, tol=tol, max_iter=max_iter))
        tick(progress, "bootstrap", start + size, n_resamples)
    theta = np.concatenate(thetas) if thetas else np.zeros((0, n))
    return BTBootstrap(fit=fit, theta=theta, n_resamples=int(n_resamples), n_degenerate=n_bad, never_lose=never[0],
                       never_win=never[1], unit="comparison" if cluster is None else cluster, n_units=draw.n)


def _count_divergent(c: PairCounts, wi: np.ndarray, wj: np.ndarray, tt: np.ndarray, ties: str,
                     never: np.ndarray) -> None:
    """Add the models that never lose (``never[0]``) or never win (``never[1]``) in each of
    these replicates (the ones without a finite estimate)."""
    for r in range(len(wi)):
        lose, win = divergent_models(PairCounts(c.players, c.i, c.j, wi[r], wj[r], tt[r]), ties=ties)
        never[0, lose] += 1
        never[1, win] += 1


def _fit_replicates(fit: BTFit, wi: np.ndarray, wj: np.ndarray, tt: np.ndarray, h_inv0: np.ndarray | None,
                    *, tol: float, max_iter: int) -> np.ndarray:
    """Strengths of replicates with a finite estimate, ``(b, n)``: the batched chord iteration
    (Davidson ties: one warm-started fit each); the rare replicate it does not converge is
    refitted by the damped single solver."""
    c = fit.counts

    def single(r: int, **kw) -> np.ndarray:
        rep = PairCounts(c.players, c.i, c.j, wi[r], wj[r], tt[r])
        return fit_bt(rep, ties=fit.ties, l2=fit.l2, check=False, **kw).theta

    if fit.ties == "davidson":
        return np.array([single(r, init=fit.theta) for r in range(len(wi))])
    half = 0.5 * tt if fit.ties == "half" else 0.0
    th, conv = batched_newton(c.i, c.j, wi + half, wj + half, fit.theta, h_inv0, fit.l2, tol, max_iter)
    for r in np.flatnonzero(~conv):
        th[r] = single(int(r))
    return th
