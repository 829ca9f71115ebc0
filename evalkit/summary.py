"""Per-model summary of a comparisons frame: wins, losses, ties and win rate with its SE.

Two definitions:

* :func:`summarize` -- every model over all its games, whoever the opponent. A model's
  score in a game is ``outcome`` when it is ``player_a`` and ``1 - outcome`` when it is
  ``player_b``; a win is a score above 0.5, a loss below, a tie exactly 0.5 (continuous
  outcomes are counted by the side of 0.5 they fall on, as AlpacaEval does). ``win_rate`` is
  the weighted mean score (ties count half) and ``standard_error`` its standard error,
  ``sd / sqrt(n)`` with the ``n - 1`` sample SD (``scipy.stats.sem`` for unit weights; weights
  act as frequency weights).
* :func:`alpaca_eval_summary` -- AlpacaEval's leaderboard columns against one baseline,
  with AlpacaEval's definitions (frequency weights: a row of weight ``w`` is ``w`` games):
  ``x`` = the model's score against the baseline,
  ``win_rate = 100 * mean(x)``, ``standard_error = 100 * sem(x)`` (ddof 1),
  ``n_wins = #(x > 0.5)``, ``n_wins_base = #(x < 0.5)``, ``n_draws = #(x == 0.5)``,
  ``n_total`` = number of annotated games, and ``discrete_win_rate`` (each ``x`` rounded to
  0 / 0.5 / 1 first, exact draws kept as 0.5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalkit.io.counts import ComparisonCounts, encode_players

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["summarize", "summary_columns", "SummaryTable", "tally_columns", "alpaca_eval_summary", "infer_baseline"]


def _maybe_int(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v.astype(np.int64) if np.all(v == np.round(v)) else v


def _frame_of(data: pd.DataFrame | ComparisonCounts) -> pd.DataFrame:
    """The validated frame, or the cells of counts (already valid, frequency weights)."""
    from evalkit.io.schema import validate_comparisons

    return data.cells if isinstance(data, ComparisonCounts) else validate_comparisons(data)


def summarize(frame: pd.DataFrame | ComparisonCounts) -> pd.DataFrame:
    """Wins, losses, ties, n, win rate and its standard error for every model.

    Parameters
    ----------
    frame : pandas.DataFrame or ComparisonCounts
        A comparisons frame (validated on entry; see :mod:`evalkit.io.schema`) or its cells
        (:func:`evalkit.engine.aggregate_comparisons`): the result depends on the rows only
        through the cells.

    Returns
    -------
    pandas.DataFrame
        One row per model, sorted by ``win_rate`` (descending) then name, with columns
        ``model, n, wins, losses, ties, win_rate, standard_error, opponents``. ``n`` and the
        counts are sums of weights (integers when the weights are); ``win_rate`` is in
        [0, 1] with ties as half; ``standard_error`` is NaN for a model with one game.
    """
    import pandas as pd

    if isinstance(frame, ComparisonCounts):
        return SummaryTable(summary_columns(frame)).to_frame()
    frame = _frame_of(frame)
    cols = tally_columns(*encode_players(frame["player_a"], frame["player_b"]), frame["outcome"], frame["weight"])
    out = pd.DataFrame({**cols, "model": list(cols["model"])})
    return out.sort_values(["win_rate", "model"], ascending=[False, True], ignore_index=True)


class SummaryTable:
    """:func:`summarize`'s table as numpy columns (printable without pandas; ``to_frame()`` for a DataFrame)."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        self.columns = columns
        self.attrs: dict[str, object] = {}

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({k: (list(v) if k == "model" else v) for k, v in self.columns.items()})


def summary_columns(counts: ComparisonCounts) -> dict[str, np.ndarray]:
    """The columns of :func:`summarize` of cells, sorted as it sorts (``win_rate`` descending, then
    name), without pandas."""
    players, a, b = counts.codes()
    cols = tally_columns(players, a, b, counts.column("outcome"), counts.column("weight"))
    # players are sorted by name: equal win rates keep name order; NaN last, as sort_values puts it
    order = np.lexsort((np.arange(len(players)), -cols["win_rate"]))
    return {k: v[order] for k, v in cols.items()}


