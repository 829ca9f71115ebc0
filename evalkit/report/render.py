"""Render report sections to Markdown and to one self-contained HTML page.

All escaping is done here (through :mod:`evalkit._escape`), so a section never escapes by
hand: titles, captions, table headers and cells are plain text; :class:`Text` and
:class:`Bullets` are light markup (``**bold**``, ```code```, ``[text](url)``) in which
:func:`evalkit.report.plain` marks literal values. Only relative, fragment, http(s) and
mailto links are links; HTML from anywhere is shown, never parsed.

Numbers are formatted per column by :func:`format_column`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._escape import (
    html_text,
    label,
    markdown_line_start,
    markdown_table,
    markdown_text,
    safe_url,
)
from evalkit.report.document import PLAIN_CLOSE, PLAIN_OPEN, Bullets, Figure, Section, Table, Text

__all__ = ["format_column", "formatted", "render_markdown", "render_html", "write_documents"]

_COUNT = re.compile(r"^(n|n_.*|.*_n|count|wins|losses|ties|k|rows|games|n_games|only_a|only_b|K at B)$", re.I)
_PVALUE = re.compile(r"^(p|pvalue|p_value|p_.*|.*pvalue.*)$", re.I)
_ELO_FRIENDS = ("ci_low", "ci_high", "se", "std_err", "elo_se")


def _pvalue(v: float) -> str:
    return "0" if v == 0 else f"{v:.2e}" if v < 1e-4 else f"{v:.4f}"


def format_column(name: str, values: pd.Series, *, floatfmt: str = ".4g", elo_table: bool = False,
                  spec: str | None = None) -> list[str]:
    """Format one column for display, the same way for every row.

    - ``spec`` given: ``format(value, spec)``;
    - counts (integer dtype, or a count-like name with integral values): integers;
    - p-values (``p``, ``pvalue``, ``p_holm``, ...): 4 decimals, scientific below 1e-4;
    - Elo (``elo``, and ``ci_low``/``ci_high``/``se`` in a table with an ``elo`` column): 1 decimal;
    - other floats: four significant digits for the column's largest value, and the same
      decimals on every row (scientific for columns beyond 1e6 or below 1e-3), or ``floatfmt``
      when a section sets its own;
    - booleans as ``yes``/``no``; text as is (escaped later by the renderer); missing as empty.
    """
    def each(fn: Callable[[Any], str]) -> list[str]:  # a cell of the column: any scalar
        return ["" if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA else fn(v) for v in values]

    if pd.api.types.is_bool_dtype(values):
        return each(lambda v: "yes" if v else "no")
    if not pd.api.types.is_numeric_dtype(values):
        return each(lambda v: "yes" if v is True else "no" if v is False else str(v))
    if spec:
        return each(lambda v: format(float(v), spec))
    if pd.api.types.is_integer_dtype(values):
        return each(lambda v: str(int(v)))
    finite = values[np.isfinite(values.astype(float))]
    integral = bool(len(finite)) and bool((finite == np.round(finite)).all())
    if _COUNT.match(name) and integral:
        return each(lambda v: str(int(v)) if np.isfinite(v) else str(v))
    if _PVALUE.match(name):
        return each(lambda v: _pvalue(float(v)))
    if name.lower().startswith("elo") or (elo_table and name.lower() in _ELO_FRIENDS):
        return each(lambda v: f"{float(v):.1f}")
    if floatfmt != ".4g":  # the section asked for its own format
        return each(lambda v: format(float(v), floatfmt))
    return each(_column_format(finite.astype(float)))


def _column_format(finite: pd.Series, sig: int = 4) -> Callable[[Any], str]:
    """One format for a whole column: ``sig`` significant digits for its largest magnitude,
    the same number of decimals on every row; scientific for very large or very small columns."""
    top = float(np.abs(finite).max()) if len(finite) else 0.0
    if top >= 1e6 or 0 < top < 1e-3:
        return lambda v: f"{float(v):.{sig - 1}e}"
    decimals = int(np.clip(sig - 1 - np.floor(np.log10(top)) if top > 0 else sig - 1, 0, 6))
    return lambda v: f"{float(v):.{decimals}f}"


def formatted(table: Table) -> pd.DataFrame:
    """The table's frame with every column formatted as text (see :func:`format_column`)."""
    frame = table.frame
    elo = "elo" in [str(c).lower() for c in frame.columns]
    specs = table.formats or {}
    out = {str(c): format_column(str(c), frame[c], floatfmt=table.floatfmt, elo_table=elo, spec=specs.get(str(c)))
           for c in frame.columns}
    return pd.DataFrame(out, columns=[str(c) for c in frame.columns], dtype=object)


