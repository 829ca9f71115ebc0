"""Plots of ratings: the leaderboard with its intervals, and the pairwise win-rate heatmap.

Every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib lazily; a new figure
is a :class:`matplotlib.figure.Figure` of its own (no pyplot state). Both figures are drawn in
proportion to the data (:mod:`evalkit.plots._layout`): the heatmap is one ``imshow`` image,
not a rectangle per cell, writes its numbers only up to 15 models and draws at most the 60
best-rated models; the leaderboard draws at most 60 rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit.plots._layout import (
    ANNOTATE_MAX,
    MAX_HEATMAP,
    MAX_ROWS,
    THIN_N,
    labelled_ticks,
    legend_outside,
    set_tick_labels,
)
from evalkit.plots.stats import plot_forest

__all__ = ["plot_leaderboard", "plot_win_rate_heatmap", "win_rate_block", "NEVER_MET", "SAME_MODEL"]

#: Colour of the pairs that never met (apart from every win rate of the diverging palette).
NEVER_MET = "#8c8c8c"
#: Colour of the diagonal (a model against itself).
SAME_MODEL = "#d4d4d4"


def win_rate_block(counts: Any, players: list[str], *, tie_weight: float = 0.5) -> pd.DataFrame:
    """:func:`evalkit.ratings.win_rate_matrix` restricted to ``players`` (rows and columns in
    that order), computed from the pairs among them only: the block a heatmap draws, without
    the full n x n matrix of thousands of models."""
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
    return pd.DataFrame(mat, index=pd.Index(players, name="model"), columns=pd.Index(players, name="opponent"))


def plot_leaderboard(table: pd.DataFrame, *, ax: Any = None, xlabel: str | None = None,
                     max_rows: int = MAX_ROWS, thin_n: int = THIN_N) -> Any:
    """Elo per model with interval whiskers, best model on top.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`evalkit.ratings.leaderboard` output (``model, elo, ci_low, ci_high``; ``n``
        marks thin rows, ``rank_low, rank_high`` go into the labels).
    ax : matplotlib Axes, optional
    xlabel : str, optional
        Default: "Elo" plus the interval description from ``table.attrs["interval"]``.
    max_rows : int
        Draw the best ``max_rows`` models (default 60); the title says how many of how many.
    thin_n : int
        Models with fewer comparisons than this are drawn hollow as *preliminary*.
    """
    t = table.sort_values("elo", ascending=False, kind="stable").reset_index(drop=True)
    if {"rank_low", "rank_high"} <= set(t.columns) and t["rank_low"].notna().all():  # simultaneous rank interval
        t["model"] = [f"{m} [{int(lo)}-{int(hi)}]" for m, lo, hi in
                      zip(t["model"], t["rank_low"], t["rank_high"], strict=True)]
    if "n" in t.columns:
        t["preliminary"] = pd.to_numeric(t["n"], errors="coerce").to_numpy(float) < thin_n
    if xlabel is None:
        what = table.attrs.get("interval")
        xlabel = f"Elo ({what})" if what else "Elo"
    ax = plot_forest(t, estimate="elo", label="model", reference=None, highlight=None, xlabel=xlabel, ax=ax,
                     max_rows=max_rows, hollow="preliminary" if "preliminary" in t.columns else None,
                     hollow_label=f"preliminary (n < {thin_n})", what="models", by="rating")
    if str(table.attrs.get("parametrisation", "")).startswith("difference with"):
        ax.set_xlabel(f"{xlabel}\nintervals are for the {table.attrs['parametrisation']}")
    return ax


def plot_win_rate_heatmap(
    matrix: pd.DataFrame, *, order: list[str] | None = None, ax: Any = None, annot: bool | None = None,
    max_models: int = MAX_HEATMAP, total: int | None = None,
) -> Any:
    """Heatmap of pairwise win rates (row model against column model), one image.

    Pairs that never met are drawn in a flat grey (:data:`NEVER_MET`), apart from every win rate
    of the diverging palette (white is 0.5), and named in a legend above the plot; the diagonal
    is light grey.

    Parameters
    ----------
    matrix : pandas.DataFrame
        :func:`evalkit.ratings.win_rate_matrix` output.
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
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
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
    ax.set_xlabel("opponent" + shown, fontsize=8)
    ax.set_ylabel("model", fontsize=8)
    return ax
