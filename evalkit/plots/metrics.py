"""Figures of the agent metrics: success against task length with METR's fitted curves, the 50 %
horizon against release date, and accuracy against cost with the frontier.

Every ``plot_*`` takes ``ax=None`` and returns the Axes; without ``ax`` it draws on a new
:class:`matplotlib.figure.Figure` (no pyplot, no global state). Intervals are evalkit's.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.plots._layout import legend_outside

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.metrics._frontier import FrontierResult
    from evalkit.metrics.horizon import HorizonResult

__all__ = ["plot_horizon_curves", "plot_horizon_trend", "plot_frontier"]


def _new_ax(ax: Any, size: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    from evalkit.plots._figure import subplots

    fig, ax = subplots(figsize=size)  # with its Agg canvas: it draws and saves
    fig.set_layout_engine("constrained")
    return ax


def _binned(runs: pd.DataFrame, agent: str, weights: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mine = (runs["agent"] == agent).to_numpy()
    m = runs["minutes"].to_numpy(float)[mine]
    y = runs["score"].to_numpy(float)[mine]
    w = weights[mine]
    idx = np.clip(np.searchsorted(edges, m, side="right") - 1, 0, edges.size - 2)
    tot = np.bincount(idx, weights=w, minlength=edges.size - 1)
    succ = np.bincount(idx, weights=w * y, minlength=edges.size - 1)
    centre = np.sqrt(edges[:-1] * edges[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = succ / tot
    return centre[tot > 0], rate[tot > 0]


def plot_horizon_curves(result: HorizonResult, runs: pd.DataFrame | None = None, *, agents: list[str] | None = None,
                        ax: Any = None) -> Any:
    """Success probability against human minutes (log axis): each agent's fitted curve, its
    p50 marked, and (with ``runs``) the weighted success rate in bins of task length.

    Parameters
    ----------
    result : HorizonResult
    runs : DataFrame, optional
        The runs the result was fitted on (for the binned success rates).
    agents : list of str, optional
        Default: the agents by p50, at most 8 (the others are named in the legend title).
    """
    ax = _new_ax(ax, (7.0, 4.2))
    table = result.table.sort_values("p50" if "p50" in result.table.columns else "agent", ascending=False)
    names = agents if agents is not None else [a for a in table["agent"] if np.isfinite(result.fits[a].slope)][:8]
    curves = result.curves
    weights = None
    edges = None
    if runs is not None:
        from evalkit.metrics.horizon import _check_runs, task_weights

        runs = _check_runs(runs)
        weights = task_weights(runs, result.weights)
        edges = np.geomspace(runs["minutes"].min(), runs["minutes"].max() * 1.0001, 9)
    for i, agent in enumerate(names):
        colour = f"C{i % 10}"
        c = curves[curves["agent"] == agent]
        ax.plot(c["minutes"], c["p_success"], color=colour, lw=1.6, label=agent)
        h = result.fits[agent].horizon(0.5)
        if np.isfinite(h) and c["minutes"].min() <= h <= c["minutes"].max():
            ax.plot([h], [0.5], "o", color=colour, ms=4)
        if runs is not None and weights is not None and edges is not None:
            x, rate = _binned(runs, agent, weights, edges)
            ax.plot(x, rate, "s", color=colour, ms=3, alpha=0.6)
    ax.axhline(0.5, color="grey", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("task length (human minutes, log scale)")
    ax.set_ylabel("success probability")
    left_out = len(result.table) - len(names)
    legend_outside(ax, where="right", fontsize=7, title=f"{left_out} more not shown" if left_out > 0 else None,
                   title_fontsize=7)
    ax.set_title(f"Fitted success curves (weights {result.weights}, regularization {result.regularization:g})",
                 fontsize=9)
    return ax


def plot_horizon_trend(result: HorizonResult, dates: dict[str, Any], *, ax: Any = None) -> Any:
    """The 50 % horizon of each agent against its release date, log y axis, with the bootstrap
    interval of each point and the fitted doubling trend with its band (needs ``result.trend``)."""
    from evalkit.metrics.horizon import TREND_FLOOR, _ordinal

    ax = _new_ax(ax, (7.0, 4.2))
    t = result.table.set_index("agent")
    pts: list[tuple[dt.date, str, float, float, float]] = []
    for agent, d in dates.items():
        if agent in t.index and np.isfinite(t.at[agent, "p50"]):
            p50, low, high = (max(float(t.at[agent, c]), TREND_FLOOR) for c in ("p50", "p50_low", "p50_high"))
            pts.append((dt.date.fromordinal(_ordinal(d, agent)), str(agent), p50, low, high))
    pts.sort()
    if pts:
        x = [p[0] for p in pts]
        y = np.array([p[2] for p in pts])
        lo = np.array([p[3] for p in pts])
        hi = np.array([p[4] for p in pts])
        ok = np.isfinite(lo) & np.isfinite(hi)
        yerr = np.vstack([np.where(ok, y - np.minimum(lo, y), 0), np.where(ok, np.maximum(hi, y) - y, 0)])
        ax.errorbar(x, y, yerr=yerr, fmt="o", color="C0", ms=4, capsize=2, lw=1)
        for p in pts:
            ax.annotate(p[1], (p[0], p[2]), fontsize=6, xytext=(3, 3), textcoords="offset points")
    trend = result.trend
    if trend is not None and pts:
        span = np.linspace(min(p[0] for p in pts).toordinal(), max(p[0] for p in pts).toordinal(), 50)
        ax.plot([dt.date.fromordinal(int(s)) for s in span], trend.predict(span), color="C1", lw=1.5,
                label=f"doubling every {trend.days:.0f} days")
        legend_outside(ax, where="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_xlabel("release date")
    ax.set_ylabel("50% time horizon (human minutes, log scale)")
    ax.set_title(f"50% horizon with {100 * result.confidence_level:g}% hierarchical bootstrap intervals", fontsize=9)
    return ax


def plot_frontier(result: FrontierResult, *, log_cost: bool = True, ax: Any = None) -> Any:
    """Accuracy against cost per system, with the bootstrap intervals both ways, the frontier
    drawn through its systems, and each system labelled with its frontier probability."""
    ax = _new_ax(ax, (6.5, 4.5))
    t = result.table
    on = t["on_frontier"].to_numpy(bool)
    for mask, colour, label in ((on, "C3", "on the frontier"), (~on, "C0", "off the frontier")):
        sub = t[mask]
        if sub.empty:
            continue
        xerr = np.vstack([sub["cost"] - sub["cost_low"], sub["cost_high"] - sub["cost"]]).clip(min=0)
        yerr = np.vstack([sub["accuracy"] - sub["accuracy_low"], sub["accuracy_high"] - sub["accuracy"]]).clip(min=0)
        ax.errorbar(sub["cost"], sub["accuracy"], xerr=np.nan_to_num(xerr), yerr=np.nan_to_num(yerr), fmt="o",
                    color=colour, ms=5, capsize=2, lw=0.9, label=label)
    front = t[on].sort_values("cost")
    ax.plot(front["cost"], front["accuracy"], color="C3", lw=1.0, ls="--")
    r: Any  # pandas-stubs type each itertuples field as the union of every scalar type
    for r in t.itertuples():
        ax.annotate(f"{r.system} ({100 * r.p_frontier:.0f}%)", (r.cost, r.accuracy), fontsize=6, xytext=(4, -8),
                    textcoords="offset points")
    if log_cost and (t["cost"] > 0).all():
        ax.set_xscale("log")
    ax.set_xlabel(f"{result.cost} (total over tasks{', log scale' if log_cost else ''})")
    ax.set_ylabel("accuracy (mean score)")
    rule = "HAL's hull rule" if result.method == "hal" else "Pareto rule"
    ax.set_title(f"Accuracy against {result.cost}: frontier by {rule}; % = frontier probability", fontsize=9)
    legend_outside(ax, where="right", fontsize=7)
    return ax
