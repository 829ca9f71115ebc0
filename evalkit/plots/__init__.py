"""Plots: every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib lazily.

Intervals are always computed by evalkit and passed in; no plot draws seaborn's own bootstrap.
"""

from evalkit.plots.budget import plot_elo_curves, plot_local_slopes
from evalkit.plots.ratings import plot_leaderboard, plot_win_rate_heatmap
from evalkit.plots.sim import plot_level_curves, plot_shares, plot_speedups, plot_width
from evalkit.plots.stats import plot_forest, plot_task_differences, plot_trial_means

__all__ = [
    "plot_elo_curves",
    "plot_local_slopes",
    "plot_leaderboard",
    "plot_win_rate_heatmap",
    "plot_forest",
    "plot_trial_means",
    "plot_task_differences",
    "plot_level_curves",
    "plot_speedups",
    "plot_shares",
    "plot_width",
]
