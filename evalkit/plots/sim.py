"""Plots of the swarm simulator's experiments (seed 000's figures 2-10).

Every function takes one :class:`evalkit.sim.experiments.Results` (one seed), draws on ``ax``
(a new figure when None) and returns the Axes. matplotlib/seaborn are imported lazily.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["plot_level_curves", "plot_speedups", "plot_shares", "plot_width"]


def _ax(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5, 3.6))
    return ax


def plot_level_curves(results, series: Mapping[str, str], *, metric: str = "coverage", ax=None):
    """Mean time to each level (x, log, in t_mid units) vs level (y) for each ``label -> key``."""
    from evalkit.sim.experiments import LEVELS

    ax = _ax(ax)
    row = {"coverage": 0, "best": 1}[metric]
    for label, key in series.items():
        t = results.data[key][:, row, :].mean(axis=0) / results.t_mid
        ax.plot(t, LEVELS, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("time (t_mid)")
    ax.set_ylabel("coverage" if metric == "coverage" else "best score")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    return ax


def plot_speedups(results, series: Mapping[str, str], *, sizes: Sequence[int], metric: str = "coverage",
                  level: float = 0.9, ax=None):
    """Speedup at ``level`` against swarm size for each ``label -> key template`` (``{k}`` = size)."""
    ax = _ax(ax)
    for label, tmpl in series.items():
        ax.plot(sizes, [results.speedup(tmpl.format(k=k), metric, level) for k in sizes], marker="o", label=label)
    ax.plot(sizes, sizes, color="grey", lw=0.8, ls=":", label="linear")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("agents")
    ax.set_ylabel(f"speedup at {level:.0%} {'coverage' if metric == 'coverage' else 'best score'}")
    ax.legend(fontsize=7)
    return ax


def plot_shares(results, *, sizes: Sequence[int], swarm: str = "standard", ax=None):
    """Communication and scheduling shares of agent-time against swarm size."""
    ax = _ax(ax)
    for kind in ("communication", "scheduling"):
        ax.plot(sizes, [100 * results.share(swarm, k, kind) for k in sizes], marker="o", label=kind)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("agents")
    ax.set_ylabel("% of agent-time")
    ax.legend(fontsize=7)
    return ax


def plot_width(results, *, layers: Sequence[int], level: float = 0.9, ax=None):
    """Speedup of 16 agents at ``level`` coverage against steps per layer (width sweep)."""
    ax = _ax(ax)
    for swarm in ("standard", "recursive"):
        for metric, ls in (("coverage", "-"), ("best", "--")):
            y = [results.speedup(f"width|{D}|{swarm}", metric, level, baseline=f"width|{D}|single") for D in layers]
            ax.plot(layers, y, marker="o", ls=ls, label=f"{swarm}, {metric}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(layers), [str(D) for D in layers])
    ax.minorticks_off()
    ax.invert_xaxis()
    ax.set_xlabel("layers (fewer = wider)")
    ax.set_ylabel(f"speedup at {level:.0%}")
    ax.legend(fontsize=7)
    return ax
