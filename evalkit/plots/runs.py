"""Plots of repeated runs: pass@k and pass^k against k, and per-task pass rates of two systems.

Every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib lazily; intervals are
the computed ones (t intervals over tasks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit.plots._layout import legend_outside, short_label
from evalkit.plots.stats import _ax

__all__ = ["plot_pass_k", "plot_task_pass_rates"]


def plot_pass_k(table: pd.DataFrame, *, ax: Any = None) -> Any:
    """pass@k (solid) and pass^k (dashed) against k per system, with their intervals.

    The legend, outside the plot, names each system by its colour and each metric by its line
    style, drawn as the plot draws it (pass^k dashed).

    Parameters
    ----------
    table : DataFrame
        :func:`evalkit.stats.reliability.pass_k_table` output.
    """
    from matplotlib.lines import Line2D

    ax = _ax(ax, (6.5, 4.0))
    styles = (("pass@k", "-"), ("pass^k", "--"))
    handles = []
    for i, (system, g) in enumerate(table.groupby("system", sort=True)):
        colour = f"C{i % 10}"
        for metric, style in styles:
            m = g[g["metric"] == metric].sort_values("k")
            ax.plot(m["k"], m["estimate"], ls=style, marker="o", ms=3, color=colour)
            ax.fill_between(m["k"], m["ci_low"], m["ci_high"], color=colour, alpha=0.12, lw=0)
        handles.append(Line2D([], [], color=colour, lw=6, alpha=0.6, label=short_label(system, 24)))
    handles += [Line2D([], [], color="0.2", ls=style, lw=1.5, marker="o", ms=3, label=metric) for metric, style in styles]
    ax.set_xscale("log", base=2)
    ks = sorted(table["k"].unique())
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("k (runs)")
    ax.set_ylabel("share of tasks")
    legend_outside(ax, where="right", handles=handles, handlelength=3.5)
    return ax


def plot_task_pass_rates(counts: pd.DataFrame, a: str, b: str, *, ax: Any = None) -> Any:
    """Per-task pass rate of system ``a`` against ``b`` (points above the diagonal favour ``a``;
    marker size = runs)."""
    wide = (counts.assign(rate=counts["c"] / counts["n"]).pivot(index="task", columns="system", values="rate"))
    runs = counts.groupby("task")["n"].min()
    both = wide[[a, b]].dropna()
    ax = _ax(ax, (4.5, 4.5))
    jitter = np.random.default_rng(0).uniform(-0.01, 0.01, size=(len(both), 2))  # fixed: only separates ties
    ax.scatter(both[b] + jitter[:, 1], both[a] + jitter[:, 0], s=8 + 4 * runs.reindex(both.index).to_numpy(),
               alpha=0.6, color="C0")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"{short_label(b, 24)}: pass rate per task")
    ax.set_ylabel(f"{short_label(a, 24)}: pass rate per task")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    return ax
