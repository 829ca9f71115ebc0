"""One place for making data-derived text harmless in every output evalkit writes.

A model or task name comes from the user's data and may contain anything: HTML, a
``javascript:`` URL, Markdown, a newline, a right-to-left override, a spreadsheet formula.
Every renderer (Markdown, HTML, PNG labels, CSV, the terminal) goes through these functions:

- :func:`label` shows control, line-separator and bidirectional-formatting characters as
  visible escapes (``\\n``, ``\\u202e``), so a name can neither break a line nor reverse text;
- :func:`markdown_text` / :func:`html_text` escape a label for Markdown / HTML;
- :func:`plot_text` escapes a label for matplotlib (no mathtext from ``$``);
- :func:`neutralize_cell` / :func:`neutralize_frame` apply OWASP's rule against CSV formula
  injection (prefix ``'`` to a text cell starting with ``= + - @``, tab or carriage return);
- :func:`markdown_table` renders a frame as a GitHub table with every cell escaped.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import TypeIs  # typing.TypeIs from Python 3.13

__all__ = [
    "BIDI_CONTROLS", "FORMULA_PREFIXES", "label", "markdown_text", "markdown_line_start", "html_text", "plot_text",
    "neutralize_cell", "neutralize_frame", "markdown_table", "safe_url", "terminal_json",
]

#: Bidirectional formatting characters (Unicode TR 9): embeddings, overrides, isolates, marks.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: First characters that make a spreadsheet evaluate a cell (OWASP, "CSV Injection").
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# backslash-escaped everywhere in Markdown text: inline syntax, raw HTML, table cells, entities
# (``_`` only at a word boundary: ``win_rate`` stays readable, ``_x_`` is no emphasis)
_MD_INLINE = re.compile(r"([\\`*\[\]<>|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
# escaped only at the start of a label, where they would begin a block (heading, list, quote)
_MD_BLOCK_START = re.compile(r"^([#+\-=>!])|^(\d+)([.)])")


def _visible(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def label(value: object) -> str:
    """``str(value)`` with control (Cc), line/paragraph-separator and bidi characters escaped.

    >>> label("a\\nb\\u202ec")
    'a\\\\nb\\\\u202ec'
    """
    s = str(value)
    if s.isprintable() and not BIDI_CONTROLS.intersection(s):
        return s
    return "".join(_visible(ch) if ch in BIDI_CONTROLS or unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
                   for ch in s)


def terminal_json(obj: object, *, indent: int | None = 1) -> str:
    """``json.dumps(obj, ensure_ascii=False)`` with every character that is live on a terminal
    written as a JSON ``\\uXXXX`` escape: DEL and C1 controls (JSON escapes only C0), line and
    paragraph separators, bidi controls. The JSON decodes to the same data; the terminal shows
    no reversed or cleared text.

    >>> terminal_json(["a\u202eb"], indent=None)
    '["a\\\\u202eb"]'
    """
    import json

    text = json.dumps(obj, ensure_ascii=False, indent=indent)
    if text.isprintable() and not BIDI_CONTROLS.intersection(text):
        return text
    return "".join(f"\\u{ord(ch):04x}" if ch in BIDI_CONTROLS or (ch not in "\n " and unicodedata.category(ch) in
                                                                  ("Cc", "Zl", "Zp")) else ch for ch in text)


def markdown_text(value: object) -> str:
    """A label as literal Markdown text inside a line: no emphasis, link, HTML or table cell."""
    return _MD_INLINE.sub(r"\\\1", label(value))


def markdown_line_start(text: str) -> str:
    """``text`` (already Markdown) made safe to start a line: no heading, list, quote or rule."""
    return _MD_BLOCK_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", text)


def html_text(value: object) -> str:
    """A label as HTML text (also safe inside a quoted attribute)."""
    return html.escape(label(value), quote=True)


def plot_text(value: object) -> str:
    """A label for matplotlib: escaped like :func:`label`, and ``$`` never starts mathtext."""
    return label(value).replace("$", r"\$")


_SAFE_URL = re.compile(r"^(https?://|mailto:|#|\.{0,2}/|[A-Za-z0-9_.-]+(/|$|#))")


def safe_url(url: str) -> str | None:
    """``url`` when it is relative, a fragment, http(s) or mailto; None for anything else
    (``javascript:``, ``data:``, ``vbscript:`` ...)."""
    url = url.strip()
    if ":" in url.split("/", 1)[0] and not url.lower().startswith(("http://", "https://", "mailto:")):
        return None
    return url if _SAFE_URL.match(url) else None


def neutralize_cell(value: object) -> object:
    """OWASP's rule: a text cell starting with ``= + - @``, tab or CR gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def neutralize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are neutralised (numbers untouched)."""
    import pandas as pd

    out = frame.copy()
    for c in out.columns:
        if out[c].dtype == object or isinstance(out[c].dtype, pd.StringDtype | pd.CategoricalDtype):
            out[c] = out[c].astype(object).map(neutralize_cell)
    out.columns = [neutralize_cell(str(c)) if isinstance(c, str) else c for c in out.columns]
    return out


def _plain_cell(value: object, floatfmt: str) -> str:
    import numpy as np

    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)):
        return format(float(value), floatfmt)
    return str(value)


class ColumnTable(Protocol):
    """A table held as numpy columns (``columns``: name -> 1-d array) that can become a DataFrame."""

    @property
    def columns(self) -> dict[str, Any]: ...

    def to_frame(self) -> pd.DataFrame: ...


def is_column_table(obj: object) -> TypeIs[ColumnTable]:
    """Whether ``obj`` is a table held as numpy columns (a ``columns`` dict and ``to_frame()``,
    like :class:`evalkit.ratings.Leaderboard`), printable without pandas."""
    return isinstance(getattr(obj, "columns", None), dict) and hasattr(obj, "to_frame")


def markdown_table(
    frame: pd.DataFrame | ColumnTable, *, floatfmt: str = ".6g", cell: Callable[[object, str], str] | None = None,
    text: Callable[[object], str] = markdown_text,
) -> str:
    """A GitHub-flavoured Markdown table; every header and cell escaped by ``text`` (default
    :func:`markdown_text`).

    ``frame`` is a DataFrame or a column table (:func:`is_column_table`: numpy columns, no
    pandas needed). ``cell(value, column)`` formats a value as plain text before escaping
    (default: floats with ``floatfmt``, missing values empty). Numeric columns are
    right-aligned, others left-aligned.
    """
    fmt = cell or (lambda v, _c: _plain_cell(v, floatfmt))
    rows: Iterable[Sequence[Any]]
    if is_column_table(frame):
        cols = list(frame.columns)
        numeric = [frame.columns[c].dtype.kind in "iuf" for c in cols]
        rows = zip(*(frame.columns[c].tolist() for c in cols), strict=True)
    else:
        import pandas as pd

        cols = list(frame.columns)
        numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in cols]
        rows = frame.itertuples(index=False)
    head = "| " + " | ".join(text(c) for c in cols) + " |"
    rule = "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"
    body = ["| " + " | ".join(text(fmt(v, c)) for v, c in zip(rec, cols, strict=True)) + " |" for rec in rows]
    return "\n".join([head, rule, *body]) + "\n"
