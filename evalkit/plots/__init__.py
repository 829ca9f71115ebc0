"""Plots: every plot_* takes ax=None, returns the Axes and imports matplotlib lazily."""
