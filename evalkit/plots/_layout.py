"""Layout rules every evalkit figure follows, so that it reads at desktop and phone widths.

- **Legends sit outside the data and the ticks**: :func:`legend_outside` puts a legend to the
  right of the axes (or above them), never inside, and ``tests/test_plots_layout.py`` checks
  each figure's legend against its axes and tick labels from matplotlib's own bounding boxes.
- **Labels fit**: :func:`short_label` truncates a long name to :data:`LABEL_WIDTH` characters
  with an ellipsis; :func:`set_tick_labels` records the full name, which
  :func:`evalkit.plots._fonts.save_svg` writes as the SVG ``<title>`` tooltip of the label.
- **Figures in proportion to the data**: a forest plot draws at most :data:`MAX_ROWS` rows and a
  heatmap at most :data:`MAX_HEATMAP` models (the best-rated; the full data stay in the CSV), and
  cells carry their numbers only up to :data:`ANNOTATE_MAX` models; the figure's title says when
  it shows part of the data, and :func:`summary_note` gives the reason for the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit._escape import plot_text

__all__ = ["LABEL_WIDTH", "MAX_ROWS", "MAX_HEATMAP", "ANNOTATE_MAX", "THIN_N", "short_label", "set_tick_labels",
           "legend_outside", "tooltips", "summary_note", "MAX_TICK_LABELS", "labelled_ticks"]

#: Characters of a tick label before it is truncated with an ellipsis.
LABEL_WIDTH = 28
#: Rows of a forest plot / leaderboard figure (the top ones; the rest are in the table).
MAX_ROWS = 60
#: Models of a win-rate heatmap (the best-rated; the full matrix is computed, not drawn).
MAX_HEATMAP = 60
#: Heatmaps up to this many models write the rate in each cell.
ANNOTATE_MAX = 15
#: At most this many tick labels per axis: with more rows (or heatmap models) every k-th is
#: labelled (k = ceil(n / MAX_TICK_LABELS)), and the figure says so. Text is most of a figure's
#: drawing time, and 200 labels on one axis would overlap anyway.
MAX_TICK_LABELS = 60

#: Fewer comparisons than this: a model's row is *preliminary* (LMArena's tag), drawn hollow and
#: tagged in the tables (:mod:`evalkit.report.findings`).
THIN_N = 30

_TIPS = "_evalkit_tooltips"


def short_label(name: object, width: int = LABEL_WIDTH) -> str:
    """``name`` as a plot label (escaped), truncated to ``width`` characters with ``…``."""
    text = plot_text(name)
    return text if len(text) <= width else text[: max(width - 1, 1)].rstrip() + "…"


def tooltips(fig: Any) -> dict[str, str]:
    """``{gid: full name}`` of the truncated labels of ``fig`` (see :func:`set_tick_labels`)."""
    tips: dict[str, str] = fig.__dict__.setdefault(_TIPS, {})
    return tips


def set_tick_labels(ax: Any, axis: str, names: Sequence[object], *, width: int = LABEL_WIDTH,
                    **kwargs: Any) -> list[Any]:
    """Set the tick labels of ``ax``'s ``axis`` ("x" or "y") to ``names``, truncated to
    ``width``; a truncated label keeps its full name as its SVG tooltip."""
    shown = [short_label(n, width) for n in names]
    setter = ax.set_xticklabels if axis == "x" else ax.set_yticklabels
    texts = setter(shown, **kwargs)
    tips = tooltips(ax.figure)
    for text, full, short in zip(texts, names, shown, strict=True):
        if short != plot_text(full):
            gid = f"evalkit-tip-{len(tips)}"
            text.set_gid(gid)
            tips[gid] = str(full)
    return list(texts)


def labelled_ticks(n: int, max_labels: int = MAX_TICK_LABELS) -> tuple[list[int], int]:
    """``(positions, k)``: every ``k``-th of ``n`` positions (0, k, 2k, ...), at most ``max_labels``."""
    k = max(1, -(-n // max(max_labels, 1)))
    return list(range(0, n, k)), k


def legend_outside(ax: Any, *, where: str = "right", handles: Sequence[Any] | None = None,
                   labels: Sequence[str] | None = None, **kwargs: Any) -> Any:
    """A legend outside the axes: to the right of them (``where="right"``) or above them
    (``"above"``, in columns), so that it never covers data or tick labels."""
    opts: dict[str, Any] = {"fontsize": 8, "frameon": False, "borderaxespad": 0.0, "handlelength": 2.8}
    if where == "right":
        opts.update(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    elif where == "above":
        opts.update(loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=kwargs.pop("ncol", 3))
    else:
        raise ValueError(f"where must be 'right' or 'above'; got {where!r}.")
    opts.update(kwargs)
    if handles is not None:
        return ax.legend(handles, labels if labels is not None else [h.get_label() for h in handles], **opts)
    return ax.legend(**opts)


def summary_note(shown: int, total: int, what: str = "models", *, limit_name: str = "MAX_ROWS",
                 by: str = "rating") -> str:
    """``"the 60 best by rating of 1000 models (figures draw at most 60: evalkit.plots._layout.MAX_ROWS)"``,
    or empty when everything is drawn."""
    if shown >= total:
        return ""
    return (f"the {shown} best by {by} of {total} {what} are drawn (figures draw at most {shown} "
            f"{what}, evalkit.plots._layout.{limit_name}; all are in the table)")
