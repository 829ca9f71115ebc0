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
    distinct_labels,
    html_text,
    label,
    markdown_line_start,
    markdown_table,
    markdown_text,
    safe_url,
)
from evalkit._format import format_p
from evalkit.report.document import (
    FILTER_ROWS,
    PLAIN_CLOSE,
    PLAIN_OPEN,
    Bullets,
    Figure,
    Section,
    Table,
    Text,
)
from evalkit.report.headline import Finding, Headline, resolve_sections

__all__ = ["format_column", "formatted", "render_markdown", "render_html", "write_documents", "CSP"]

_COUNT = re.compile(r"^(n|n_.*|.*_n|count|.*_count|wins|losses|ties|k|rows|games|n_games|only_a|only_b|K at B|tasks|"
                    r"runs|runs_a|runs_b|outcomes|items|sessions|trials|votes|left|right|other|decisive|units|"
                    r"games_judged|df|rank|rank_.*|.*_rank|tie_group|.*_change)$", re.I)
_PVALUE = re.compile(r"^(p|pvalue|p_value|p_.*|.*pvalue.*)$", re.I)
_ELO_FRIENDS = re.compile(r"^(ci_low|ci_high|se|std_err|elo_se)(_\w+)?$", re.I)


def _pvalue(v: float) -> str:
    return format_p(v)


