"""Best-so-far scores of each session on a geometric grid of budget checkpoints.

The best-so-far of a session at budget ``b`` is the best score among its submissions with
cumulative budget ``<= b`` (a prefix maximum: it never decreases). A checkpoint before the
session's first submission has no value (``NaN`` here); :mod:`evalkit.budget.games` decides
what such a checkpoint does in a game.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.io.traces import validate_traces

__all__ = ["geometric_grid", "Checkpoints", "best_so_far"]


def geometric_grid(start: float, stop: float, *, ratio: float = 1.5) -> np.ndarray:
    """Budgets ``start * ratio**j`` for ``j = 0, 1, ...`` up to ``stop`` (inclusive, 1e-9 slack).

    Parameters
    ----------
    start, stop : float
        First checkpoint (> 0) and the cap (>= start).
    ratio : float
        Growth factor per step (> 1); the paper uses 1.5.
    """
    if not (np.isfinite(start) and start > 0):
        raise ValueError(f"start must be a finite budget > 0; got {start!r}.")
    if not (np.isfinite(stop) and stop >= start):
        raise ValueError(f"stop must be a finite budget >= start ({start!r}); got {stop!r}.")
    if not (np.isfinite(ratio) and ratio > 1):
        raise ValueError(f"ratio must be > 1 (e.g. 1.5 or 2); got {ratio!r}.")
    n = int(np.floor(np.log(stop / start) / np.log(ratio) + 1e-9)) + 1
    return start * ratio ** np.arange(n, dtype=float)


@dataclass(frozen=True)
class Checkpoints:
    """Best-so-far values of every session at every checkpoint.

    Attributes
    ----------
    sessions : pandas.DataFrame
        One row per session: ``system, task, session`` (row ``k`` is row ``k`` of ``values``).
    budgets : numpy.ndarray
        The checkpoint budgets, shape ``(C,)``, increasing.
    values : numpy.ndarray
        Shape ``(n_sessions, C)``; best-so-far score, ``NaN`` before the first submission.
        Oriented so that higher is better (scores are negated when lower is better).
    """

    sessions: pd.DataFrame
    budgets: np.ndarray
    values: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """Tidy long frame ``system, task, session, budget, best`` (``best`` NaN = no value yet)."""
        n, c = self.values.shape
        out = self.sessions.loc[np.repeat(np.arange(n), c)].reset_index(drop=True)
        out["budget"] = np.tile(self.budgets, n)
        out["best"] = self.values.ravel()
        return out


def best_so_far(
    traces: pd.DataFrame,
    budgets: np.ndarray | None = None,
    *,
    ratio: float = 1.5,
    start: float | None = None,
    stop: float | None = None,
    higher_is_better: bool = True,
) -> Checkpoints:
    """Best-so-far of every session at every checkpoint budget (vectorised, no row loops).

    Parameters
    ----------
    traces : pandas.DataFrame
        A session table (see :mod:`evalkit.io.traces`); validated here.
    budgets : array_like, optional
        Explicit checkpoints. Default: :func:`geometric_grid` from ``start`` (default: the
        smallest submission budget) to ``stop`` (default: the largest) with ``ratio``.
    ratio, start, stop : float
        Grid options used when ``budgets`` is not given.
    higher_is_better : bool
        When False the best score is the smallest (values are negated internally).

    Returns
    -------
    Checkpoints
    """
    tr = validate_traces(traces)
    if budgets is None:
        lo = float(tr["budget"].min()) if start is None else float(start)
        if lo <= 0:
            positive = tr["budget"].to_numpy()[tr["budget"].to_numpy() > 0]
            if positive.size == 0:
                raise ValueError("Every submission has budget 0; pass explicit budgets.")
            lo = float(positive.min())
        hi = float(tr["budget"].max()) if stop is None else float(stop)
        grid = geometric_grid(lo, max(hi, lo), ratio=ratio)
    else:
        grid = np.asarray(budgets, dtype=float).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0):
            raise ValueError("budgets must be a non-empty, finite, strictly increasing array.")
    keys = tr[["system", "task", "session"]]
    codes, uniques = pd.MultiIndex.from_frame(keys).factorize()
    sessions = uniques.to_frame(index=False, name=["system", "task", "session"])
    n, c = len(sessions), grid.size
    score = tr["score"].to_numpy(dtype=float) * (1.0 if higher_is_better else -1.0)
    # Merge submissions and queries, sort by (session, budget, submissions first), then a
    # running max with forward fill inside each session answers every query.
    s_all = np.concatenate([codes, np.repeat(np.arange(n), c)])
    b_all = np.concatenate([tr["budget"].to_numpy(dtype=float), np.tile(grid, n)])
    kind = np.concatenate([np.zeros(len(tr), dtype=np.int8), np.ones(n * c, dtype=np.int8)])
    v_all = np.concatenate([score, np.full(n * c, np.nan)])
    order = np.lexsort((kind, b_all, s_all))
    ser = pd.Series(v_all[order])
    grp = s_all[order]
    run = ser.groupby(grp).cummax().groupby(grp).ffill().to_numpy()
    is_query = kind[order] == 1
    # Queries come out sorted by (session, budget) = row-major (n, c).
    values = run[is_query].reshape(n, c)
    return Checkpoints(sessions=sessions, budgets=grid, values=values)
