"""The report's document model: sections made of blocks, rendered to Markdown and to HTML.

A report is a list of :class:`Section` objects. A section is a title plus blocks:
:class:`Text` (a paragraph), :class:`Bullets`, :class:`Table` (a DataFrame) and
:class:`Figure` (a PNG saved under ``figures/`` by :meth:`ReportContext.save_figure`).
Renderers turn the same sections into ``report.md`` and a self-contained ``report.html``
(inline CSS, images linked by relative path), so both always say the same thing.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.io.write import to_markdown

__all__ = [
    "Text", "Bullets", "Table", "Figure", "Block", "Section", "ReportContext",
    "render_markdown", "render_html", "write_documents",
]


@dataclass(frozen=True)
class Text:
    """A paragraph. ``**bold**`` and ``code`` in backticks are rendered in both formats."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list of short texts."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table; ``floatfmt`` formats floats in both renderings; ``csv`` is a file under ``tables/``
    holding ``data`` (the full, unrenamed table; default ``frame``)."""

    frame: pd.DataFrame
    caption: str = ""
    floatfmt: str = ".4g"
    csv: str | None = None
    data: pd.DataFrame | None = None


@dataclass(frozen=True)
class Figure:
    """A PNG under the report folder (``path`` is relative to it, e.g. ``figures/x.png``)."""

    path: str
    caption: str


Block = Text | Bullets | Table | Figure


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
    """

    out_dir: Path
    comparisons: pd.DataFrame | None = None
    scores: pd.DataFrame | None = None
    read_reports: list[Any] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return int(self.params.get("seed", 0))

    def save_figure(self, ax_or_fig: Any, name: str, caption: str) -> Figure:
        """Save a matplotlib Axes/Figure as ``figures/<name>.png``, close it, return the block."""
        import matplotlib.pyplot as plt

        fig = ax_or_fig.figure if hasattr(ax_or_fig, "figure") and not hasattr(ax_or_fig, "savefig") else ax_or_fig
        folder = self.out_dir / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        fig.tight_layout()
        fig.savefig(folder / f"{safe}.png", dpi=120, metadata={"Software": None})
        plt.close(fig)
        return Figure(path=f"figures/{safe}.png", caption=caption)


def _fmt_frame(frame: pd.DataFrame, floatfmt: str) -> pd.DataFrame:
    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = [("" if pd.isna(v) else f"{int(v)}" if float(v).is_integer() and abs(v) < 1e15
                       else format(v, floatfmt)) for v in out[c]]
    return out.astype(object).where(out.notna(), "")


def _html_inline(text: str) -> str:
    s = html.escape(text)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    s = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', s)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", s)


def render_markdown(title: str, sections: Sequence[Section], *, preamble: str = "") -> str:
    """The report as GitHub-flavoured Markdown (figures as relative image links)."""
    out = [f"# {title}", ""]
    if preamble:
        out += [preamble, ""]
    for sec in sections:
        out += [f"## {sec.title}", ""]
        for b in sec.blocks:
            if isinstance(b, Text):
                out += [b.text, ""]
            elif isinstance(b, Bullets):
                out += [f"- {i}" for i in b.items] + [""]
            elif isinstance(b, Table):
                if b.caption:
                    out += [f"*{b.caption}*", ""]
                out += [to_markdown(_fmt_frame(b.frame, b.floatfmt)).rstrip(), ""]
                if b.csv:
                    out += [f"(as CSV: [{b.csv}]({b.csv}))", ""]
            elif isinstance(b, Figure):
                out += [f"![{b.caption}]({b.path})", "", f"*{b.caption}*", ""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
code{background:#f5f5f5;padding:0 .2em}nav ul{columns:2}"""


def render_html(title: str, sections: Sequence[Section], *, preamble: str = "") -> str:
    """The report as one HTML file with inline CSS; figures are ``<img>`` with relative paths."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    if preamble:
        parts.append(f"<p>{_html_inline(preamble)}</p>")
    parts.append("<nav><ul>" + "".join(f'<li><a href="#{s.id}">{html.escape(s.title)}</a></li>' for s in sections)
                 + "</ul></nav>")
    for sec in sections:
        parts.append(f'<section id="{sec.id}"><h2>{html.escape(sec.title)}</h2>')
        for b in sec.blocks:
            if isinstance(b, Text):
                parts.append(f"<p>{_html_inline(b.text)}</p>")
            elif isinstance(b, Bullets):
                parts.append("<ul>" + "".join(f"<li>{_html_inline(i)}</li>" for i in b.items) + "</ul>")
            elif isinstance(b, Table):
                cap = f"<caption>{_html_inline(b.caption)}</caption>" if b.caption else ""
                body = _fmt_frame(b.frame, b.floatfmt).to_html(index=False, border=0, escape=True)
                head_end = body.index(">") + 1  # end of the opening <table ...> tag
                parts.append(body[:head_end] + cap + body[head_end:])
                if b.csv:
                    parts.append(f'<p><a href="{html.escape(b.csv)}">{html.escape(b.csv)}</a></p>')
            elif isinstance(b, Figure):
                parts.append(f'<figure><img src="{html.escape(b.path)}" alt="{html.escape(b.caption)}">'
                             f"<figcaption>{_html_inline(b.caption)}</figcaption></figure>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_documents(out_dir: Path, title: str, sections: Sequence[Section], *, preamble: str = "") -> list[Path]:
    """Write ``report.md`` and ``report.html`` (and each table's CSV) into ``out_dir``."""
    for sec in sections:
        for b in sec.blocks:
            if isinstance(b, Table) and b.csv:
                path = out_dir / b.csv
                path.parent.mkdir(parents=True, exist_ok=True)
                (b.frame if b.data is None else b.data).to_csv(path, index=False)
    md = out_dir / "report.md"
    md.write_text(render_markdown(title, sections, preamble=preamble), encoding="utf-8")
    page = out_dir / "report.html"
    page.write_text(render_html(title, sections, preamble=preamble), encoding="utf-8")
    return [md, page]
