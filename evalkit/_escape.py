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
- :func:`markdown_table` renders a frame as a GitHub table with every cell escaped;
- :func:`distinct_labels` finds names that look alike (NFKC, invisible characters, Cyrillic and
  Greek look-alikes), warns, and shows them with their code points (every table goes through it).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import TypeIs  # typing.TypeIs from Python 3.13

__all__ = [
    "BIDI_CONTROLS", "FORMULA_PREFIXES", "label", "markdown_text", "markdown_line_start", "html_text", "plot_text",
    "neutralize_cell", "neutralize_frame", "markdown_table", "safe_url", "terminal_json", "lookalike_key",
    "code_point_label", "distinct_labels",
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
    if value is None:
        return ""
    if isinstance(value, float):  # also numpy.float64
        return "" if value != value else format(value, floatfmt)
    if getattr(getattr(value, "dtype", None), "kind", None) == "f":  # other numpy floats
        f = float(value)  # type: ignore[arg-type]  # a numpy floating scalar
        return "" if f != f else format(f, floatfmt)
    return str(value)


# What each escaper changes in printable ASCII text: a column of cells that are printable ASCII
# without these characters is returned as is, without a call per cell (the same output: see
# tests/test_fuzz.py). An escaper not listed here is called on every cell.
_ASCII_CHANGED: dict[Callable[[object], str], re.Pattern[str]] = {}


def ascii_fast_path(escaper: Callable[[object], str], changed: str) -> None:
    """Declare that ``escaper`` leaves printable ASCII text unchanged except where it holds one of
    the characters of ``changed`` (a regex character class body, e.g. ``"|"``)."""
    _ASCII_CHANGED[escaper] = re.compile(f"[{changed}]" if changed else "(?!)")


def _escaped(cells: list[str], text: Callable[[object], str]) -> list[str]:
    """``[text(c) for c in cells]``, skipped for a column of plain printable ASCII."""
    changed = _ASCII_CHANGED.get(text)
    if changed is not None:
        joined = "".join(cells)
        if joined.isascii() and joined.isprintable() and not changed.search(joined):
            return cells
    return [text(c) for c in cells]


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
    if is_column_table(frame):
        cols = list(frame.columns)
        numeric = [frame.columns[c].dtype.kind in "iuf" for c in cols]
        data = [frame.columns[c].tolist() for c in cols]
    else:
        import pandas as pd

        cols = list(frame.columns)
        numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in cols]
        data = [list(frame[c]) for c in cols] if len(cols) == len(set(cols)) else [
            list(frame.iloc[:, j]) for j in range(len(cols))]
    for j, c in enumerate(cols):  # names that look alike: told apart by their code points, with a warning
        if not numeric[j]:
            data[j] = distinct_labels(data[j], what=f"values of column {label(c)!r}") or data[j]
    rows: list[tuple[()]] = [] if cols else [()] * (0 if is_column_table(frame) else len(frame))
    head = "| " + " | ".join(text(c) for c in cols) + " |"
    rule = "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"
    if not cols:
        body = ["|  |" for _ in rows]
    else:  # column by column: a column of plain ASCII text skips the escaper (same output)
        shown = [_escaped([fmt(v, c) for v in values], text) for values, c in zip(data, cols, strict=True)]
        body = ["| " + " | ".join(rec) + " |" for rec in zip(*shown, strict=True)]
    return "\n".join([head, rule, *body]) + "\n"


# ---- look-alike names --------------------------------------------------------------------------

# Latin look-alikes among Cyrillic and Greek letters (a small table, not all of Unicode's confusables.txt)
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅУΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκα",
    "aeopcyxijsdhlqwABEKMHOPCTXIJSYABEZHIKMNOPTYXoivka")


def lookalike_key(name: str) -> str:
    """What ``name`` looks like: NFKC-normalised, format characters (zero-width, BOM, bidi) dropped,
    Cyrillic and Greek look-alikes of Latin letters folded. Two names with one key look the same."""
    if name.isascii():
        return name
    folded = unicodedata.normalize("NFKC", name)
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf").translate(_CONFUSABLES)


def code_point_label(name: str) -> str:
    """``name`` with every character but printable ASCII written as its code point (``caf\\xe9``,
    ``cafe\\u0301``): distinct names get distinct labels, whatever they look like."""
    return "".join(ch if " " <= ch <= "~" else _visible(ch) for ch in name)


_T = TypeVar("_T")


def distinct_labels(values: Sequence[_T], *, what: str = "names") -> list[_T | str] | None:
    """``values`` with every text that looks like another one (:func:`lookalike_key`) replaced by
    its :func:`code_point_label`, and a ``UserWarning`` naming them; None when nothing looks alike
    (the common case: all-ASCII text costs one pass)."""
    texts = {v for v in values if isinstance(v, str)}
    if all(t.isascii() for t in texts):
        return None
    groups: dict[str, set[str]] = {}
    for t in texts:
        groups.setdefault(lookalike_key(t), set()).add(t)
    clashes = [sorted(g) for g in groups.values() if len(g) > 1]
    if not clashes:
        return None
    import warnings

    shown = "; ".join(" and ".join(code_point_label(t) for t in g) for g in sorted(clashes)[:5])
    more = f" and {len(clashes) - 5} more groups" if len(clashes) > 5 else ""
    warnings.warn(f"{len(clashes)} group(s) of {what} look alike but differ (Unicode normalisation, invisible or "
                  f"look-alike characters): {shown}{more}. They are shown with their code points to tell them apart.",
                  UserWarning, stacklevel=3)
    clashing = {t for g in clashes for t in g}
    return [code_point_label(v) if isinstance(v, str) and v in clashing else v for v in values]


ascii_fast_path(label, "")
ascii_fast_path(markdown_text, r"\\`*\[\]<>|~&_")
ascii_fast_path(html_text, "&<>\"'")
