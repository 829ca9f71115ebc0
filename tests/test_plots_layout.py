"""No figure legend overlaps its axes' tick labels (issue 24), checked from matplotlib's own
layout: the window extents of every legend and every visible tick label after a draw, on every
``plot_*`` that draws a legend, with long and many labels. A legend drawn outside the axes
(:func:`evalkit.plots._layout.legend_outside`) must not cover the axes' data area either."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
LONG = [f"{w} agent with a very long descriptive system name v{i}.{i + 1} (temperature 0.{i})"
        for i, w in enumerate(["baseline", "candidate", "ablation", "retrieval", "planner", "critic", "swarm",
                               "recursive"])]  # eight systems, each name 60+ characters


def _extents(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [(ax, ax.get_legend()) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(None, leg) for leg in fig.legends]
    ticks = [t.get_window_extent(renderer) for ax in fig.axes
             for t in (*ax.get_xticklabels(), *ax.get_yticklabels()) if t.get_visible() and t.get_text().strip()]
    return renderer, legends, ticks


def _overlap(a, b) -> float:
    """Overlapping area of two window extents, in square pixels."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(w, 0.0) * max(h, 0.0)


def _check(ax, *, outside: bool = True) -> None:
    fig = ax.figure
    renderer, legends, ticks = _extents(fig)
    assert legends, "the figure draws a legend"
    assert ticks, "the figure has tick labels"
    for owner, legend in legends:
        box = legend.get_window_extent(renderer)
        hits = [t for t in ticks if _overlap(box, t) > 1.0]
        assert not hits, (box, hits)
        if outside and owner is not None:
            assert _overlap(box, owner.get_window_extent(renderer)) <= 1.0, (box, owner.get_window_extent(renderer))


@pytest.fixture(scope="module")
def curves():
    from evalkit.budget import elo_curves, inflection_point
    from evalkit.budget.grid import geometric_grid

    gen = np.random.default_rng(0)
    grid = geometric_grid(1e5, 1e7, ratio=1.5)
    rows = []
    for k, system in enumerate(LONG):
        off = gen.gumbel(size=(5, 4))
        for t in range(5):
            for s in range(4):
                rows.append(pd.DataFrame({"system": system, "task": t, "session": s, "budget": grid,
                                          "score": (150.0 + 60 * k) * np.log10(grid / 1e5) / 173.7 + off[t, s]}))
    res = elo_curves(pd.concat(rows), n_resamples=5, rng=0)
    return res, [inflection_point(res, system=s) for s in res.systems]


def test_elo_curves_and_local_slopes(curves):
    from evalkit.plots.budget import plot_elo_curves, plot_local_slopes

    res, infl = curves
    _check(plot_elo_curves(res, inflection=infl))
    _check(plot_local_slopes(infl[-1]))


def test_pass_k():
    from evalkit.plots.runs import plot_pass_k
    from evalkit.stats.reliability import pass_k_table

    gen = np.random.default_rng(1)
    counts = pd.DataFrame([{"system": s, "task": f"t{t}", "n": 8, "c": int(gen.binomial(8, 0.2 + 0.08 * i))}
                           for i, s in enumerate(LONG) for t in range(12)])
    _check(plot_pass_k(pass_k_table(counts)))


def test_forest_with_significant_and_preliminary_rows():
    from evalkit.plots.stats import plot_forest

    n = 40
    t = pd.DataFrame({"a": [LONG[i % 8] for i in range(n)], "b": [LONG[(i + 3) % 8] for i in range(n)],
                      "diff": np.linspace(-0.3, 0.3, n), "reject": np.arange(n) % 3 == 0,
                      "thin": np.arange(n) % 5 == 0})
    t["ci_low"], t["ci_high"] = t["diff"] - 0.1, t["diff"] + 0.1
    _check(plot_forest(t, hollow="thin", hollow_label="preliminary (fewer than 30 comparisons)"))


@pytest.mark.parametrize("n", [12, 60])
def test_win_rate_heatmap_legend_and_colour_bar(n):
    from evalkit.plots.ratings import plot_win_rate_heatmap

    names = [f"{LONG[i % 8]} #{i}" for i in range(n)]
    gen = np.random.default_rng(2)
    m = gen.uniform(size=(n, n))
    m[gen.uniform(size=(n, n)) < 0.4] = np.nan  # pairs that never met: the legend above the plot
    _check(plot_win_rate_heatmap(pd.DataFrame(m, index=names, columns=names)))


class _Results:
    """What the simulator plots read from a :class:`evalkit.sim.experiments.Results` (curves of
    plausible shape; the layout, not the numbers, is under test)."""

    def mean_curve(self, key, metric):
        t = np.geomspace(0.05, 20, 40)
        return t, 1 - np.exp(-t * (1 + hash(key) % 5))

    def speedup(self, key, metric, level, baseline=None):
        return 1.0 + (hash((key, metric)) % 70) / 10

    def share(self, swarm, k, kind):
        return 0.1 + 0.02 * np.log2(k) * (kind == "communication")


def test_simulator_figures():
    from evalkit.plots.sim import plot_level_curves, plot_shares, plot_speedups, plot_width

    series = {name: f"key{i}" for i, name in enumerate(LONG)}
    _check(plot_level_curves(_Results(), series))
    _check(plot_speedups(_Results(), {name: "swarm|{k}" for name in LONG}, sizes=[1, 2, 4, 8, 16, 32]))
    _check(plot_shares(_Results(), sizes=[1, 2, 4, 8, 16, 32]))
    _check(plot_width(_Results(), layers=[4, 8, 16, 32, 64, 148]))


def test_metrics_figures():
    from evalkit.metrics import apply_prices, frontier, read_prices, read_run_table, time_horizon
    from evalkit.metrics.horizon import _check_runs
    from evalkit.plots.metrics import plot_frontier, plot_horizon_curves, plot_horizon_trend

    runs = _check_runs(pd.read_csv(ROOT / "data" / "metr" / "runs.csv.gz"))
    dates = pd.read_csv(ROOT / "data" / "metr" / "release_dates.csv")
    dates = dict(zip(dates["agent"], dates["release_date"], strict=True))
    res = time_horizon(runs, n_resamples=0, dates=dates)
    _check(plot_horizon_curves(res, runs))
    _check(plot_horizon_trend(res, dates))
    cost = apply_prices(read_run_table(str(ROOT / "data" / "cost" / "runs.csv")),
                        read_prices(str(ROOT / "data" / "cost" / "prices.csv")))
    cost["system"] = cost["system"].map(lambda s: f"{s} with a long descriptive configuration name")
    _check(plot_frontier(frontier(cost, n_resamples=50, rng=0)))


def test_the_check_sees_an_overlap():
    """The checker itself: a legend over the y tick labels, and one inside the axes, are caught."""
    from evalkit.plots._figure import subplots

    _, ax = subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label=LONG[0])
    ax.legend(loc="center left", bbox_to_anchor=(-0.15, 0.5))
    with pytest.raises(AssertionError):
        _check(ax)
    ax.legend(loc="upper left")  # inside: clear of the ticks, but over the data area
    _check(ax, outside=False)
    with pytest.raises(AssertionError):
        _check(ax)