def format_column(name: str, values: pd.Series, *, floatfmt: str = ".4g", elo_table: bool = False,
                  spec: str | None = None) -> list[str]:
    """Format one column for display, the same way for every row.

    - ``spec`` given: ``format(value, spec)``;
    - counts and ranks (integer dtype, or a count- or rank-like name with integral values):
      integers;
    - p-values (``p``, ``pvalue``, ``p_holm``, ...): as the text prints them,
      :func:`evalkit._format.format_p` (three significant digits, scientific below 1e-4);
    - Elo (``elo*``, and ``ci_low*``/``ci_high*``/``se`` in a table with an ``elo`` column): 1 decimal;
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
    if name.lower().startswith("elo") or (elo_table and _ELO_FRIENDS.match(name)):
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
    for c in frame.columns:  # names that look alike: told apart by their code points, with a warning
        if not pd.api.types.is_numeric_dtype(frame[c]):
            out[str(c)] = distinct_labels(out[str(c)], what=f"values of column {label(str(c))!r}") or out[str(c)]
    return pd.DataFrame(out, columns=[str(c) for c in frame.columns], dtype=object)


def _numeric_columns(frame: pd.DataFrame) -> list[bool]:
    return [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
            for c in frame.columns]


#: A table whose section names no key columns shows its first this many as the key table (the
#: rest under "all columns"), so that a key table reads at 1400 px without scrolling.
MAX_KEY_COLUMNS = 10


def _layout(b: Table) -> tuple[list[str], list[str], str | None]:
    """``(key columns, all columns, label column)`` of a table: the key columns as the section
    named them (those present; the first :data:`MAX_KEY_COLUMNS` when it named none), the tag column left out of
    the key table, and the column that shows the row tag (the first text column of the key)."""
    cols = [str(c) for c in b.frame.columns]
    key = [c for c in (b.key or cols[:MAX_KEY_COLUMNS]) if c in cols and c != b.tag]
    numeric = dict(zip(cols, _numeric_columns(b.frame), strict=True))
    label_col = next((c for c in key if not numeric[c]), None) if b.tag else None
    return key, cols, label_col


def _tags(b: Table) -> list[str]:
    if not b.tag or b.tag not in b.frame.columns:
        return [""] * len(b.frame)
    return ["" if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v)
            for v in b.frame[b.tag]]


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


def _md_table(b: Table, shown: pd.DataFrame, cols: list[str], tags: list[str], label_col: str | None) -> list[str]:
    numeric = dict(zip(shown.columns, _numeric_columns(b.frame), strict=True))
    view = shown[cols].copy()
    if label_col is not None:
        view[label_col] = [f"{v} ({t})" if t else v for v, t in zip(view[label_col], tags, strict=True)]
    table = markdown_table(view, cell=lambda v, _c: str(v))
    rule = "|" + "|".join("---:" if numeric[c] else ":---" for c in cols) + "|"
    lines = table.rstrip().split("\n")
    return [lines[0], rule, *lines[2:]]


def _md_headline(headline: Headline, titles: dict[str, str], ids: dict[str, str]) -> list[str]:
    findings, caveats, more_f, more_c = headline.shown()
    out = ["## Headline", ""]
    for group, mark in ((findings, ""), (caveats, "**Caveat:** ")):
        for item in group:
            sid = ids.get(item.section or "")
            link = f" ([{markdown_text(titles.get(sid, sid))}](#{sid}))" if sid else ""
            out.append(f"- {mark}{markdown_line_start(md_inline(item.text))}{link}")
    out += [f"- ({n} more {what} in the sections below)" for n, what in ((more_f, "findings"), (more_c, "caveats"))
            if n]
    return out + [""]


def render_markdown(title: str, sections: Sequence[Section], *, preamble: str = "",
                    headline: Headline | None = None) -> str:
    """The report as GitHub-flavoured Markdown: the headline first, then the contents and the
    sections (figures as relative image links to their full-size files; wide tables as their
    key columns, with every column in a ``<details>`` block)."""
    titles = {s.id: s.title for s in sections}
    ids = resolve_sections([(s.title, s.id) for s in sections])
    out = ['<a id="top"></a>', "", f"# {markdown_text(title)}", ""]
    if headline:
        out += _md_headline(headline, titles, ids)
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
                key, cols, label_col = _layout(b)
                tags = _tags(b)
                out += [*_md_table(b, shown, key, tags, label_col), ""]
                if len(key) < len(cols):
                    out += ["<details><summary>All columns</summary>", "",
                            *_md_table(b, shown, cols, tags, None), "", "</details>", ""]
                if b.csv:
                    out += [f"(as CSV: [{markdown_text(b.csv)}]({_md_url(b.csv)}))", ""]
            elif isinstance(b, Figure):
                cap = markdown_text(_strip_markers(b.caption))
                target = b.full or b.path
                full = f" (full size: [PNG]({_md_url(b.path)})" + (f", [SVG]({_md_url(b.full)})" if b.full else "") + ")"
                out += [f"[![{cap}]({_md_url(b.path)})]({_md_url(target)})", "", f"*{cap}*{full}", ""]
        out += ["[↑ Back to top](#top)", ""]
    return "\n".join(out).rstrip() + "\n"


# ---- HTML ------------------------------------------------------------------------------------

_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,"Noto Sans CJK JP",sans-serif;max-width:1100px;
margin:1.2em auto;padding:0 1em;color:#222;line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.6em;margin:.2em 0 .4em}h2{font-size:1.3em;margin:1.4em 0 .5em}
.headline{border:1px solid #c9d3e0;border-left:5px solid #2b5797;background:#f6f8fb;padding:.5em 1em;margin:.4em 0 1em}
.headline h2{margin:.2em 0 .3em;font-size:1.15em}.headline ul{margin:.2em 0;padding-left:1.2em}
.headline li{margin:.25em 0}.headline li.high{font-weight:500}.headline .go{font-size:.85em;white-space:nowrap}
.headline .caveats li::marker{color:#b35c00}.cv{color:#8a4500}.headline .more{font-size:.85em;color:#555;margin:.2em 0}
.table-wrap{overflow-x:auto;max-width:100%;margin:.5em 0 1em}table{border-collapse:collapse;font-size:.85em}
caption{text-align:left;font-style:italic;color:#555;padding:.2em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top;overflow-wrap:normal}
th{background:#f3f3f3;font-weight:600}.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}
th button.sort{all:unset;cursor:pointer;display:block}th button.sort:focus-visible{outline:2px solid #2b5797}
th[aria-sort=ascending] button.sort::after{content:" \\25B2";font-size:.7em}
th[aria-sort=descending] button.sort::after{content:" \\25BC";font-size:.7em}
tr.tagged td{color:#666}.tag{display:inline-block;font-size:.75em;border:1px solid #d9a441;background:#fff6e0;
color:#7a5200;border-radius:3px;padding:0 .3em;margin-left:.3em;white-space:nowrap}
input.filter{font:inherit;font-size:.85em;padding:.15em .4em;margin:.3em 0 0;width:min(20em,100%)}
details.more-cols>summary{cursor:pointer;font-size:.85em;color:#2b5797;margin:.2em 0}
figure{margin:1em 0}.fig{overflow-x:auto;max-width:100%}.fig img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}
code{background:#f5f5f5;padding:0 .2em}nav ol{columns:2;column-gap:2em}nav li{break-inside:avoid}
p.top{font-size:.8em;text-align:right;margin:.3em 0 0}
@media (max-width:640px){body{margin:.6em auto;padding:0 .6em}h1{font-size:1.3em}nav ol{columns:1}
table{font-size:.78em}th,td{padding:.2em .3em}.fig img{max-width:200%;width:auto}.headline{padding:.4em .6em}}"""

