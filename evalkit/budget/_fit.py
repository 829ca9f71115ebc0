"""Glue between game counts and :func:`evalkit.ratings.fit_bt` (no second Bradley–Terry fit).

What this module adds on top of ``fit_bt``: players without games are left out of the fit
(their rating is ``NaN``), the optional symmetric pseudo-game prior of the paper is added to
the counts, ratings are returned on the Elo scale anchored at one player, and bootstrap
replicates are fitted warm-started from the point estimate, with failures counted.
"""

from __future__ import annotations

import numpy as np

from evalkit.ratings.bt import TiesMode, fit_bt
from evalkit.ratings.counts import PairCounts
from evalkit.ratings.existence import exists_batch

__all__ = ["ELO_PER_NAT", "fit_elo", "fit_elo_replicates"]

ELO_PER_NAT = 400.0 / np.log(10.0)


def _pair_counts(wins: np.ndarray, ties: np.ndarray, active: np.ndarray, prior: float) -> PairCounts:
    """PairCounts over the active players from ordered win and symmetric tie matrices."""
    idx = np.flatnonzero(active)
    w = wins[np.ix_(idx, idx)]
    t = ties[np.ix_(idx, idx)]
    i, j = np.triu_indices(idx.size, k=1)
    wi, wj, tt = w[i, j], w[j, i], t[i, j]
    if prior > 0:
        wi = wi + prior / 2.0
        wj = wj + prior / 2.0
    keep = (wi + wj + tt) > 0
    return PairCounts(
        players=tuple(str(k) for k in idx),
        i=i[keep].astype(np.int64),
        j=j[keep].astype(np.int64),
        wins_i=wi[keep],
        wins_j=wj[keep],
        ties=tt[keep],
    )


def fit_elo(
    wins: np.ndarray,
    ties: np.ndarray,
    *,
    anchors: np.ndarray,
    ties_mode: TiesMode = "half",
    prior: float = 0.0,
    init: np.ndarray | None = None,
    strict: bool = True,
) -> tuple[np.ndarray, bool]:
    """Elo ratings (anchor = 1000) of one replicate's counts.

    Parameters
    ----------
    wins, ties : numpy.ndarray
        ``(P, P)`` ordered wins and symmetric ties.
    anchors : numpy.ndarray of int
        Candidate anchor players in order of preference; the first one with games is the
        anchor (rated exactly 1000).
    ties_mode : {"half", "drop", "davidson"}
        Passed to :func:`~evalkit.ratings.fit_bt`.
    prior : float
        Symmetric pseudo-games added to every pair of active players (half a win each).
    init : numpy.ndarray, optional
        Warm start on the theta scale, shape ``(P,)`` (NaN entries ignored).
    strict : bool
        Raise (True) or return all-NaN (False) when the ratings do not exist.

    Returns
    -------
    elo : numpy.ndarray
        ``(P,)`` Elo ratings, NaN for players without games.
    converged : bool
    """
    n = wins.shape[0]
    games = wins.sum(axis=1) + wins.sum(axis=0) + ties.sum(axis=1)
    active = games > 0
    out = np.full(n, np.nan)
    if active.sum() < 2:
        if strict:
            raise ValueError(
                "Fewer than two (system, checkpoint) players have games, so there is nothing to "
                "rate: a game needs observations with a value from two sessions of one task. Logs "
                "with a single final submission per session have no value before it: pass "
                "missing='lose' (CLI --missing lose), a later grid start, or more sessions."
            )
        return out, False
    counts = _pair_counts(wins, ties, active, prior)
    start = None
    if init is not None:
        start = np.nan_to_num(np.asarray(init, dtype=float)[active], nan=0.0)
    try:
        fit = fit_bt(counts, ties=ties_mode, check=prior == 0, init=start)
    except ValueError as exc:
        if strict:
            raise ValueError(
                f"{exc} In an Elo-per-budget curve this happens when a checkpoint (often the "
                "first or last) wins or loses every game: use more sessions or tasks, start "
                "the grid later, or pass prior=... (symmetric pseudo-games per pair)."
            ) from exc
        return out, False
    theta = np.full(n, np.nan)
    theta[active] = fit.theta
    anchor = next((int(a) for a in anchors if active[a]), None)
    if anchor is None:
        if strict:
            raise ValueError("No anchor checkpoint has any game; cannot place the Elo scale.")
        return out, False
    out = 1000.0 + ELO_PER_NAT * (theta - theta[anchor])
    return out, fit.converged


def fit_elo_replicates(
    wins: np.ndarray,
    ties: np.ndarray,
    *,
    anchors: np.ndarray,
    init_elo: np.ndarray,
    ties_mode: TiesMode = "half",
    prior: float = 0.0,
) -> tuple[np.ndarray, int]:
    """Elo of every bootstrap replicate, ``(R, P)``; failed replicates are all-NaN rows.

    Fast path: the players rated in the point estimate (``init_elo`` finite) and one batched
    existence check (:func:`evalkit.ratings.existence.exists_batch`) for all replicates, then
    :func:`~evalkit.ratings.fit_bt` warm-started at the point estimate without its
    per-fit check. Replicates in which the ratings of that player set do not exist (e.g. a
    checkpoint lost all its games) go through :func:`fit_elo` with their own player set, still
    anchored at the point estimate's anchor. A replicate that does not converge, or in which the
    anchor has no game, counts as failed.

    Returns
    -------
    elo : numpy.ndarray
    n_failed : int
    """
    r_count, n = wins.shape[0], wins.shape[1]
    out = np.full((r_count, n), np.nan)
    if r_count == 0:
        return out, 0
    active = np.isfinite(init_elo)
    idx = np.flatnonzero(active)
    anchor = next(int(a) for a in anchors if active[a])
    ii, jj = np.triu_indices(idx.size, k=1)
    wi = wins[:, idx[ii], idx[jj]] + prior / 2.0
    wj = wins[:, idx[jj], idx[ii]] + prior / 2.0
    tt = ties[:, idx[ii], idx[jj]]
    used = (wi + wj + tt).sum(axis=0) > 0
    ii, jj, wi, wj, tt = ii[used], jj[used], wi[:, used], wj[:, used], tt[:, used]
    ok = np.ones(r_count, dtype=bool)
    if prior == 0:
        ok = exists_batch(ii, jj, wi, wj, tt, idx.size, tie_edges=ties_mode != "drop")
    players = tuple(str(k) for k in idx)
    theta0 = (init_elo[idx] - 1000.0) / ELO_PER_NAT
    a_pos = int(np.searchsorted(idx, anchor))
    failed = 0
    for r in range(r_count):
        if ok[r]:
            counts = PairCounts(players=players, i=ii, j=jj, wins_i=wi[r], wins_j=wj[r], ties=tt[r])
            try:
                fit = fit_bt(counts, ties=ties_mode, check=False, init=theta0)
            except ValueError:  # e.g. Davidson on a replicate without ties
                failed += 1
                continue
            if fit.converged and np.all(np.isfinite(fit.theta)):
                out[r, idx] = 1000.0 + ELO_PER_NAT * (fit.theta - fit.theta[a_pos])
                continue
        # only the point estimate's anchor: a replicate re-anchored at a later checkpoint would
        # put a different scale into the percentile bands; without a game there it fails (counted)
        elo, conv = fit_elo(wins[r], ties[r], anchors=np.array([anchor]), ties_mode=ties_mode, prior=prior,
                            init=(init_elo - 1000.0) / ELO_PER_NAT, strict=False)
        if conv:
            out[r] = elo
        else:
            failed += 1
    return out, failed
