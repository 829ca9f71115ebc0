"""Plots: every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib lazily.

Intervals are always computed by evalkit and passed in; no plot draws seaborn's own bootstrap.
A new figure is a :class:`matplotlib.figure.Figure` of its own (no pyplot, no backend switch).
The layout rules (legends outside the data, truncated labels with tooltips, how many models a
figure draws) are in :mod:`evalkit.plots._layout`.
"""

from evalkit._lazy import lazy_exports

_EXPORTS = {
    "plot_elo_curves": "budget", "plot_local_slopes": "budget",
    "plot_leaderboard": "ratings", "plot_win_rate_heatmap": "ratings",
    "plot_forest": "stats", "plot_trial_means": "stats", "plot_task_differences": "stats",
    "plot_pass_k": "runs", "plot_task_pass_rates": "runs",
    "plot_level_curves": "sim", "plot_speedups": "sim", "plot_shares": "sim", "plot_width": "sim",
}

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
