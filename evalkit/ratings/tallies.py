"""Rating-free summaries of pair counts, with evalica's definitions: counting, win-rate matrix
and average win rate (per-model wins / losses / ties are :func:`evalkit.summary.summarize`).

All take :class:`~evalkit.ratings.counts.PairCounts` and return pandas objects indexed
by model name (the order of ``counts.players``). A tie is worth ``tie_weight`` (half a
win by default) to each side; a continuous outcome ``o`` is ``o`` of a win for one side
and ``1 - o`` for the other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.io.counts import ComparisonCounts
from evalkit.ratings.counts import PairCounts, aggregate

__all__ = ["counting", "win_rate_matrix", "average_win_rate"]


def _per_player(counts: PairCounts, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``sum`` of ``left`` over pairs where the player is ``i`` plus ``right`` where it is ``j``."""
    n = counts.n_players
    return np.bincount(counts.i, weights=left, minlength=n) + np.bincount(
        counts.j, weights=right, minlength=n
    )


def counting(counts: PairCounts, *, win_weight: float = 1.0, tie_weight: float = 0.5) -> pd.Series:
    """Weighted number of wins per model: ``win_weight * wins + tie_weight * ties`` (evalica's ``counting``).

    Returns
    -------
    pandas.Series
        Indexed by model, named ``"counting"``.
    """
    c = counts
    score = _per_player(
        c, win_weight * c.wins_i + tie_weight * c.ties, win_weight * c.wins_j + tie_weight * c.ties
    )
    return pd.Series(score, index=pd.Index(c.players, name="model"), name="counting")


def win_rate_matrix(counts: PairCounts | pd.DataFrame | ComparisonCounts, *,
                    tie_weight: float = 0.5) -> pd.DataFrame:
    """Pairwise win rates: row model's share of the points against the column model.

    ``(wins + tie_weight * ties) / (wins + losses + 2 * tie_weight * ties)`` for every pair
    that met; NaN where two models never met and on the diagonal. ``counts`` may also be a
    canonical comparisons frame or its cells (aggregated with :func:`evalkit.ratings.aggregate`).
    """
    c = counts if isinstance(counts, PairCounts) else aggregate(counts)
    n = c.n_players
    a = c.wins_i + tie_weight * c.ties
    b = c.wins_j + tie_weight * c.ties
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = a / (a + b)
    mat = np.full((n, n), np.nan)
    mat[c.i, c.j] = rate
    mat[c.j, c.i] = 1.0 - rate
    idx = pd.Index(c.players, name="model")
    return pd.DataFrame(mat, index=idx, columns=pd.Index(c.players, name="opponent"))


def average_win_rate(counts: PairCounts, *, tie_weight: float = 0.5) -> pd.Series:
    """Mean of a model's win rates over the opponents it met (evalica's ``average_win_rate``; 0 if none)."""
    mat = win_rate_matrix(counts, tie_weight=tie_weight).to_numpy()
    met = np.isfinite(mat)
    total = np.where(met, mat, 0.0).sum(axis=1)
    n_met = met.sum(axis=1)
    score = np.divide(total, n_met, out=np.zeros_like(total), where=n_met > 0)
    return pd.Series(score, index=pd.Index(counts.players, name="model"), name="average_win_rate")
