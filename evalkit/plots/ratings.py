"""Plots of ratings: the leaderboard with its intervals, and the pairwise win-rate heatmap.

Every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib lazily; a new figure
is a :class:`matplotlib.figure.Figure` of its own (no pyplot state). Both figures are drawn in
proportion to the data (:mod:`evalkit.plots._layout`): the heatmap is one ``imshow`` image,
not a rectangle per cell, writes its numbers only up to 15 models and draws at most the 60
best-rated models; the leaderboard draws at most 60 rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._escape import is_column_table
from evalkit.plots._layout import (
    ANNOTATE_MAX,
    MAX_HEATMAP,
    MAX_ROWS,
    THIN_N,
    labelled_ticks,
    legend_outside,
    set_tick_labels,
)
from evalkit.plots.stats import ForestRows, draw_forest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalkit._escape import ColumnTable

__all__ = ["plot_leaderboard", "plot_win_rate_heatmap", "win_rate_block", "win_rate_values", "NAMED_COLUMNS_MAX", "NEVER_MET", "SAME_MODEL"]

#: Heatmaps of up to this many models name the models on both axes; above it the columns carry the
#: rows' numbers (rows are labelled "k name"), every 5th: 60 rotated names were a third of the figure's
#: drawing time, and hard to read at phone width.
NAMED_COLUMNS_MAX = 20

#: Colour of the pairs that never met (apart from every win rate of the diverging palette).
NEVER_MET = "#8c8c8c"
#: Colour of the diagonal (a model against itself).
SAME_MODEL = "#d4d4d4"


def win_rate_block(counts: Any, players: list[str], *, tie_weight: float = 0.5) -> pd.DataFrame:
    """:func:`evalkit.ratings.win_rate_matrix` restricted to ``players`` (rows and columns in
    that order), computed from the pairs among them only: the block a heatmap draws, without
    the full n x n matrix of thousands of models."""
    import pandas as pd

    mat = win_rate_values(counts, players, tie_weight=tie_weight)
    return pd.DataFrame(mat, index=pd.Index(players, name="model"), columns=pd.Index(players, name="opponent"))


def win_rate_values(counts: Any, players: list[str], *, tie_weight: float = 0.5) -> np.ndarray:
    """:func:`win_rate_block` as a square array (no pandas): row model against column model,
    NaN for pairs that never met and on the diagonal."""
    from evalkit.ratings import aggregate
    from evalkit.ratings.counts import PairCounts

    c = counts if isinstance(counts, PairCounts) else aggregate(counts)
    pos = np.full(len(c.players), -1)
    where = {p: k for k, p in enumerate(players)}
    for k, p in enumerate(c.players):
        pos[k] = where.get(p, -1)
    pi, pj = pos[c.i], pos[c.j]
    keep = (pi >= 0) & (pj >= 0)
    a = c.wins_i[keep] + tie_weight * c.ties[keep]
    b = c.wins_j[keep] + tie_weight * c.ties[keep]
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = a / (a + b)
    mat = np.full((len(players), len(players)), np.nan)
    mat[pi[keep], pj[keep]] = rate
    mat[pj[keep], pi[keep]] = 1.0 - rate
    return mat


def plot_leaderboard(table: pd.DataFrame | ColumnTable, *, ax: Any = None, xlabel: str | None = None,
                     max_rows: int = MAX_ROWS, thin_n: int = THIN_N) -> Any:
    """Elo per model with interval whiskers, best model on top.

    Parameters
    ----------
    table : pandas.DataFrame or Leaderboard
        :func:`evalkit.ratings.leaderboard` output, or :func:`evalkit.ratings.leaderboard.leaderboard_columns`'s
        (numpy columns, no pandas needed) (``model, elo, ci_low, ci_high``; ``n``
        marks thin rows, ``rank_low, rank_high`` go into the labels).
    ax : matplotlib Axes, optional
    xlabel : str, optional
        Default: "Elo" plus the interval description from ``table.attrs["interval"]``.
    max_rows : int
        Draw the best ``max_rows`` models (default 60); the title says how many of how many.
    thin_n : int
        Models with fewer comparisons than this are drawn hollow as *preliminary*.
    """
    cols = _columns(table, ("model", "elo", "ci_low", "ci_high", "n", "rank_low", "rank_high"))
    elo = np.asarray(cols["elo"], dtype=float)
    keep = np.flatnonzero(~np.isnan(elo))
    order = keep[np.argsort(-elo[keep], kind="stable")]  # best first; ties keep the table's order
    total, top = len(order), order[:max_rows]
    names = [str(cols["model"][k]) for k in top]
    low, high = cols.get("rank_low"), cols.get("rank_high")
    if low is not None and high is not None and _all_numbers(low) and _all_numbers(high):  # simultaneous rank interval
        names = [f"{m} [{int(low[k])}-{int(high[k])}]" for m, k in zip(names, top, strict=True)]
    hollow = None
    if cols.get("n") is not None:
        hollow = np.array([_number(v) < thin_n for v in cols["n"]], dtype=bool)[top]
    attrs: dict[str, Any] = getattr(table, "attrs", {})
    if xlabel is None:
        what = attrs.get("interval")
        xlabel = f"Elo ({what})" if what else "Elo"
    rows = ForestRows(names=names, estimate=elo[top], low=np.asarray(cols["ci_low"], dtype=float)[top],
                      high=np.asarray(cols["ci_high"], dtype=float)[top], hollow=hollow)
    ax = draw_forest(rows, total=total, reference=None, xlabel=xlabel, ax=ax,
                     hollow_label=f"preliminary (n < {thin_n})", what="models", by="rating")
    if str(attrs.get("parametrisation", "")).startswith("difference with"):
        ax.set_xlabel(f"{xlabel}\nintervals are for the {attrs['parametrisation']}")
    return ax


def _columns(table: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The columns of ``table`` (a DataFrame or a column table such as
    :class:`evalkit.ratings.Leaderboard`) among ``names``, as sequences."""
    if is_column_table(table):
        return {k: table.columns[k] for k in names if k in table.columns}
    return {k: table[k].to_numpy() for k in names if k in table.columns}


