"""Games between (system, checkpoint) players, aggregated into win and tie counts.

A player is a (system, budget checkpoint). Two observations (a session's best-so-far at a
checkpoint) meet only within one task; the higher value wins, equal values tie. Counts are
sufficient statistics: for a session bootstrap only the session multiplicities change, so
the outcome blocks are computed once per (task, system pair) and every replicate's counts
are one matrix product ``multiplicities @ outcomes``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.budget.grid import Checkpoints

__all__ = ["MISSING", "GameCounts", "count_games"]

MISSING = ("drop", "lose")
_CHUNK_CELLS = 2_000_000  # session pairs per stacked product x (checkpoint pairs + replicates)


def _chunks(parts: list, max_rows: int) -> list[list]:
    """Group consecutive blocks so that each group has at most ``max_rows`` session pairs."""
    out: list[list] = []
    cur: list = []
    rows = 0
    for part in parts:
        n = part[1].shape[0]
        if cur and rows + n > max_rows:
            out.append(cur)
            cur, rows = [], 0
        cur.append(part)
        rows += n
    if cur:
        out.append(cur)
    return out


@dataclass(frozen=True)
class GameCounts:
    """Ordered win counts and tie counts between players, for one or many replicates.

    Attributes
    ----------
    systems : tuple of str
        Systems in player order; player ``p`` is system ``p // C`` at checkpoint ``p % C``.
    budgets : numpy.ndarray
        The ``C`` checkpoint budgets.
    wins : numpy.ndarray
        Shape ``(R, P, P)``: ``wins[r, p, q]`` = games player ``p`` won against ``q``.
    ties : numpy.ndarray
        Shape ``(R, P, P)``, symmetric: tied games between ``p`` and ``q``.
    """

    systems: tuple[str, ...]
    budgets: np.ndarray
    wins: np.ndarray
    ties: np.ndarray

    @property
    def games(self) -> np.ndarray:
        """Games played by each player, shape ``(R, P)``."""
        return self.wins.sum(axis=2) + self.wins.sum(axis=1) + self.ties.sum(axis=2)


def _block(va: np.ndarray, vb: np.ndarray, missing: str) -> tuple[np.ndarray, np.ndarray]:
    """Win and tie indicators of every (session a, ckpt i) against (session b, ckpt j).

    Returns two boolean arrays of shape ``(Sa * Sb, C * C)`` (row ``a*Sb+b``, column
    ``i*C+j``).
    """
    x = va[:, None, :, None]
    y = vb[None, :, None, :]
    with np.errstate(invalid="ignore"):
        win = x > y
        tie = x == y
    if missing == "lose":
        nx, ny = np.isnan(x), np.isnan(y)
        win = win | (~nx & ny)
    sa, sb, c = va.shape[0], vb.shape[0], va.shape[1]
    return win.reshape(sa * sb, c * c), tie.reshape(sa * sb, c * c)


def _resolve_systems(sess: pd.DataFrame, systems: tuple[str, ...] | None) -> tuple[str, ...]:
    """The systems to include, in player order (default: all, sorted); unknown ones raise."""
    all_systems = tuple(sorted(sess["system"].unique()))
    systems = all_systems if systems is None else tuple(systems)
    unknown = [s for s in systems if s not in all_systems]
    if unknown:
        raise ValueError(f"Unknown system(s) {unknown}; the traces have {list(all_systems)}.")
    return systems


def _as_multiplicity(multiplicity: np.ndarray | None, n: int) -> np.ndarray:
    """Validated ``(R, n)`` session multiplicities (default: one replicate, every session once)."""
    m = np.ones((1, n)) if multiplicity is None else np.asarray(multiplicity, dtype=float)
    if m.ndim != 2 or m.shape[1] != n:
        raise ValueError(f"multiplicity must have shape (R, {n}); got {m.shape}.")
    return m


_Part = tuple[np.ndarray, np.ndarray, np.ndarray]  # (pair multiplicities, win block, tie block)


def _task_blocks(
    values: np.ndarray, code: np.ndarray, tasks: np.ndarray, m: np.ndarray, *,
    within_session: bool, missing: str,
) -> dict[tuple[int, int], list[_Part]]:
    """Per system pair ``(a, b)``, the outcome blocks of every task with their pair multiplicities.

    ``code`` is each session's system index (NaN for systems left out). Stacking the blocks of
    all tasks lets one matrix product per pair, (replicates x session pairs) @ (session pairs x
    checkpoint pairs), count every task.
    """
    r_count = m.shape[0]
    blocks: dict[tuple[int, int], list[_Part]] = {}
    for task in np.unique(tasks):
        in_task = np.flatnonzero((tasks == task) & ~np.isnan(code))
        by_sys = [(int(k), in_task[code[in_task] == k]) for k in np.unique(code[in_task])]
        for a, ia in by_sys:
            for b, ib in by_sys:
                w, t = _block(values[ia], values[ib], missing)
                pair_m = (m[:, ia, None] * m[:, None, ib]).reshape(r_count, -1)
                if a == b:
                    diag = np.arange(ia.size) * (ib.size + 1)
                    # copies of one session never play each other; with within-session
                    # games each copy plays its own other checkpoints once
                    pair_m[:, diag] = m[:, ia] if within_session else 0.0
                blocks.setdefault((a, b), []).append((pair_m, w, t))
    return blocks


def _pair_counts(parts: list[_Part], r_count: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Win and tie counts ``(R, C * C)`` of one system pair: chunked products over its blocks."""
    acc_w = np.zeros((r_count, c * c))
    acc_t = np.zeros((r_count, c * c))
    for chunk in _chunks(parts, max(1, _CHUNK_CELLS // (c * c + r_count))):
        pm = np.concatenate([p[0] for p in chunk], axis=1)
        # Counts are integers: float32 products are exact while every sum stays below
        # 2**24, and twice as fast as float64.
        dtype = np.float32 if pm.sum(axis=1).max() < 2**24 else np.float64
        pm = pm.astype(dtype)
        acc_w += pm @ np.concatenate([p[1] for p in chunk]).astype(dtype)
        tie = np.concatenate([p[2] for p in chunk])
        if tie.any():
            acc_t += pm @ tie.astype(dtype)
    return acc_w, acc_t


def count_games(
    checkpoints: Checkpoints,
    *,
    systems: tuple[str, ...] | None = None,
    within_session: bool = False,
    missing: str = "drop",
    multiplicity: np.ndarray | None = None,
) -> GameCounts:
    """Aggregate all games into counts, optionally for many bootstrap replicates at once.

    Parameters
    ----------
    checkpoints : Checkpoints
        Best-so-far values from :func:`evalkit.budget.grid.best_so_far`.
    systems : tuple of str, optional
        Systems to include (in player order). Default: all, sorted.
    within_session : bool
        Whether two checkpoints of the *same* session play each other. False for self-Elo
        (those games are fixed in advance by the prefix maximum); the joint Elo of the
        paper plays all pairs of observations from distinct players (True).
    missing : {"drop", "lose"}
        A checkpoint before a session's first submission has no value: ``"drop"`` skips
        every game it would take part in; ``"lose"`` makes it lose to every valued
        observation (two valueless observations do not play).
    multiplicity : numpy.ndarray, optional
        Shape ``(R, n_sessions)``: how many times each session is drawn in each replicate
        (a session bootstrap). Copies of one session are different sessions for the
        game rule except that a copy never plays another copy of itself (they share one
        prefix maximum). Default: one replicate with every session once.

    Returns
    -------
    GameCounts
    """
    if missing not in MISSING:
        raise ValueError(f"missing must be one of {MISSING}; got {missing!r}.")
    sess = checkpoints.sessions
    systems = _resolve_systems(sess, systems)
    m = _as_multiplicity(multiplicity, len(sess))
    r_count, c = m.shape[0], checkpoints.budgets.size
    n_players = len(systems) * c
    wins = np.zeros((r_count, n_players, n_players))
    ties = np.zeros((r_count, n_players, n_players))
    code = sess["system"].map({s: k for k, s in enumerate(systems)}).to_numpy(dtype=float)
    blocks = _task_blocks(
        checkpoints.values, code, sess["task"].to_numpy(), m, within_session=within_session, missing=missing
    )
    for (a, b), parts in blocks.items():
        acc_w, acc_t = _pair_counts(parts, r_count, c)
        wins[:, a * c:(a + 1) * c, b * c:(b + 1) * c] = acc_w.reshape(r_count, c, c)
        ties[:, a * c:(a + 1) * c, b * c:(b + 1) * c] = acc_t.reshape(r_count, c, c)
    # A player never plays itself.
    diag = np.arange(n_players)
    wins[:, diag, diag] = 0.0
    ties[:, diag, diag] = 0.0
    return GameCounts(systems=systems, budgets=checkpoints.budgets, wins=wins, ties=ties)
