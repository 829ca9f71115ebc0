"""Plots of repeated runs: pass@k and pass^k against k, and per-task pass rates of two systems.

Every ``plot_*`` takes ``ax=None``, returns the Axes and imports matplotlib lazily; intervals are
the computed ones (t intervals over tasks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit.plots.stats import _ax

__all__ = ["plot_pass_k", "plot_task_pass_rates"]


def plot_pass_k(table: pd.DataFrame, *, ax: Any = None) -> Any:
    """pass@k (solid) and pass^k (dashed) against k per system, with their intervals.

    Parameters
    ----------
    table : DataFrame
        :func:`evalkit.stats.reliability.pass_k_table` output.
    """
    ax = _ax(ax, (6.5, 4.0))
    for i, (system, g) in enumerate(table.groupby("system", sort=True)):
        colour = f"C{i}"
        for metric, style in (("pass@k", "-"), ("pass^k", "--")):
            m = g[g["metric"] == metric].sort_values("k")
            ax.plot(m["k"], m["estimate"], style, marker="o", ms=3, color=colour, label=f"{system} {metric}")
            ax.fill_between(m["k"], m["ci_low"], m["ci_high"], color=colour, alpha=0.12, lw=0)
    ax.set_xscale("log", base=2)
    ks = sorted(table["k"].unique())
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("k (runs)")
    ax.set_ylabel("share of tasks")
    ax.legend(fontsize=7, loc="best")
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
    ax.set_xlabel(f"{b}: pass rate per task")
    ax.set_ylabel(f"{a}: pass rate per task")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    return ax
