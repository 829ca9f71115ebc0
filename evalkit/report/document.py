"""The report's document model: sections made of blocks, rendered to Markdown and to HTML.

A report is a list of :class:`Section` objects. A section is a title plus blocks:
:class:`Text` (a paragraph), :class:`Bullets`, :class:`Table` (a DataFrame) and
:class:`Figure` (a PNG saved under ``figures/`` by :meth:`ReportContext.save_figure`).
The renderers (:mod:`evalkit.report.render`) turn the same sections into ``report.md`` and a
self-contained ``report.html``, so both always say the same thing.

Escaping happens in the renderers, never in a section: titles, captions and table cells are
plain text; :class:`Text` and :class:`Bullets` understand ``**bold**``, ```code``` and
``[text](relative/url)``, and a value from the data interpolated into them is wrapped in
:func:`plain` so that it is shown literally (``f"**{plain(name)}** wins"``). Even unwrapped,
nothing from the data can run: HTML is always escaped and only relative or http(s) links
become links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.report.headline import Headline

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalkit._progress import ProgressFn

__all__ = ["Text", "Bullets", "Table", "Figure", "Block", "Section", "ReportContext", "plain", "table_rows", "PLAIN_OPEN",
           "PLAIN_CLOSE", "FILTER_ROWS"]

#: HTML tables with more rows than this get a filter box.
FILTER_ROWS = 10

#: Private-use characters delimiting a literal value inside a Text/Bullets string (see :func:`plain`).
PLAIN_OPEN, PLAIN_CLOSE = "\ue000", "\ue001"


def plain(value: object) -> str:
    """Mark ``value`` (a name from the data) to be shown literally inside a :class:`Text` or
    :class:`Bullets` item, however it looks (``**x**``, ``<img ...>``, ``[a](javascript:...)``)."""
    s = str(value).replace(PLAIN_OPEN, "").replace(PLAIN_CLOSE, "")
    return f"{PLAIN_OPEN}{s}{PLAIN_CLOSE}"


@dataclass(frozen=True)
class Text:
    """A paragraph. ``**bold**``, ``code`` in backticks and ``[text](url)`` links are rendered in
    both formats; wrap values from the data in :func:`plain`."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list of short texts."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table; ``csv`` is a file under ``tables/`` holding ``data`` (the full, unrenamed table;
    default ``frame``).

    Numbers are formatted per column (:func:`evalkit.report.render.format_column`): counts and
    ranks as integers, Elo and its interval to one decimal, p-values as the text prints them
    (:func:`evalkit._format.format_p`), other floats with four significant digits for the
    column's largest value and the same decimals on every row; ``formats`` maps a column to its
    own format spec (e.g. ``".2f"``).

    ``key`` names the key columns (rank, name, estimate, interval, n, verdict): the HTML shows
    them first, the other columns in a collapsed "all columns" table below, and Markdown shows
    the key table with the full one in a ``<details>`` block. ``tag`` names a text column whose
    non-empty values are shown as a tag next to the row's name (e.g. ``"preliminary"`` for thin
    rows) and mark the row. HTML tables sort by a click on a column header and, above
    :data:`FILTER_ROWS` rows, filter by a text box (a small inline script; without JavaScript
    the table reads as is).
    """

    frame: pd.DataFrame
    caption: str = ""
    floatfmt: str = ".4g"
    csv: str | None = None
    data: pd.DataFrame | None = None
    formats: dict[str, str] | None = None
    key: tuple[str, ...] | None = None
    tag: str | None = None


@dataclass(frozen=True)
class Figure:
    """A PNG under the report folder (``path`` is relative to it, e.g. ``figures/x.png``); the
    caption (plain text) says what the figure shows. ``full`` is its full-size vector version
    (SVG; shortened labels carry their full name as a tooltip), which the page links to."""

    path: str
    caption: str
    full: str | None = None


Block = Text | Bullets | Table | Figure


def table_rows(table: pd.DataFrame) -> Iterator[Any]:
    """``table.itertuples()``, each field typed as any cell (pandas-stubs give every field the
    union of all scalar types, which no format spec or arithmetic accepts)."""
    return table.itertuples()


@dataclass(frozen=True)
class Section:
    """A titled part of the report. ``anchor`` is the HTML id (default: from the title)."""

    title: str
    blocks: tuple[Block, ...]
    anchor: str = ""

    @property
    def id(self) -> str:
        return self.anchor or re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")

    @property
    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]


@dataclass
class ReportContext:
    """What a section builder gets: the inputs, the options and a place to save figures.

    Attributes
    ----------
    out_dir : Path
        The report folder.
    comparisons : DataFrame or None
        Canonical comparisons frame (already read and validated).
    scores : DataFrame or None
        Per-item score table with columns ``system``, ``item``, ``score`` and optionally
        ``task``, ``trial`` (renamed to these names by :func:`write_report`).
    read_reports : list
        :class:`evalkit.io.ReadReport` of every file read, or plain strings.
    params : dict
        Options of the run (alpha, confidence_level, adjust, pairs, test, seed, ...); section
        builders read theirs from here and may add what they computed under ``results``.
    headline : Headline
        The report's headline: a builder adds its key findings and caveats here
        (``ctx.headline.finding(...)``, see :mod:`evalkit.report.headline`).
    progress : callable or None
        ``progress(stage, done, total)`` for long steps (bootstraps, permutations); pass it to
        any library function that takes ``progress=``.
    """

    out_dir: Path
    comparisons: pd.DataFrame | None = None
    scores: pd.DataFrame | None = None
    read_reports: list[Any] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    missing_glyphs: list[str] = field(default_factory=list)
    headline: Headline = field(default_factory=Headline)
    progress: ProgressFn | None = None

    @property
    def seed(self) -> int:
        return int(self.params.get("seed", 0))

    def save_figure(self, ax_or_fig: Any, name: str, caption: str, *, svg: bool = True) -> Figure:
        """Save a matplotlib Axes/Figure as ``figures/<name>.png`` (and, with ``svg``, the
        full-size ``figures/<name>.svg`` the page links to) and return the block.

        Characters that no installed font could draw are listed in the caption (and in
        ``missing_glyphs``), so the report says when a label shows boxes."""
        from evalkit.plots._fonts import save_png, save_svg

        fig = ax_or_fig.figure if hasattr(ax_or_fig, "figure") and not hasattr(ax_or_fig, "savefig") else ax_or_fig
        folder = self.out_dir / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        missing = save_png(fig, folder / f"{safe}.png", tight=True, dpi=120, metadata={"Software": None})
        full = None
        if svg:
            save_svg(fig, folder / f"{safe}.svg")
            full = f"figures/{safe}.svg"
        _close(fig)
        if missing:
            self.missing_glyphs.extend(ch for ch in missing if ch not in self.missing_glyphs)
            shown = " ".join(f"U+{ord(ch):04X}" for ch in missing)
            caption = f"{caption} (no installed font has the characters {shown}; they are drawn as boxes.)"
        return Figure(path=f"figures/{safe}.png", caption=caption, full=full)


def _close(fig: Any) -> None:
    """Forget a figure that a caller made with pyplot (a plain ``Figure`` needs nothing)."""
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:  # a no-op for a figure pyplot does not manage
        plt.close(fig)
