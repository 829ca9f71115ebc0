"""Plots of the swarm simulator's experiments (seed 000's figures 2-10).

Every function takes one :class:`evalkit.sim.experiments.Results` (one seed), draws on ``ax``
(a new figure when None) and returns the Axes. matplotlib/seaborn are imported lazily.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalkit.plots._layout import legend_outside

__all__ = ["plot_level_curves", "plot_speedups", "plot_shares", "plot_width"]


def _ax(ax):
    if ax is None:
        from evalkit.plots._figure import subplots

        _, ax = subplots(figsize=(5, 3.6))
    return ax


def _plain_log_ticks(ax, axis: str = "y") -> None:
    """Label a log axis at 1, 2, 5, 10, 20, ... in plain numbers (a decade may hold one tick only)."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    ticks = [m * 10.0**e for e in range(-1, 4) for m in (1, 2, 5)]
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_locator(FixedLocator(ticks))
    a.set_minor_locator(NullLocator())
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    a.set_major_formatter(fmt)


def plot_level_curves(results, series: Mapping[str, str], *, metric: str = "coverage", ax=None):
    """The mean curve of each ``label -> key`` (score averaged over the DAGs at each time, time in
    units of t_mid on a log axis), as the post plots its figures 2-4."""
    ax = _ax(ax)
    for label, key in series.items():
        t, y = results.mean_curve(key, metric)
        ax.step(t, y, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("time (t_mid, log scale)")
    ax.set_ylabel("coverage" if metric == "coverage" else "best score")
    ax.set_ylim(0, 1.02)
    legend_outside(ax, where="right", fontsize=7)
    return ax


def plot_speedups(results, series: Mapping[str, str], *, sizes: Sequence[int], metric: str = "coverage",
                  level: float = 0.9, ax=None):
    """Speedup at ``level`` against swarm size for each ``label -> key template`` (``{k}`` = size)."""
    ax = _ax(ax)
    for label, tmpl in series.items():
        ax.plot(sizes, [results.speedup(tmpl.format(k=k), metric, level) for k in sizes], marker="o", label=label)
    ax.plot(sizes, sizes, color="grey", lw=0.8, ls=":", label="linear")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(list(sizes), [str(k) for k in sizes])
    _plain_log_ticks(ax)
    ax.set_xlabel("agents")
    ax.set_ylabel(f"speedup at {level:.0%} {'coverage' if metric == 'coverage' else 'best score'}")
    legend_outside(ax, where="right", fontsize=7)
    return ax


def plot_shares(results, *, sizes: Sequence[int], swarm: str = "standard", ax=None):
    """Communication and scheduling shares of agent-time against swarm size."""
    ax = _ax(ax)
    for kind in ("communication", "scheduling"):
        ax.plot(sizes, [100 * results.share(swarm, k, kind) for k in sizes], marker="o", label=kind)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("agents")
    ax.set_ylabel("% of agent-time")
    legend_outside(ax, where="right", fontsize=7)
    return ax


def plot_width(results, *, layers: Sequence[int], level: float = 0.9, mean_steps: float = 740.0, ax=None):
    """Speedup of 16 agents at ``level`` against the width of the task (mean steps per layer,
    ``mean_steps / layers``, as the post's figures 9-10: 5 ... 184 steps per layer)."""
    ax = _ax(ax)
    width = [mean_steps / D for D in layers]
    for swarm in ("standard", "recursive"):
        for metric, ls in (("coverage", "-"), ("best", "--")):
            y = [results.speedup(f"width|{D}|{swarm}", metric, level, baseline=f"width|{D}|single") for D in layers]
            ax.plot(width, y, marker="o", ls=ls, label=f"{swarm}, {'coverage' if metric == 'coverage' else 'best score'}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(width, [f"{w:.0f}" for w in width])
    ax.minorticks_off()
    _plain_log_ticks(ax)
    ax.set_xlabel(f"steps per layer ({layers[0]} ... {layers[-1]} layers)")
    ax.set_ylabel(f"speedup at {level:.0%}")
    legend_outside(ax, where="right", fontsize=7)
    return ax
