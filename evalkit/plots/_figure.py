"""New figures without pyplot: no backend switch, no global list of open figures.

``pyplot.subplots`` registers each figure with pyplot's global state (and a notebook's inline
backend), so a library that draws with it leaks figures and can change what a notebook shows.
A :class:`matplotlib.figure.Figure` made directly belongs to its caller only: it is freed
with its last reference. It gets its own Agg canvas (an object, not a backend switch), so it
draws to pixels (``fig.canvas.buffer_rgba()``), saves to PNG/SVG/PDF, and a notebook shows it
when it is displayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["subplots"]


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] | None = None,
             **kwargs: Any) -> tuple[Figure, Any]:
    """``(figure, axes)`` like ``pyplot.subplots``, on a Figure that pyplot does not know about."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)  # attaches itself as fig.canvas
    return fig, fig.subplots(nrows, ncols, **kwargs)