# Sorting (click a header; numbers by their value, missing last) and filtering (a text box above
# long tables). Allowed by its hash in the page's Content-Security-Policy; without it the page reads the same.
_SCRIPT = """(function(){'use strict';
function num(td){var v=td.getAttribute('data-v');if(v===null||v===''){return null;}var f=parseFloat(v);return isNaN(f)?null:f;}
function sortBy(t,i,th){var dir=th.getAttribute('aria-sort')==='ascending'?'descending':'ascending';
var heads=t.tHead.rows[0].cells;for(var h=0;h<heads.length;h++){heads[h].setAttribute('aria-sort','none');}
th.setAttribute('aria-sort',dir);var isNum=th.classList.contains('num');var body=t.tBodies[0];
var rows=Array.prototype.slice.call(body.rows);var s=dir==='ascending'?1:-1;
rows.sort(function(r1,r2){var a=r1.cells[i],b=r2.cells[i];if(isNum){var x=num(a),y=num(b);
if(x===null&&y===null){return 0;}if(x===null){return 1;}if(y===null){return -1;}return s*(x-y);}
return s*a.textContent.localeCompare(b.textContent,undefined,{numeric:true});});
for(var k=0;k<rows.length;k++){body.appendChild(rows[k]);}}
function filterRows(t,q){q=q.toLowerCase();var rows=t.tBodies[0].rows;
for(var k=0;k<rows.length;k++){rows[k].hidden=q!==''&&rows[k].textContent.toLowerCase().indexOf(q)<0;}}
var tables=document.querySelectorAll('table.sortable');
Array.prototype.forEach.call(tables,function(t){var heads=t.tHead.rows[0].cells;
Array.prototype.forEach.call(heads,function(th,i){var b=document.createElement('button');b.type='button';b.className='sort';
b.title='sort by this column';while(th.firstChild){b.appendChild(th.firstChild);}th.appendChild(b);
th.setAttribute('aria-sort','none');b.addEventListener('click',function(){sortBy(t,i,th);});});
if(t.tBodies[0].rows.length>Number(t.getAttribute('data-filter')||1e9)){var box=document.createElement('input');
box.type='search';box.className='filter';box.placeholder='Filter rows';box.setAttribute('aria-label','Filter the rows of this table');
box.addEventListener('input',function(){filterRows(t,box.value);});var wrap=t.parentNode;wrap.parentNode.insertBefore(box,wrap);}});
})();"""


def _script_hash() -> str:
    import base64
    import hashlib

    return "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")


#: The page's Content-Security-Policy: nothing from the network, the one inline script by its hash.
CSP = ("default-src 'none'; img-src 'self' file:; style-src 'unsafe-inline'; "
       f"script-src '{_script_hash()}'; base-uri 'none'; form-action 'none'")


def _header(name: str) -> str:
    return html_text(name).replace("_", "_<wbr>")


def _html_table(b: Table, shown: pd.DataFrame, cols: list[str], tags: list[str], label_col: str | None,
                *, key: bool) -> str:
    numeric = dict(zip(shown.columns, _numeric_columns(b.frame), strict=True))
    cls = {c: "num" if numeric[c] else "text" for c in cols}
    cap = f"<caption>{html_text(_strip_markers(b.caption))}</caption>" if b.caption and key else ""
    head = "".join(f'<th class="{cls[c]}" scope="col">{_header(c)}</th>' for c in cols)
    raw = {c: b.frame[c].to_numpy() for c in cols if numeric[c]}
    rows = []
    for i in range(len(shown)):
        cells = []
        for c in cols:
            text = html_text(shown[c].iat[i])
            if c in raw:
                v = raw[c][i]
                val = "" if v is None or v is pd.NA or not np.isfinite(float(v)) else repr(float(v))
                cells.append(f'<td class="num" data-v="{val}">{text}</td>')
            else:
                tag = f'<span class="tag">{html_text(tags[i])}</span>' if c == label_col and tags[i] else ""
                cells.append(f'<td class="text">{text}{tag}</td>')
        row_cls = ' class="tagged"' if label_col is not None and tags[i] else ""
        rows.append(f"<tr{row_cls}>" + "".join(cells) + "</tr>")
    kind = "sortable key" if key else "sortable"
    return (f'<div class="table-wrap"><table class="{kind}" data-filter="{FILTER_ROWS}">{cap}<thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table></div>')


