"""Sufficient statistics of a comparisons frame: weighted win / loss / tie counts per pair.

Every rating fit in :mod:`evalkit.ratings` reads a :class:`PairCounts`, never the rows:
a Bradley–Terry likelihood depends on the data only through these counts, so a fit on
a million comparisons among 100 models is a fit on at most 4,950 pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from evalkit.io.counts import ComparisonCounts, encode_players  # encode_players re-exported here

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PairCounts", "aggregate", "as_cells", "encode_players"]

# Outcomes within this distance of 0.5 count as ties, of 0 / 1 as losses / wins.
_TIE_TOL = 1e-12


@dataclass(frozen=True)
class PairCounts:
    """Weighted counts per unordered pair of players.

    Attributes
    ----------
    players : tuple of str
        Player names; index ``k`` in ``i`` / ``j`` refers to ``players[k]``.
    i, j : numpy.ndarray of int64
        Player indices of each pair, ``i < j``, each pair at most once.
    wins_i, wins_j, ties : numpy.ndarray of float64
        Weighted number of wins of ``i``, wins of ``j`` and ties in the pair. A continuous
        outcome ``o`` (``i``'s score, not 0, 0.5 or 1) with weight ``w`` adds ``w * o`` to
        ``wins_i`` and ``w * (1 - o)`` to ``wins_j``.
    continuous : bool
        Whether some outcome was continuous. The counts are then sufficient for the fit and the
        Hessian, not for the sandwich (its meat needs the sum of squared outcomes per pair), which
        is computed from the comparisons or their cells instead.
    """

    players: tuple[str, ...]
    i: np.ndarray
    j: np.ndarray
    wins_i: np.ndarray
    wins_j: np.ndarray
    ties: np.ndarray
    continuous: bool = False

    @property
    def n_players(self) -> int:
        """Number of players."""
        return len(self.players)

    @property
    def total(self) -> np.ndarray:
        """Weighted number of comparisons per pair."""
        return self.wins_i + self.wins_j + self.ties

    @classmethod
    def from_arrays(
        cls,
        players: ArrayLike,
        i: ArrayLike,
        j: ArrayLike,
        wins_i: ArrayLike,
        wins_j: ArrayLike,
        ties: ArrayLike | None = None,
    ) -> PairCounts:
        """Build counts from arrays, merging repeated pairs and orienting each as ``i < j``.

        Parameters
        ----------
        players : sequence of str
            Player names.
        i, j : array_like of int
            Player indices (any order; ``(3, 1)`` and ``(1, 3)`` are the same pair).
        wins_i, wins_j : array_like of float
            Weighted wins of ``i`` and of ``j`` (as given, before orienting).
        ties : array_like of float, optional
            Weighted ties (zeros when omitted).

        Returns
        -------
        PairCounts

        Raises
        ------
        ValueError
            On mismatched lengths, an index outside ``players``, ``i == j``, or a negative
            or non-finite count.
        """
        names = tuple(str(p) for p in np.asarray(players, dtype=object).ravel())
        if len(set(names)) != len(names):
            raise ValueError(f"'players' must be unique names; got {len(names)} with duplicates.")
        ii = np.asarray(i, dtype=np.int64).ravel()
        jj = np.asarray(j, dtype=np.int64).ravel()
        wi = np.asarray(wins_i, dtype=float).ravel()
        wj = np.asarray(wins_j, dtype=float).ravel()
        tt = np.zeros_like(wi) if ties is None else np.asarray(ties, dtype=float).ravel()
        n = len(ii)
        if not (len(jj) == len(wi) == len(wj) == len(tt) == n):
            raise ValueError(
                "'i', 'j', 'wins_i', 'wins_j' and 'ties' must have the same length; got "
                f"{[len(ii), len(jj), len(wi), len(wj), len(tt)]}."
            )
        for name, idx in (("i", ii), ("j", jj)):
            bad = (idx < 0) | (idx >= len(names))
            if bad.any():
                raise ValueError(
                    f"'{name}' must index 'players' (0..{len(names) - 1}); "
                    f"got {int(idx[bad][0])} in {int(bad.sum())} entries."
                )
        if (ii == jj).any():
            raise ValueError(
                f"A player cannot be compared with itself: 'i' == 'j' in {int((ii == jj).sum())} entries."
            )
        for name, arr in (("wins_i", wi), ("wins_j", wj), ("ties", tt)):
            bad = ~np.isfinite(arr) | (arr < 0)
            if bad.any():
                raise ValueError(
                    f"'{name}' must be finite and >= 0; got {arr[bad][0]!r} in {int(bad.sum())} entries."
                )
        swap = ii > jj
        lo = np.where(swap, jj, ii)
        hi = np.where(swap, ii, jj)
        a = np.where(swap, wj, wi)
        b = np.where(swap, wi, wj)
        return _merge(names, lo, hi, a, b, tt)


def _merge(
    players: tuple[str, ...],
    lo: np.ndarray,
    hi: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    t: np.ndarray,
) -> PairCounts:
    """Sum oriented per-row contributions (wins of ``lo``, wins of ``hi``, ties) per pair; drop empty pairs."""
    n = len(players)
    key = lo * n + hi
    if n * n <= max(4 * len(key), 1 << 16):
        size = n * n
        sums = [np.bincount(key, weights=x, minlength=size) for x in (a, b, t)]
        keys = np.flatnonzero((sums[0] + sums[1] + sums[2]) > 0)
        wi, wj, tt = (x[keys] for x in sums)
    else:
        keys, inv = np.unique(key, return_inverse=True)
        wi, wj, tt = (np.bincount(inv, weights=x, minlength=len(keys)) for x in (a, b, t))
        keep = (wi + wj + tt) > 0
        keys, wi, wj, tt = keys[keep], wi[keep], wj[keep], tt[keep]
    return PairCounts(
        players=players,
        i=(keys // n).astype(np.int64),
        j=(keys % n).astype(np.int64),
        wins_i=wi,
        wins_j=wj,
        ties=tt,
    )


def _fast_columns(frame: pd.DataFrame) -> tuple | None:
    """Codes, outcome and weight of a frame that is already valid with string players, else None.

    Checks the same conditions as :func:`~evalkit.io.schema.validate_comparisons` on the
    codes, without converting every row; any doubt returns None (then the full gate runs
    and raises its error).
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or len(frame) == 0:
        return None
    if any(c not in frame.columns for c in ("player_a", "player_b", "outcome")):
        return None
    for col in ("player_a", "player_b"):
        if pd.api.types.infer_dtype(frame[col], skipna=False) != "string":
            return None
    outcome = frame["outcome"]
    weight = frame["weight"] if "weight" in frame.columns else None
    if not pd.api.types.is_float_dtype(outcome) or (
        weight is not None and not pd.api.types.is_float_dtype(weight)
    ):
        return None
    players, a, b = encode_players(frame["player_a"], frame["player_b"])
    o = outcome.to_numpy(dtype=float)
    w = np.ones(len(o)) if weight is None else weight.to_numpy(dtype=float)
    bad = (a < 0) | (b < 0) | (a == b) | ~(o >= 0) | ~(o <= 1) | ~np.isfinite(w) | (w < 0)
    if bad.any():
        return None
    return players, a, b, o, w


def split_outcomes(
    outcome: np.ndarray, weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row (win, loss, tie) contributions of player_a: ties are outcomes of 0.5."""
    tie = np.abs(outcome - 0.5) <= _TIE_TOL
    win = np.where(tie, 0.0, outcome * weight)
    loss = np.where(tie, 0.0, (1.0 - outcome) * weight)
    return win, loss, np.where(tie, weight, 0.0)


def as_cells(data: pd.DataFrame | ComparisonCounts, *, cluster: str | None = None) -> ComparisonCounts:
    """The cells of ``data``: a :class:`~evalkit.io.counts.ComparisonCounts` as is (re-keyed
    when it lacks ``cluster``), or a comparisons frame validated and reduced.

    Raises
    ------
    ValueError
        When ``data`` is counts without the ``cluster`` column asked for, or an invalid frame.
    """
    if isinstance(data, ComparisonCounts):
        if cluster is None or data.cluster == cluster:
            return data
        raise ValueError(
            f"These counts were aggregated without the cluster column {cluster!r} (their cluster is "
            f"{data.cluster!r}); aggregate again with cluster={cluster!r}."
        )
    from evalkit.io.counts import cells_from_frame
    from evalkit.io.schema import validate_comparisons

    return cells_from_frame(validate_comparisons(data), cluster=cluster)


def aggregate(frame: pd.DataFrame | ComparisonCounts, *, validate: bool = True) -> PairCounts:
    """Aggregate a comparisons frame (or its cells) into :class:`PairCounts`.

    Parameters
    ----------
    frame : pandas.DataFrame or ComparisonCounts
        Canonical comparisons frame (``player_a, player_b, outcome, weight``; see
        :func:`evalkit.io.schema.validate_comparisons`), or the cells of
        :func:`evalkit.engine.aggregate_comparisons` (already valid).
    validate : bool, default True
        Validate the frame as :func:`~evalkit.io.schema.validate_comparisons` does (a
        frame with string players and float outcomes is checked on integer codes, which
        is ~10x faster on a million rows; anything else, or any invalid row, goes through
        the full gate, which raises its error). Pass ``False`` only for frames that
        already came out of it.

    Returns
    -------
    PairCounts
        Players sorted by name; an outcome of exactly 0.5 is a tie, other outcomes
        split between ``wins_i`` and ``wins_j`` in proportion. Pairs whose total
        weight is 0 are dropped.

    Examples
    --------
    >>> import pandas as pd
    >>> c = aggregate(pd.DataFrame({"player_a": ["x", "y", "x"], "player_b": ["y", "x", "y"],
    ...                             "outcome": [1.0, 1.0, 0.5]}))
    >>> c.players, c.wins_i.tolist(), c.wins_j.tolist(), c.ties.tolist()
    (('x', 'y'), [1.0], [1.0], [1.0])
    """
    fast = None
    if isinstance(frame, ComparisonCounts):  # valid cells, numpy columns
        players, a, b = frame.codes()
        fast = players, a, b, frame.column("outcome").astype(float), frame.column("weight").astype(float)
    elif validate:
        fast = _fast_columns(frame)
    if fast is not None:
        players, a, b, outcome, weight = fast
    else:
        assert not isinstance(frame, ComparisonCounts)  # cells always take the fast branch
        if validate:
            from evalkit.io.schema import validate_comparisons

            frame = validate_comparisons(frame)
        players, a, b = encode_players(frame["player_a"], frame["player_b"])
        outcome = frame["outcome"].to_numpy(dtype=float)
        weight = (
            frame["weight"].to_numpy(dtype=float) if "weight" in frame else np.ones(len(outcome))
        )
    swap = a > b
    tie = np.abs(outcome - 0.5) <= _TIE_TOL
    score_lo = np.where(tie, 0.0, np.where(swap, 1.0 - outcome, outcome))
    score_hi = np.where(tie, 0.0, 1.0 - score_lo)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    counts = _merge(players, lo, hi, score_lo * weight, score_hi * weight, np.where(tie, weight, 0.0))
    continuous = bool(np.any((weight > 0) & ~tie & (outcome != 0.0) & (outcome != 1.0)))
    return replace(counts, continuous=True) if continuous else counts
