"""Elo against log budget: curves with bootstrap bands, the 400-per-decade reference, b_inf."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._escape import plot_text
from evalkit.plots._layout import legend_outside, short_label

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from evalkit.budget.curves import CurveResult
    from evalkit.budget.slopes import InflectionResult

__all__ = ["plot_elo_curves", "plot_local_slopes"]


def plot_elo_curves(
    result: CurveResult,
    *,
    ax: Axes | None = None,
    systems: Sequence[str] | None = None,
    reference: bool = True,
    inflection: Sequence[InflectionResult] | InflectionResult | None = None,
    bands: bool = True,
    title: str | None = None,
) -> Axes:
    """Plot Elo against budget (log axis) for each system.

    Parameters
    ----------
    result : CurveResult
        From :func:`evalkit.budget.elo_curves`.
    ax : matplotlib Axes, optional
        Draw here (default: a new figure).
    systems : sequence of str, optional
        Which systems (default: all).
    reference : bool
        Draw the repeated-sampling reference ``1000 + 400 log10(b / b_anchor)`` from each
        anchor (one line in joint mode).
    inflection : InflectionResult or sequence of them, optional
        Mark each ``b_inf`` on its curve, with its bootstrap interval as a horizontal bar.
    bands : bool
        Shade the bootstrap percentile bands.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from evalkit.plots._figure import subplots

    if ax is None:
        _, ax = subplots(figsize=(7, 4.5))
    names = list(result.systems if systems is None else systems)
    colors = _draw_curves(ax, result, names, bands=bands)
    if reference:
        _draw_references(ax, result, names)
    if inflection is not None:
        items = [inflection] if not isinstance(inflection, Sequence) else list(inflection)
        _mark_inflections(ax, result, items, colors)
    ax.set_xscale("log")
    ax.set_xlabel("budget (log scale)")
    ax.set_ylabel(f"{'self' if result.mode == 'self' else 'joint'}-Elo (first checkpoint = 1000)")
    ax.set_title(title or f"{result.mode}-Elo per budget ({result.options.get('bootstrap', 0)} bootstrap replicates, "
                 f"{result.confidence_level:.0%} bands)")
    ax.grid(True, which="major", alpha=0.3)
    legend_outside(ax, where="right")
    return ax


def _draw_curves(ax: Axes, result: CurveResult, names: list[str], *, bands: bool) -> dict[str, Any]:
    """One line (and band) per system; returns each system's colour."""
    colors: dict[str, Any] = {}
    for name in names:
        rows = result.curve.iloc[result.rows(name)]
        (line,) = ax.plot(rows["budget"], rows["elo"], marker="o", ms=3, lw=1.6, label=short_label(name, 24))
        colors[name] = line.get_color()
        if bands and np.isfinite(rows["ci_low"]).any():
            ax.fill_between(rows["budget"], rows["ci_low"], rows["ci_high"], color=line.get_color(), alpha=0.2, lw=0)
    return colors


def _draw_references(ax: Axes, result: CurveResult, names: list[str]) -> None:
    """The 400-per-decade reference from each distinct anchor budget (one legend entry)."""
    from evalkit.budget.slopes import reference_line

    drawn = set()
    for name in names:
        b0 = result.anchors[name]
        if b0 in drawn:
            continue
        drawn.add(b0)
        ax.plot(result.budgets, reference_line(result.budgets, b0=b0), ls="--", color="0.4", lw=1,
                label="400 Elo / decade\n(repeated sampling)" if len(drawn) == 1 else None)


def _mark_inflections(
    ax: Axes, result: CurveResult, items: list[InflectionResult], colors: dict[str, Any]
) -> None:
    """Each finite ``b_inf`` of a drawn system: a vertical line and a marker with its interval."""
    for inf in items:
        if not np.isfinite(inf.b_inf) or inf.system not in colors:
            continue
        rows = result.curve.iloc[result.rows(inf.system)]
        y = float(np.interp(np.log10(inf.b_inf), np.log10(rows["budget"]), rows["elo"]))
        ax.axvline(inf.b_inf, color=colors[inf.system], ls=":", lw=1)
        lo = inf.ci_low if inf.ci_low > 0 else result.budgets[0]
        ax.errorbar([inf.b_inf], [y], xerr=[[max(inf.b_inf - lo, 0.0)], [max(inf.ci_high - inf.b_inf, 0.0)]],
                    fmt="D", color=colors[inf.system], ms=7, capsize=3,
                    label=f"b_inf {short_label(inf.system, 20)} = {inf.b_inf:.3g}")


def plot_local_slopes(inflection: InflectionResult, *, ax: Axes | None = None) -> Axes:
    """Local slope (Elo per decade) against budget with its band and the reference level."""
    from evalkit.plots._figure import subplots

    if ax is None:
        _, ax = subplots(figsize=(7, 3.5))
    s = inflection.slopes
    (line,) = ax.plot(s["budget"], s["slope"], marker="o", ms=3, label=f"{plot_text(inflection.system)} local slope")
    if np.isfinite(s["ci_low"]).any():
        ax.fill_between(s["budget"], s["ci_low"], s["ci_high"], color=line.get_color(), alpha=0.2, lw=0)
    ax.axhline(inflection.reference, ls="--", color="0.4", lw=1, label=f"{inflection.reference:g} Elo / decade")
    if np.isfinite(inflection.b_inf):
        ax.axvline(inflection.b_inf, ls=":", color=line.get_color(), lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("budget (log scale)")
    ax.set_ylabel("Elo per decade")
    legend_outside(ax, where="right")
    return ax