def _table_html(b: Table) -> str:
    shown = formatted(b)
    key, cols, label_col = _layout(b)
    tags = _tags(b)
    out = _html_table(b, shown, key, tags, label_col, key=True)
    if len(key) < len(cols):
        out += (f'<details class="more-cols"><summary>All {len(cols)} columns</summary>'
                + _html_table(b, shown, cols, tags, None, key=False) + "</details>")
    return out


def _png_size(path: Path) -> tuple[int, int] | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _figure_html(b: Figure, root: Path | None) -> str:
    cap = html_text(_strip_markers(b.caption))
    size = _png_size(root / b.path) if root is not None else None
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    src = html_text(b.path)
    target = html_text(b.full or b.path)
    links = f'<a href="{src}">PNG</a>' + (f' · <a href="{html_text(b.full)}">SVG</a>' if b.full else "")
    tip = " (hover a shortened label for its full name)" if b.full else ""
    return (f'<figure><div class="fig"><a href="{target}"><img src="{src}" alt="{cap}"{dims}></a></div>'
            f'<figcaption>{cap} <span class="full">Full size: {links}{tip}.</span></figcaption></figure>')


def _html_headline(headline: Headline, titles: dict[str, str], ids: dict[str, str]) -> str:
    findings, caveats, more_f, more_c = headline.shown()

    def item(f: Finding, caveat: bool) -> str:
        sid = ids.get(f.section or "")
        go = f' <a class="go" href="#{html_text(sid)}">{html_text(titles.get(sid, sid))} ↓</a>' if sid else ""
        mark = '<strong class="cv">Caveat:</strong> ' if caveat else ""
        return f'<li class="{f.severity}">{mark}{html_inline(f.text)}{go}</li>'

    parts = ['<div class="headline" id="headline" role="region" aria-labelledby="headline-title">',
             '<h2 id="headline-title">Headline</h2>']
    if findings:
        parts.append('<ul class="findings">' + "".join(item(f, False) for f in findings) + "</ul>")
    if caveats:
        parts.append('<ul class="caveats">' + "".join(item(f, True) for f in caveats) + "</ul>")
    more = [f"{n} more {what}" for n, what in ((more_f, "findings"), (more_c, "caveats")) if n]
    if more:
        parts.append(f'<p class="more">{" and ".join(more)} in the sections below.</p>')
    return "".join(parts) + "</div>"


def render_html(title: str, sections: Sequence[Section], *, preamble: str = "", headline: Headline | None = None,
                root: Path | None = None) -> str:
    """The report as one HTML file with inline CSS and one inline script (allowed by its hash
    under a strict Content-Security-Policy, :data:`CSP`); the headline first; figures are
    ``<img>`` with relative paths, each linking to its full-size PNG/SVG (``root``: the report
    folder, to give each image its size)."""
    titles = {s.id: s.title for s in sections}
    ids = resolve_sections([(s.title, s.id) for s in sections])
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
             f"<title>{html_text(title)}</title><style>{_CSS}</style></head><body>",
             f'<header id="top"><h1>{html_text(title)}</h1></header>']
    if headline:
        parts.append(_html_headline(headline, titles, ids))
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
                parts.append(_table_html(b))
                if b.csv:
                    parts.append(f'<p>as CSV: <a href="{html_text(b.csv)}">{html_text(b.csv)}</a></p>')
            elif isinstance(b, Figure):
                parts.append(_figure_html(b, root))
        parts.append('<p class="top"><a href="#top">↑ Back to top</a></p></section>')
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"


def write_documents(out_dir: Path, title: str, sections: Sequence[Section], *, preamble: str = "",
                    raw_csv: bool = False, headline: Headline | None = None) -> list[Path]:
    """Write ``report.md`` and ``report.html`` (and each table's CSV, formula cells neutralised
    unless ``raw_csv``) into ``out_dir``."""
    from evalkit._output import write_csv

    for sec in sections:
        for b in sec.blocks:
            if isinstance(b, Table) and b.csv:
                write_csv(b.frame if b.data is None else b.data, out_dir / b.csv, raw=raw_csv)
    md = out_dir / "report.md"
    md.write_text(render_markdown(title, sections, preamble=preamble, headline=headline), encoding="utf-8")
    page = out_dir / "report.html"
    page.write_text(render_html(title, sections, preamble=preamble, headline=headline, root=out_dir),
                    encoding="utf-8")
    return [md, page]
