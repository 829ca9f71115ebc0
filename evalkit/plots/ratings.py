"""Plots of ratings: the leaderboard with its intervals, and the pairwise win-rate heatmap.

Every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib / seaborn lazily.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit._escape import plot_text
from evalkit.plots.stats import plot_forest

__all__ = ["plot_leaderboard", "plot_win_rate_heatmap"]


def plot_leaderboard(table: pd.DataFrame, *, ax: Any = None, xlabel: str | None = None) -> Any:
    """Elo per model with interval whiskers, best model on top.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`evalkit.ratings.leaderboard` output (``model, elo, ci_low, ci_high``).
    ax : matplotlib Axes, optional
    xlabel : str, optional
        Default: "Elo" plus the interval description from ``table.attrs["interval"]``.
    """
    t = table.sort_values("elo", ascending=False, kind="stable").reset_index(drop=True)
    if {"rank_low", "rank_high"} <= set(t.columns):  # simultaneous rank interval in the label (issue 12)
        t["model"] = [f"{m} [{lo}-{hi}]" for m, lo, hi in zip(t["model"], t["rank_low"], t["rank_high"], strict=True)]
    if xlabel is None:
        what = table.attrs.get("interval")
        xlabel = f"Elo ({what})" if what else "Elo"
    ax = plot_forest(t, estimate="elo", label="model", reference=None, highlight=None, xlabel=xlabel, ax=ax)
    anchored = str(table.attrs.get("parametrisation", "")).startswith("difference with")
    if anchored:
        ax.set_title(f"intervals are for the {table.attrs['parametrisation']}", fontsize=8)
    return ax


def plot_win_rate_heatmap(
    matrix: pd.DataFrame, *, order: list[str] | None = None, ax: Any = None, annot: bool | None = None
) -> Any:
    """Heatmap of pairwise win rates (row model against column model).

    Pairs that never met are drawn grey and hatched, clearly apart from a 0.5 win rate (white
    in the diverging palette), and named in the legend.

    Parameters
    ----------
    matrix : pandas.DataFrame
        :func:`evalkit.ratings.win_rate_matrix` output.
    order : list of str, optional
        Model order for rows and columns (e.g. the leaderboard's); default as given.
    ax : matplotlib Axes, optional
    annot : bool, optional
        Write the rates in the cells; default for up to 15 models.
    """
    import seaborn as sns

    from evalkit.plots._figure import subplots

    if order is not None:
        matrix = matrix.loc[order, order]
    n = len(matrix)
    if ax is None:
        side = float(np.clip(0.45 * n + 2.5, 4.0, 16.0))
        _, ax = subplots(figsize=(side + 1.0, side))
    if annot is None:
        annot = n <= 15
    from matplotlib.patches import Patch, Rectangle

    values = matrix.astype(float)
    sns.heatmap(
        values, ax=ax, vmin=0.0, vmax=1.0, center=0.5, cmap="RdBu_r", square=True,
        annot=annot, fmt=".2f", annot_kws={"fontsize": 7}, cbar_kws={"label": "win rate of row vs column (ties = 1/2)"},
        xticklabels=[plot_text(c) for c in matrix.columns], yticklabels=[plot_text(r) for r in matrix.index],
    )
    never = np.isnan(values.to_numpy())
    np.fill_diagonal(never, False)
    for i, j in zip(*np.nonzero(never), strict=True):  # seaborn leaves NaN cells transparent
        ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#b0b0b0", edgecolor="#666666", hatch="///", lw=0))
    for i in range(min(values.shape)):
        ax.add_patch(Rectangle((i, i), 1, 1, facecolor="#ffffff", edgecolor="#dddddd", lw=0.5))
    if never.any():
        ax.legend(handles=[Patch(facecolor="#b0b0b0", edgecolor="#666666", hatch="///", label="never met")],
                  loc="upper left", bbox_to_anchor=(0.0, -0.12 if n < 8 else -0.05), fontsize=7, frameon=False)
    ax.set_xlabel("opponent")
    ax.set_ylabel("model")
    ax.tick_params(labelsize=7)
    return ax
