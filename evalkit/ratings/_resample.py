"""How a bootstrap replicate resamples: units (cells or clusters) drawn by one multinomial,
summed into per-pair win / loss / tie counts by one gather and ``reduceat`` (no rows touched).

Rows: the units are the cells of a :class:`~evalkit.io.counts.ComparisonCounts`, drawn with
probability ``weight / W``; clusters: ``G`` units with equal probabilities, each adding its
summed counts. Used by :func:`evalkit.ratings.bootstrap_bt`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalkit.ratings.counts import encode_players, split_outcomes

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.ratings.bt import BTFit

__all__ = ["Draws", "UnitSums", "resampling_units"]

_MAX_CELLS = 4_000_000  # floats per gathered block (replicates x entries)


class Draws:
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


def resampling_units(
    frame: pd.DataFrame, fit: BTFit, cluster: str | None
) -> tuple[UnitSums, Draws]:
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
        return _sums(rows, pidx, (wi, wj, tie), k), Draws(weight / total, draws_n, total / draws_n)
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
    import pandas as pd
    from scipy.sparse import coo_matrix

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
    sums = UnitSums(merged.col.astype(np.int64), merged.row.astype(np.int64), merged.data, 3 * k)
    return sums, Draws(np.full(n_units, 1.0 / n_units), n_units, 1.0)


class UnitSums:
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


def _sums(rows: np.ndarray, cols: np.ndarray, vals: tuple, k: int) -> UnitSums:
    """:class:`UnitSums` for units ``rows`` adding ``vals`` (wins_i, wins_j, ties) to pairs ``cols``."""
    stat = np.concatenate([cols, cols + k, cols + 2 * k])
    return UnitSums(stat, np.tile(rows, 3), np.concatenate(vals), 3 * k)
