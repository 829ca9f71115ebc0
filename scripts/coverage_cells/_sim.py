"""Known-truth data for the coverage cells: Bradley-Terry comparisons (independent or clustered) and
pass/fail runs of tasks. Helpers only (the runner skips modules whose name starts with ``_``).

Clustered comparisons keep the Bradley-Terry model *marginally*: each item (prompt) holds a few pairs,
and each pair on an item has one latent verdict drawn from the model; every vote on that (item, pair)
repeats the latent verdict with probability ``rho`` and is a fresh draw otherwise. Votes on one item are
then dependent while every single vote still has ``P(a beats b) = expit(theta_a - theta_b)``, so the
estimand is the ``theta`` the data were drawn from (no pseudo-true value to compute).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from evalkit.ratings.elo import ELO_SCALE

#: Five players 0.3 log-odds apart (52 Elo): the strengths of every ratings cell.
THETA = np.array([0.6, 0.3, 0.0, -0.3, -0.6])
NAMES = np.array([f"m{k}" for k in range(len(THETA))], dtype=object)


def true_elo(theta: np.ndarray = THETA, base: float = 1000.0) -> np.ndarray:
    """Centred Elo of the true strengths (what a centred interval is for)."""
    return base + ELO_SCALE * (theta - theta.mean())


def _frame(a: np.ndarray, b: np.ndarray, y: np.ndarray, item: np.ndarray | None = None) -> pd.DataFrame:
    """Rows reduced to weighted cells (frequency weights: the same statistics, fewer rows)."""
    cols = {"a": a, "b": b, "y": y} | ({} if item is None else {"item": item})
    raw = pd.DataFrame(cols)
    keys = list(cols)
    agg = raw.groupby(keys, sort=True).size().reset_index(name="weight")
    out = pd.DataFrame({"player_a": NAMES[agg["a"].to_numpy()], "player_b": NAMES[agg["b"].to_numpy()],
                        "outcome": agg["y"].to_numpy(float), "weight": agg["weight"].to_numpy(float)})
    if item is not None:
        out["item"] = np.char.add("i", agg["item"].to_numpy().astype(str)).astype(object)
    return out


def pairs(gen: np.random.Generator, n: int, k: int = len(THETA)) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random ordered pairs of distinct players."""
    a = gen.integers(0, k, n)
    return a, (a + gen.integers(1, k, n)) % k


def independent(gen: np.random.Generator, n: int, theta: np.ndarray = THETA, *, ties: float = 0.0,
                continuous: bool = False) -> pd.DataFrame:
    """``n`` independent comparisons. ``ties``: ties (0.5) take ``ties * min(p, 1 - p)`` from both
    outcomes, so ``E[outcome] = expit(d)`` is kept (ties = 0.2: 20 % ties between equal players); ``continuous``: outcome ~ Beta with mean
    ``expit(d)`` and concentration 3 (AlpacaEval-style weighted preferences)."""
    a, b = pairs(gen, n, len(theta))
    p = expit(theta[a] - theta[b])
    if continuous:
        y = gen.beta(3 * p, 3 * (1 - p))
        return pd.DataFrame({"player_a": NAMES[a], "player_b": NAMES[b], "outcome": y, "weight": 1.0})
    u = gen.random(n)
    # a tie takes probability t/2 from each side (t = ties * 2 min(p, 1 - p)), so E[outcome] = p still
    half = ties * np.minimum(p, 1 - p)
    y = np.where(u < p - half, 1.0, np.where(u < p + half, 0.5, 0.0))
    return _frame(a, b, y)


def all_pairs(k: int = len(THETA)) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered pair once, in a random-free fixed order (the first player shown first)."""
    a, b = np.triu_indices(k, 1)
    return a, b


def clustered(gen: np.random.Generator, n_items: int, per_item: int, *, rho: float = 0.6,
              pairs_per_item: int | None = None, theta: np.ndarray = THETA) -> pd.DataFrame:
    """``n_items`` items with ``per_item`` votes each; within an (item, pair) a vote repeats the pair's
    latent verdict with probability ``rho`` (see the module docstring). Each item holds every pair
    (``pairs_per_item=None``: the layout of judge logs, where a prompt is judged for many pairs) or
    ``pairs_per_item`` random pairs (each item then informs only a few of the ratings)."""
    k = len(theta)
    if pairs_per_item is None:
        ua, ub = all_pairs(k)
        pairs_per_item = len(ua)
        swap = gen.random((n_items, len(ua))) < 0.5  # which answer is shown first
        pa = np.where(swap, ub, ua).ravel()
        pb = np.where(swap, ua, ub).ravel()
    else:
        pa, pb = pairs(gen, n_items * pairs_per_item, k)
    latent = gen.random(len(pa)) < expit(theta[pa] - theta[pb])
    slot = gen.integers(0, pairs_per_item, (n_items, per_item)) + pairs_per_item * np.arange(n_items)[:, None]
    slot = slot.ravel()
    fresh = gen.random(slot.size) < expit(theta[pa[slot]] - theta[pb[slot]])
    y = np.where(gen.random(slot.size) < rho, latent[slot], fresh).astype(float)
    item = np.repeat(np.arange(n_items), per_item)
    return _frame(pa[slot], pb[slot], y, item)


def exists(frame: pd.DataFrame) -> bool:
    """Whether the maximum-likelihood ratings exist (evalkit refuses the others)."""
    from evalkit.ratings import aggregate
    from evalkit.ratings.existence import check_existence

    try:
        check_existence(aggregate(frame), ties="half")
    except ValueError:
        return False
    return len(set(frame["player_a"]) | set(frame["player_b"])) == len(THETA)


def draw_until(gen: np.random.Generator, make, *args, **kwargs) -> pd.DataFrame:
    """A data set from ``make`` on which the ratings exist (coverage is conditional on a fit)."""
    for _ in range(1000):
        frame = make(gen, *args, **kwargs)
        if exists(frame):
            return frame
    raise RuntimeError("no data set with finite ratings in 1000 draws: the setting is too sparse")
