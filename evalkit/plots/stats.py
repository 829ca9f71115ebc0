"""Plots of significance results. Intervals are the computed ones (t, Wilson, ...), never
seaborn's default bootstrap. Every ``plot_*`` takes ``ax=None``, returns the Axes and imports
matplotlib lazily.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._format import format_p
from evalkit.plots._layout import (
    MAX_ROWS,
    labelled_ticks,
    legend_outside,
    set_tick_labels,
    short_label,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["plot_forest", "plot_trial_means", "plot_task_differences", "ForestRows", "draw_forest"]


def _ax(ax: Any, size: tuple[float, float]) -> Any:
    if ax is None:
        from evalkit.plots._figure import subplots

        _, ax = subplots(figsize=size)
    return ax


def plot_forest(
    table: pd.DataFrame, *, estimate: str = "diff", low: str = "ci_low", high: str = "ci_high",
    label: str | None = None, reference: float | None = 0.0, highlight: str | None = "reject",
    xlabel: str = "difference (a - b)", ax: Any = None, max_rows: int = MAX_ROWS, hollow: str | None = None,
    hollow_label: str = "", what: str = "rows", by: str = "order",
) -> Any:
    """Forest plot: one row per table row, point ``estimate`` with the interval [low, high].

    Parameters
    ----------
    table : DataFrame
        E.g. :attr:`evalkit.stats.PairwiseComparison.table` (columns ``a``, ``b`` give the
        default labels ``"a − b"``).
    label : str, optional
        Column with row labels (truncated to fit; the SVG keeps the full name as a tooltip).
    reference : float or None
        Vertical reference line (no effect).
    highlight : str or None
        Boolean column; True rows are drawn in a second colour (e.g. significant after
        the multiplicity correction).
    max_rows : int
        Draw the first ``max_rows`` rows (default 60); the title says how many of how many.
    hollow : str or None
        Boolean column; True rows are drawn with hollow markers, labelled ``hollow_label``
        in the legend (e.g. preliminary rows).
    what, by : str
        How the title names the rows and their order when only the first ``max_rows`` are drawn.
    """
    t = table.dropna(subset=[estimate]).reset_index(drop=True)
    total = len(t)
    t = t.head(max_rows)
    names = (t[label].astype(str) if label else t["a"].astype(str) + " − " + t["b"].astype(str)).tolist()
    rows = ForestRows(names=names, estimate=t[estimate].to_numpy(float), low=t[low].to_numpy(float),
                      high=t[high].to_numpy(float),
                      highlight=t[highlight].fillna(False).to_numpy(bool) if highlight and highlight in t else None,
                      hollow=t[hollow].fillna(False).to_numpy(bool) if hollow and hollow in t else None)
    return draw_forest(rows, total=total, reference=reference, xlabel=xlabel, ax=ax, hollow_label=hollow_label,
                       what=what, by=by)


@dataclass(frozen=True)
class ForestRows:
    """The rows a forest plot draws, top first, as arrays (``highlight`` / ``hollow``: boolean
    masks, or None for none)."""

    names: list[str]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    highlight: np.ndarray | None = None
    hollow: np.ndarray | None = None


def draw_forest(rows: ForestRows, *, total: int, reference: float | None = 0.0, xlabel: str = "", ax: Any = None,
                hollow_label: str = "", what: str = "rows", by: str = "order") -> Any:
    """:func:`plot_forest` on arrays (no pandas): every row of ``rows``, of ``total`` in the data."""
    n = len(rows.names)
    ax = _ax(ax, (6.5, max(2.2, 0.26 * n + 1.2)))
    y = np.arange(n)[::-1]
    est, lo, hi = rows.estimate, rows.low, rows.high
    hot = rows.highlight if rows.highlight is not None else np.zeros(n, bool)
    empty = rows.hollow if rows.hollow is not None else np.zeros(n, bool)
    tagged = rows.highlight is not None and bool(hot.any())
    legend = tagged or bool(empty.any())
    for mask, colour, name in ((~hot, "#4c72b0", "not significant"), (hot, "#c44e52", "significant (adjusted)")):
        if not mask.any():
            continue
        # the interval as drawn, even where it excludes the estimate (percentile bootstrap): one collection each
        ax.hlines(y[mask], lo[mask], hi[mask], color=colour, lw=1.2)
        ax.plot(np.r_[lo[mask], hi[mask]], np.r_[y[mask], y[mask]], "|", color=colour, ms=5)
        full, thin = mask & ~empty, mask & empty
        tag = name if tagged else None
        if full.any():
            ax.plot(est[full], y[full], "o", ms=4, color=colour, label=tag)
        if thin.any():
            ax.plot(est[thin], y[thin], "o", ms=4, mfc="white", color=colour, label=hollow_label or None)
    if reference is not None:
        ax.axvline(reference, color="grey", lw=0.8, ls="--")
    ticks, step = labelled_ticks(n)  # at most MAX_TICK_LABELS rows labelled
    ax.set_yticks(y[ticks])
    set_tick_labels(ax, "y", [rows.names[i] for i in ticks], fontsize=7)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    notes = [f"the first {n} of {total} {what} by {by}; all are in the table"] if total > n else []
    if step > 1:
        notes.append(f"every {step}th row labelled")
    if notes:
        # y given: matplotlib then skips placing the title above the top tick labels (there are none),
        # a pass over every tick label's extent
        ax.set_title("; ".join(notes), fontsize=8, y=1.0)
    if legend:
        legend_outside(ax, where="right")
    return ax


def plot_trial_means(unit: Any, *, ax: Any = None) -> Any:
    """Per-trial means of the two systems of a :class:`evalkit.stats.UnitComparison`,
    with each system's mean and its t interval (df = trials - 1)."""
    from evalkit.stats.means import mean_se

    ax = _ax(ax, (4.5, 3.4))
    tm = unit.trial_means
    sys_col = tm.columns[0]
    for k, name in enumerate((unit.b, unit.a)):
        vals = tm.loc[tm[sys_col] == name, "mean"].to_numpy(float)
        ax.scatter(np.full(vals.size, k) + np.linspace(-0.08, 0.08, vals.size), vals, s=18, color="#888", zorder=2)
        m = mean_se(vals)
        lo, hi = m.confidence_interval()
        ax.errorbar([k + 0.22], [m.estimate], yerr=[[m.estimate - lo], [hi - m.estimate]], fmt="s", color="#4c72b0",
                    capsize=3, zorder=3)
    ax.set_xticks([0, 1])
    set_tick_labels(ax, "x", [unit.b, unit.a], fontsize=8)
    ax.set_xlim(-0.5, 1.6)
    ax.set_ylabel("trial mean (over tasks)")
    ax.set_title(f"trial as unit: Welch p = {format_p(unit.trial_level.pvalue)}", fontsize=9)
    return ax