def tally_columns(players: tuple[str, ...], a: np.ndarray, b: np.ndarray, outcome: object,
                  weight: object) -> dict[str, np.ndarray]:
    """The columns of :func:`summarize` (numpy, in ``players`` order, unsorted) from player codes
    (:func:`evalkit.io.counts.encode_players`) and the outcome and weight columns of a valid
    comparisons frame or of its cells (frequency weights)."""
    k = len(players)
    s = np.asarray(outcome, dtype=float)
    w = np.asarray(weight, dtype=float)
    model = np.concatenate([a, b])  # one entry per (game, side)
    score = np.concatenate([s, 1.0 - s])
    ww = np.concatenate([w, w])

    def per_model(values: np.ndarray) -> np.ndarray:
        return np.bincount(model, weights=values, minlength=k)

    n = per_model(ww)
    win_rate = per_model(ww * score) / n
    dev = per_model(ww * (score - win_rate[model]) ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(n > 1, np.sqrt(dev / (n - 1) / n), np.nan)
    return {
        "model": np.array(players, dtype=object),
        "n": _maybe_int(n),
        "wins": _maybe_int(per_model(ww * (score > 0.5))),
        "losses": _maybe_int(per_model(ww * (score < 0.5))),
        "ties": _maybe_int(per_model(ww * (score == 0.5))),
        "win_rate": win_rate,
        "standard_error": se,
        "opponents": _opponents(model, np.concatenate([b, a]), k),
    }


# Below this many players the distinct opponents are marked in a k x k boolean table (16 MB at
# 4,096 players); above, the pair keys are sorted (a hash-based np.unique is ~6x slower).
_MASK_MAX_PLAYERS = 4096


def _opponents(model: np.ndarray, other: np.ndarray, k: int) -> np.ndarray:
    """Number of distinct opponents of each of the ``k`` players (``model`` met ``other``)."""
    key = model.astype(np.int64) * k + other
    if k <= _MASK_MAX_PLAYERS:
        met = np.zeros(k * k, dtype=bool)
        met[key] = True
        return met.reshape(k, k).sum(axis=1)
    key.sort()
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    return np.bincount(key[first] // k, minlength=k)


def infer_baseline(frame: pd.DataFrame) -> str:
    """The baseline of an AlpacaEval-style frame: the only ``player_b``.

    Raises
    ------
    ValueError
        If ``player_b`` holds several models (pass ``baseline=`` then).
    """
    import pandas as pd

    bases = pd.unique(frame["player_b"])
    if len(bases) != 1:
        shown = ", ".join(map(repr, bases[:5]))
        raise ValueError(
            f"Cannot infer the baseline: 'player_b' holds {len(bases)} models ({shown}...). "
            "Pass baseline='<model>'."
        )
    return str(bases[0])


def alpaca_eval_summary(frame: pd.DataFrame | ComparisonCounts, *,
                        baseline: str | None = None) -> pd.DataFrame:
    """AlpacaEval's leaderboard statistics of every model against ``baseline``.

    Parameters
    ----------
    frame : pandas.DataFrame or ComparisonCounts
        Comparisons (or their cells); games between ``baseline`` and a model are used
        (either side; the model's score is taken), all others are ignored. Weights are
        frequency weights: a row of weight 2 is two annotated games.
    baseline : str, optional
        The reference model (default: the only ``player_b`` in ``frame``).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``model`` and sorted by ``win_rate`` (descending): ``win_rate``,
        ``standard_error`` (both in percent), ``n_wins``, ``n_wins_base``, ``n_draws``,
        ``n_total``, ``discrete_win_rate`` -- the definitions in the module docstring, which
        reproduce AlpacaEval's published leaderboards.

    Raises
    ------
    ValueError
        If the baseline cannot be inferred or plays no game.
    """
    import pandas as pd

    frame = _frame_of(frame)
    baseline = infer_baseline(frame) if baseline is None else str(baseline)
    as_a = frame["player_b"] == baseline
    as_b = frame["player_a"] == baseline
    if not (as_a | as_b).any():
        raise ValueError(f"The baseline {baseline!r} plays no game in the frame.")
    model = np.concatenate([frame.loc[as_a, "player_a"].to_numpy(object),
                            frame.loc[as_b, "player_b"].to_numpy(object)])
    x = np.concatenate([frame.loc[as_a, "outcome"].to_numpy(float),
                        1.0 - frame.loc[as_b, "outcome"].to_numpy(float)])
    w = np.concatenate([frame.loc[as_a, "weight"].to_numpy(float), frame.loc[as_b, "weight"].to_numpy(float)])
    discrete = np.where(x == 0.5, 0.5, np.round(x))
    long = pd.DataFrame({"model": model, "w": w, "wx": w * x, "wins": w * (x > 0.5),
                         "base": w * (x < 0.5), "draws": w * (x == 0.5), "wd": w * discrete})
    g = long.groupby("model", sort=True)
    sums = g[["w", "wx", "wins", "base", "draws", "wd"]].sum()
    mean = sums["wx"] / sums["w"]
    dev = (long["w"] * (x - long["model"].map(mean).to_numpy()) ** 2).groupby(long["model"]).sum()
    n = sums["w"]
    out = pd.DataFrame(
        {
            "win_rate": 100.0 * mean,
            "standard_error": 100.0 * np.sqrt(dev / (n - 1) / n).where(n > 1),
            "n_wins": _maybe_int(sums["wins"]),
            "n_wins_base": _maybe_int(sums["base"]),
            "n_draws": _maybe_int(sums["draws"]),
            "n_total": _maybe_int(n),
            "discrete_win_rate": 100.0 * sums["wd"] / n,
        }
    )
    out.index.name = "model"
    return out.sort_values(["win_rate"], ascending=False, kind="stable")