def _numeric_columns(frame: pd.DataFrame) -> list[bool]:
    return [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
            for c in frame.columns]


# ---- inline markup ---------------------------------------------------------------------------

_TOKEN = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)")
_SLOT = re.compile("\ue002(\\d+)\ue003")


def _inline(text: str, *, literal: Callable[[str], str], markup: Callable[[str], str],
            code: Callable[[str], str], bold: Callable[[str], str], link: Callable[[str, str], str]) -> str:
    """Render light markup; :func:`plain` values become slots first, so that markup may wrap
    them (``**{plain(name)}**``) but never look inside, and are escaped by ``literal`` last."""
    values: list[str] = []

    def slot(m: re.Match[str]) -> str:
        values.append(m.group(1))
        return f"\ue002{len(values) - 1}\ue003"

    text = re.sub(f"{PLAIN_OPEN}(.*?){PLAIN_CLOSE}", slot, text, flags=re.S)
    out, pos = [], 0
    for m in _TOKEN.finditer(text):
        out.append(markup(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append(code(m.group(1)))
        elif m.group(2) is not None:
            out.append(bold(m.group(2)))
        else:
            url = safe_url(_SLOT.sub(lambda s: values[int(s.group(1))], m.group(4)))
            out.append(link(m.group(3), url) if url else markup(m.group(3)))
        pos = m.end()
    out.append(markup(text[pos:]))
    return _SLOT.sub(lambda s: literal(values[int(s.group(1))]), "".join(out))


def _md_markup(s: str) -> str:  # author text: keep it, but no raw HTML, entity or line break
    return re.sub(r"<|&(?=#?\w+;)", lambda m: "\\" + m.group(0), label(s))


def _md_url(url: str) -> str:
    return url if re.fullmatch(r"[A-Za-z0-9_./#:?=&%~+-]+", url) else f"<{url}>"


def md_inline(text: str) -> str:
    """A Text/Bullets string as Markdown."""
    return _inline(text, literal=markdown_text, markup=_md_markup, code=lambda c: f"`{label(c).replace('`', '')}`",
                   bold=lambda b: f"**{_md_markup(b)}**", link=lambda t, u: f"[{_md_markup(t)}]({_md_url(u)})")


def html_inline(text: str) -> str:
    """A Text/Bullets string as HTML."""
    return _inline(text, literal=html_text, markup=html_text, code=lambda c: f"<code>{html_text(c)}</code>",
                   bold=lambda b: f"<strong>{html_text(b)}</strong>",
                   link=lambda t, u: f'<a href="{html_text(u)}">{html_text(t)}</a>')


def _strip_markers(text: str) -> str:
    return text.replace(PLAIN_OPEN, "").replace(PLAIN_CLOSE, "")


# ---- Markdown --------------------------------------------------------------------------------


def render_markdown(title: str, sections: Sequence[Section], *, preamble: str = "") -> str:
    """The report as GitHub-flavoured Markdown (figures as relative image links)."""
    out = [f"# {markdown_text(title)}", ""]
    if preamble:
        out += [markdown_line_start(md_inline(preamble)), ""]
    out += ["Contents:", ""] + [f"- [{markdown_text(s.title)}](#{s.id})" for s in sections] + [""]
    for sec in sections:
        out += [f'<a id="{sec.id}"></a>', "", f"## {markdown_text(sec.title)}", ""]
        for b in sec.blocks:
            if isinstance(b, Text):
                out += [markdown_line_start(md_inline(b.text)), ""]
            elif isinstance(b, Bullets):
                out += [f"- {markdown_line_start(md_inline(i))}" for i in b.items] + [""]
            elif isinstance(b, Table):
                if b.caption:
                    out += [f"*{markdown_text(_strip_markers(b.caption))}*", ""]
                shown = formatted(b)
                table = markdown_table(shown, cell=lambda v, _c: str(v))
                rule = "|" + "|".join("---:" if n else ":---" for n in _numeric_columns(b.frame)) + "|"
                lines = table.rstrip().split("\n")
                out += [lines[0], rule, *lines[2:], ""]
                if b.csv:
                    out += [f"(as CSV: [{markdown_text(b.csv)}]({_md_url(b.csv)}))", ""]
            elif isinstance(b, Figure):
                cap = markdown_text(_strip_markers(b.caption))
                out += [f"![{cap}]({_md_url(b.path)})", "", f"*{cap}*", ""]
    return "\n".join(out).rstrip() + "\n"


# ---- HTML ------------------------------------------------------------------------------------

_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,"Noto Sans CJK JP",sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45;overflow-wrap:anywhere}
.table-wrap{overflow-x:auto;max-width:100%;margin:.5em 0 1em}table{border-collapse:collapse;font-size:.85em}
caption{text-align:left;font-style:italic;color:#555;padding:.2em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top;overflow-wrap:normal}
th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
code{background:#f5f5f5;padding:0 .2em}nav ol{columns:2}"""


def _html_table(b: Table) -> str:
    shown = formatted(b)
    nums = _numeric_columns(b.frame)
    cls = ['num' if n else 'text' for n in nums]
    cap = f"<caption>{html_text(_strip_markers(b.caption))}</caption>" if b.caption else ""
    head = "".join(f'<th class="{c}" scope="col">{html_text(h)}</th>' for h, c in zip(shown.columns, cls, strict=True))
    rows = "".join("<tr>" + "".join(f'<td class="{c}">{html_text(v)}</td>' for v, c in zip(rec, cls, strict=True))
                   + "</tr>" for rec in shown.itertuples(index=False))
    return f'<div class="table-wrap"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def render_html(title: str, sections: Sequence[Section], *, preamble: str = "") -> str:
    """The report as one HTML file with inline CSS; figures are ``<img>`` with relative paths."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' file: http: https:; "
             "style-src 'unsafe-inline'\">",
             f"<title>{html_text(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html_text(title)}</h1>"]
    if preamble:
        parts.append(f"<p>{html_inline(preamble)}</p>")
    parts.append('<nav aria-label="Contents"><h2>Contents</h2><ol>'
                 + "".join(f'<li><a href="#{s.id}">{html_text(s.title)}</a></li>' for s in sections) + "</ol></nav>")
    for sec in sections:
        parts.append(f'<section id="{sec.id}"><h2>{html_text(sec.title)}</h2>')
        for b in sec.blocks:
            if isinstance(b, Text):
                parts.append(f"<p>{html_inline(b.text)}</p>")
            elif isinstance(b, Bullets):
                parts.append("<ul>" + "".join(f"<li>{html_inline(i)}</li>" for i in b.items) + "</ul>")
            elif isinstance(b, Table):
                parts.append(_html_table(b))
                if b.csv:
                    parts.append(f'<p>as CSV: <a href="{html_text(b.csv)}">{html_text(b.csv)}</a></p>')
            elif isinstance(b, Figure):
                cap = html_text(_strip_markers(b.caption))
                parts.append(f'<figure><img src="{html_text(b.path)}" alt="{cap}"><figcaption>{cap}</figcaption>'
                             "</figure>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_documents(out_dir: Path, title: str, sections: Sequence[Section], *, preamble: str = "",
                    raw_csv: bool = False) -> list[Path]:
    """Write ``report.md`` and ``report.html`` (and each table's CSV, formula cells neutralised
    unless ``raw_csv``) into ``out_dir``."""
    from evalkit._output import write_csv

    for sec in sections:
        for b in sec.blocks:
            if isinstance(b, Table) and b.csv:
                write_csv(b.frame if b.data is None else b.data, out_dir / b.csv, raw=raw_csv)
    md = out_dir / "report.md"
    md.write_text(render_markdown(title, sections, preamble=preamble), encoding="utf-8")
    page = out_dir / "report.html"
    page.write_text(render_html(title, sections, preamble=preamble), encoding="utf-8")
    return [md, page]