def _number(value: Any) -> float:
    """``value`` as a float, NaN where it is not a number (pandas' ``to_numeric(errors="coerce")``)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _all_numbers(values: Any) -> bool:
    return len(values) > 0 and not any(np.isnan(_number(v)) for v in values)


def plot_win_rate_heatmap(
    matrix: pd.DataFrame | np.ndarray, *, order: list[str] | None = None, ax: Any = None, annot: bool | None = None,
    max_models: int = MAX_HEATMAP, total: int | None = None,
) -> Any:
    """Heatmap of pairwise win rates (row model against column model), one image.

    Pairs that never met are drawn in a flat grey (:data:`NEVER_MET`), apart from every win rate
    of the diverging palette (white is 0.5), and named in a legend above the plot; the diagonal
    is light grey. Above :data:`NAMED_COLUMNS_MAX` models the rows are labelled "k name" and the
    columns by the row number k (every 5th).

    Parameters
    ----------
    matrix : pandas.DataFrame or numpy.ndarray
        :func:`evalkit.ratings.win_rate_matrix` output, or a square array whose rows and
        columns are the models of ``order`` in that order (:func:`win_rate_values`).
    order : list of str, optional
        Model order for rows and columns (e.g. the leaderboard's); default as given.
    ax : matplotlib Axes, optional
    annot : bool, optional
        Write the rates in the cells; default for up to 15 models (never above 15).
    max_models : int
        Draw the first ``max_models`` models of ``order`` (default 60); the axis label says
        how many of how many.
    total : int, optional
        How many models there are, when ``matrix`` holds only the block drawn
        (:func:`win_rate_block`); default ``len(order)``.
    """
    import matplotlib
    from matplotlib.patches import Patch

    from evalkit.plots._figure import subplots

    if isinstance(matrix, np.ndarray):
        if order is None or matrix.shape != (len(order), len(order)):
            raise ValueError(f"a win-rate array needs the models' order: {matrix.shape} for "
                             f"{None if order is None else len(order)} models.")
        names = list(order)
        total = max(len(names), total or 0)
        names = names[:max_models]
        values = np.asarray(matrix[: len(names), : len(names)], dtype=float)
    else:
        names = list(order) if order is not None else list(matrix.index)
        total = max(len(names), total or 0)
        names = names[:max_models]
        values = matrix.loc[names, names].to_numpy(dtype=float)  # only the block drawn
    n = len(names)
    if ax is None:
        side = float(np.clip(0.16 * n + 3.0, 4.5, 12.0))
        _, ax = subplots(figsize=(side + 1.4, side))
    never = np.isnan(values)
    np.fill_diagonal(never, False)
    # one RGBA image, coloured here: the palette for the rates, flat greys for pairs that never met
    # and for the diagonal (one resampling per draw, whatever the number of cells)
    cmap = matplotlib.colormaps["RdBu_r"]
    norm = matplotlib.colors.Normalize(vmin=0.0, vmax=1.0)
    rgba = cmap(norm(np.nan_to_num(values, nan=0.5)))
    rgba[never] = matplotlib.colors.to_rgba(NEVER_MET)
    rgba[np.arange(n), np.arange(n)] = matplotlib.colors.to_rgba(SAME_MODEL)
    ax.imshow((rgba * 255).round().astype(np.uint8), interpolation="nearest", aspect="equal")  # bytes: no float pass
    im = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    if annot is None:
        annot = n <= ANNOTATE_MAX
    if annot and n <= ANNOTATE_MAX:
        for i, j in zip(*np.nonzero(np.isfinite(values)), strict=True):
            if i != j:
                v = values[i, j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(v - 0.5) > 0.3 else "black")
    size = 8 if n <= 40 else 7
    ticks, step = labelled_ticks(n)  # at most MAX_TICK_LABELS per axis
    ax.set_yticks(ticks)
    numbered = n > NAMED_COLUMNS_MAX
    if numbered:  # rows "k name", columns by row number k: 13 short labels instead of 60 long rotated names
        every = 5 * -(-n // 100)
        columns = sorted({0, *range(every - 1, n, every)})
        ax.set_xticks(columns)
        ax.set_xticklabels([str(i + 1) for i in columns], fontsize=size)
        set_tick_labels(ax, "y", [f"{i + 1}  {names[i]}" for i in ticks], fontsize=size)
    else:
        ax.set_xticks(ticks)
        set_tick_labels(ax, "x", [names[i] for i in ticks], rotation=90, fontsize=size)
        set_tick_labels(ax, "y", [names[i] for i in ticks], fontsize=size)
    ax.tick_params(length=2)
    bar = ax.figure.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("win rate of row vs column (ties = 1/2)", fontsize=8)
    bar.ax.tick_params(labelsize=8)
    if never.any():
        legend_outside(ax, where="above", handles=[Patch(facecolor=NEVER_MET, label="never met"),
                                                   Patch(facecolor=SAME_MODEL, label="same model")], ncol=2)
    shown = f" (the {n} best-rated of {total} models; all in the tables)" if total > n else ""
    if step > 1:
        shown += f"; every {step}th model labelled"
    ax.set_xlabel(("opponent, by row number" if numbered else "opponent") + shown, fontsize=8)
    ax.set_ylabel("model", fontsize=8)
    return ax
