"""Online (sequential) Elo with evalica's definitions.

Rows are processed in the order given: for each comparison the expected score of
``player_a`` is ``q_a / (q_a + q_b)`` with ``q = base ** (rating / scale)``, and both
ratings move by ``k * (score - expected)``. The result depends on the row order; it is
a running estimate, not a fit (use :func:`evalkit.ratings.fit_bt` for ratings with
intervals). The update is inherently sequential: this is the one loop over rows in
:mod:`evalkit.ratings`, over plain Python floats.
"""

from __future__ import annotations

import math

import pandas as pd

from evalkit.io.schema import validate_comparisons
from evalkit.ratings.counts import encode_players

__all__ = ["online_elo"]


def online_elo(
    frame: pd.DataFrame,
    *,
    initial: float = 1000.0,
    base: float = 10.0,
    scale: float = 400.0,
    k: float = 30.0,
) -> pd.Series:
    """Sequential Elo over the rows of a comparisons frame, in row order.

    Parameters
    ----------
    frame : pandas.DataFrame
        Canonical comparisons frame; ``outcome`` is ``player_a``'s score and ``weight``
        scales the scores (evalica's ``win_weight = 1``, ``tie_weight = 0.5``).
    initial, base, scale, k : float
        Start rating, logistic base and scale, and step size. ``initial``, ``base`` and
        ``scale`` are evalica's defaults; ``k = 30`` is the classic chess step, whereas
        ``evalica.elo`` defaults to ``k = 4`` (pass ``k=4`` to match it, as the goldens do).

    Returns
    -------
    pandas.Series
        Final ratings indexed by model (sorted by name), named ``"elo"``.
    """
    for name, value in (("initial", initial), ("base", base), ("scale", scale), ("k", k)):
        if not math.isfinite(value):
            raise ValueError(f"'{name}' must be finite; got {value!r}.")
    if base <= 0 or scale <= 0:
        raise ValueError(f"'base' and 'scale' must be > 0; got base={base!r}, scale={scale!r}.")
    frame = validate_comparisons(frame)
    players, a, b = encode_players(frame["player_a"].to_numpy(), frame["player_b"].to_numpy())
    ratings = [float(initial)] * len(players)
    outcome = frame["outcome"].to_numpy(float).tolist()
    weight = frame["weight"].to_numpy(float).tolist()
    for x, y, o, w in zip(a.tolist(), b.tolist(), outcome, weight, strict=True):
        q_x = base ** (ratings[x] / scale)
        q_y = base ** (ratings[y] / scale)
        ratings[x] += k * (w * o - q_x / (q_x + q_y))
        ratings[y] += k * (w * (1.0 - o) - q_y / (q_x + q_y))
    return pd.Series(ratings, index=pd.Index(players, name="model"), name="elo")
