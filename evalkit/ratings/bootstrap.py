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

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from evalkit._progress import ProgressFn, tick
from evalkit._rng import RNGLike, as_generator
from evalkit.io.counts import ComparisonCounts
from evalkit.ratings._linalg import dense, pinv_centred
from evalkit.ratings.bt import BTFit, TiesMode, fit_bt
from evalkit.ratings.counts import PairCounts, aggregate, as_cells, encode_players, split_outcomes
from evalkit.ratings.elo import theta_to_elo
from evalkit.ratings.existence import divergent_models, exists_batch

__all__ = ["BTBootstrap", "bootstrap_bt"]

_MAX_CELLS = 4_000_000  # floats per batch array (b * n_pairs)


@dataclass(frozen=True)
class BTBootstrap:
    """Bootstrap replicates of a Bradley–Terry fit.

    Attributes
    ----------
    fit : BTFit
        The full-data fit (the point estimate).
    theta : numpy.ndarray
        ``(n_valid, n_players)`` centred strengths of the replicates that have an estimate.
    n_boot : int
        Replicates drawn.
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
    n_boot: int
    n_degenerate: int
    never_lose: np.ndarray = field(repr=False)
    never_win: np.ndarray = field(repr=False)
    unit: str
    n_units: int

    @property
    def degenerate_fraction(self) -> float:
        """Share of replicates without a finite estimate."""
        return self.n_degenerate / self.n_boot if self.n_boot else 0.0

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
                f"None of the {self.n_boot} bootstrap replicates has finite ratings; "
                "use an L2 prior (l2=...) or more data."
            )
        reps = self.elo(base=base, anchor=anchor)
        lo, hi = np.quantile(reps, [0.5 - level / 2, 0.5 + level / 2], axis=0)
        return lo, hi


class _Draws:
    """How a replicate resamples: a multinomial over the units with ``n`` draws.

    Rows: the units are the cells, drawn with probability ``weight / W`` and ``n = round(W)``
    draws (``W`` the total weight; frequency weights, so a cell of weight 3 is three rows);
    each draw adds ``W / n`` times the cell's per-comparison counts (exactly 1 for integer
    weights; for non-integer weights the replicate keeps the total weight ``W``).
    Clusters: ``G`` draws, each cluster with probability ``1 / G``, adding its summed counts.
    """

    def __init__(self, probs: np.ndarray, n: int, scale: float) -> None:
        self.probs, self.n, self.scale = probs, n, scale

    def __call__(self, gen: np.random.Generator, size: int) -> np.ndarray:
        draws = gen.multinomial(self.n, self.probs, size=size).astype(float)
        if self.scale != 1.0:
            draws *= self.scale
        return draws


def _units(
    frame: pd.DataFrame, fit: BTFit, cluster: str | None
) -> tuple[_UnitSums, _Draws]:
    """Resampling units (cells, or clusters) as pair sums, and how a replicate draws them."""
    players, a, b = encode_players(frame["player_a"].to_numpy(), frame["player_b"].to_numpy())
    if players != fit.players:
        raise ValueError("'fit' was made on other players than the frame's; refit on this frame.")
    c = fit.counts
    n = len(players)
    weight = frame["weight"].to_numpy(float)
    win, loss, tie = split_outcomes(frame["outcome"].to_numpy(float), np.ones(len(weight)))
    swap = a > b
    key = np.where(swap, b, a) * n + np.where(swap, a, b)
    pidx = np.searchsorted(c.i * n + c.j, key)
    wi, wj = np.where(swap, loss, win), np.where(swap, win, loss)
    k = len(c.i)
    if cluster is None:
        total = float(weight.sum())
        draws_n = max(1, int(round(total)))
        rows = np.arange(len(weight))
        return _sums(rows, pidx, (wi, wj, tie), k), _Draws(weight / total, draws_n, total / draws_n)
    if cluster not in frame.columns:
        raise ValueError(
            f"The cluster column {cluster!r} is not in the frame; it has {list(frame.columns)}."
        )
    col = frame[cluster]
    if col.isna().any():
        bad = col.isna().to_numpy()
        raise ValueError(
            f"The cluster column {cluster!r} is missing in {int(bad.sum())} rows (first at row "
            f"{int(np.argmax(bad)) + 1}); every row needs a cluster to resample clusters."
        )
    unit = pd.factorize(col.astype(str), sort=True)[0]
    n_units = int(unit.max()) + 1
    # one entry per (cluster, statistic): merge the cells of a cluster first
    merged = (
        coo_matrix(
            (
                np.concatenate([wi * weight, wj * weight, tie * weight]),
                (np.tile(unit, 3), np.concatenate([pidx, pidx + k, pidx + 2 * k])),
            ),
            shape=(n_units, 3 * k),
        )
        .tocsr()
        .tocoo()
    )
    sums = _UnitSums(merged.col.astype(np.int64), merged.row.astype(np.int64), merged.data, 3 * k)
    return sums, _Draws(np.full(n_units, 1.0 / n_units), n_units, 1.0)


class _UnitSums:
    """Replicate sums of unit contributions, ``(b, U) -> (b, 3K)``, without a sparse product.

    Each nonzero contribution (unit ``u`` adds ``value`` to statistic ``stat`` in
    ``0..3K-1``: wins_i, wins_j, ties per pair) is an entry; entries are sorted by
    statistic so that one gather and one ``np.add.reduceat`` give all sums.
    """

    def __init__(self, stat: np.ndarray, unit: np.ndarray, value: np.ndarray, n_stats: int) -> None:
        keep = value != 0
        order = np.argsort(stat[keep], kind="stable")
        self.unit = unit[keep][order]
        self.value = value[keep][order]
        self.ones = bool(np.all(self.value == 1.0))
        stat = stat[keep][order]
        self.starts = np.searchsorted(stat, np.arange(n_stats))
        self.empty = self.starts == np.append(self.starts[1:], len(stat))
        self.starts = np.minimum(self.starts, max(len(stat) - 1, 0))

    def __call__(self, draws: np.ndarray) -> np.ndarray:
        # a few replicates at a time: the gathered (replicates x entries) block stays ~_MAX_CELLS
        step = max(1, _MAX_CELLS // max(len(self.unit), 1))
        out = np.empty((draws.shape[0], len(self.starts)))
        for lo in range(0, draws.shape[0], step):
            picked = draws[lo:lo + step, self.unit]
            if not self.ones:
                picked *= self.value
            out[lo:lo + step] = np.add.reduceat(picked, self.starts, axis=1)
        out[:, self.empty] = 0.0
        return out


def _sums(rows: np.ndarray, cols: np.ndarray, vals: tuple, k: int) -> _UnitSums:
    """:class:`_UnitSums` for units ``rows`` adding ``vals`` (wins_i, wins_j, ties) to pairs ``cols``."""
    stat = np.concatenate([cols, cols + k, cols + 2 * k])
    return _UnitSums(stat, np.tile(rows, 3), np.concatenate(vals), 3 * k)


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


def _incidence(i: np.ndarray, j: np.ndarray, n: int):
    """Sparse ``n x K`` matrix with ``+1`` at ``(i_k, k)`` and ``-1`` at ``(j_k, k)``."""
    k = len(i)
    return coo_matrix(
        (
            np.concatenate([np.ones(k), -np.ones(k)]),
            (np.concatenate([i, j]), np.tile(np.arange(k), 2)),
        ),
        shape=(n, k),
    ).tocsr()


def _batched_newton(i, j, w, lo, theta0, h_inv0, l2, tol, max_iter):
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


def bootstrap_bt(
    frame: pd.DataFrame | ComparisonCounts,
    *,
    n_boot: int = 1000,
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
    n_boot : int, default 1000
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
        ``progress("bootstrap", done, n_boot)`` after each batch of replicates.

    Returns
    -------
    BTBootstrap
        Replicates that have no finite estimate are counted in ``n_degenerate`` (with
        the models responsible in ``never_lose`` / ``never_win``) and left out of ``theta``.
    """
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"'n_boot' must be a positive integer; got {n_boot!r}.")
    cells = as_cells(frame, cluster=cluster)
    frame = cells.cells
    gen = as_generator(rng)
    if fit is None:
        fit = fit_bt(aggregate(cells), ties=ties, l2=l2)
    ties, l2 = fit.ties, fit.l2
    sums, draw = _units(frame, fit, cluster)
    c = fit.counts
    n, k = len(c.players), len(c.i)
    h_inv0 = (
        pinv_centred(dense(fit.information)[:n, :n], n, singular=l2 == 0) if ties != "davidson" else None
    )
    batch = int(max(1, min(n_boot, _MAX_CELLS // max(n, 3 * k))))
    thetas, n_bad = [], 0
    backbone = _backbone(c, ties) if l2 == 0 else None
    never_lose = np.zeros(n, dtype=np.int64)
    never_win = np.zeros(n, dtype=np.int64)
    tick(progress, "bootstrap", 0, n_boot)
    for start in range(0, n_boot, batch):
        size = min(batch, n_boot - start)
        draws = draw(gen, size)  # (size, units): multinomial counts of cells or clusters
        stats = sums(draws)  # (size, 3K)
        wi, wj, tt = stats[:, :k], stats[:, k : 2 * k], stats[:, 2 * k :]
        ok = np.ones(size, dtype=bool)
        if l2 == 0:
            ok = _replicates_exist(c, backbone, wi, wj, tt, ties)
        for r in np.flatnonzero(~ok):
            lose, win = divergent_models(
                PairCounts(c.players, c.i, c.j, wi[r], wj[r], tt[r]), ties=ties
            )
            never_lose[lose] += 1
            never_win[win] += 1
        n_bad += int((~ok).sum())
        if not ok.any():
            continue
        wi, wj, tt = wi[ok], wj[ok], tt[ok]
        if ties == "davidson":
            th = np.array(
                [
                    fit_bt(
                        PairCounts(c.players, c.i, c.j, wi[r], wj[r], tt[r]),
                        ties=ties,
                        l2=l2,
                        check=False,
                        init=fit.theta,
                    ).theta
                    for r in range(len(wi))
                ]
            )
        else:
            half = 0.5 * tt if ties == "half" else 0.0
            th, conv = _batched_newton(
                c.i, c.j, wi + half, wj + half, fit.theta, h_inv0, l2, tol, max_iter
            )
            for r in np.flatnonzero(~conv):  # rare: refit with the damped single solver
                rep = PairCounts(c.players, c.i, c.j, wi[r], wj[r], tt[r])
                th[r] = fit_bt(rep, ties=ties, l2=l2, check=False).theta
        thetas.append(th)
        tick(progress, "bootstrap", start + size, n_boot)
    theta = np.concatenate(thetas) if thetas else np.zeros((0, n))
    return BTBootstrap(
        fit=fit,
        theta=theta,
        n_boot=int(n_boot),
        n_degenerate=n_bad,
        never_lose=never_lose,
        never_win=never_win,
        unit="comparison" if cluster is None else cluster,
        n_units=draw.n,
    )