def plot_task_differences(unit: Any, *, ax: Any = None) -> Any:
    """Per-task mean difference (a - b) of a :class:`evalkit.stats.UnitComparison`, sorted,
    wins / losses / ties coloured."""
    ax = _ax(ax, (5.0, 3.4))
    tm = unit.task_means
    sys_col, task_col = tm.columns[0], tm.columns[1]
    wide = tm.pivot(index=task_col, columns=sys_col, values="score").dropna()
    d = (wide[unit.a] - wide[unit.b]).sort_values()
    colours = np.where(d > 0, "#55a868", np.where(d < 0, "#c44e52", "#888888"))
    ax.bar(np.arange(d.size), d.to_numpy(), color=colours)
    ax.axhline(0, color="grey", lw=0.8)
    if d.size <= MAX_ROWS:  # a label per task while they fit; beyond, the bars alone (tasks in the table)
        ax.set_xticks(np.arange(d.size))
        set_tick_labels(ax, "x", list(d.index.astype(str)), width=20, rotation=60, ha="right", fontsize=7)
    else:
        ax.set_xlabel(f"{d.size} tasks, sorted by difference")
    ax.set_ylabel(f"task mean: {short_label(unit.a, 16)} − {short_label(unit.b, 16)}", fontsize=8)
    s = unit.task_sign
    ax.set_title(f"task as unit: {s.wins} W / {s.losses} L / {s.ties} T, sign test p = {format_p(s.pvalue)}", fontsize=9)
    return ax
