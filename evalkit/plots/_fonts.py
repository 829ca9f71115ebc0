"""Fonts for labels from user data: fall back to an installed CJK font, report missing glyphs.

matplotlib (>= 3.6) draws each character with the first font of ``font.sans-serif`` that has
it. :func:`plot_fonts` puts DejaVu Sans first and, after it, whichever CJK font is installed
(Noto Sans CJK from Debian's ``fonts-noto-cjk``, WenQuanYi from ``fonts-wqy-*``, ...), so CJK
names are drawn rather than shown as boxes. :func:`missing_glyphs` turns matplotlib's
"Glyph ... missing" warnings into the characters no installed font could draw, for the report
to say so.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterator
from functools import lru_cache
from typing import IO, Any

__all__ = ["TEXT_HINTING", "CJK_FONTS", "fallback_fonts", "plot_fonts", "apply_fonts", "save_png", "save_svg", "missing_glyphs"]

#: Candidate fallback families, in order of preference.
CJK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR", "Source Han Sans",
             "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "AR PL UMing CN")
_GLYPH = re.compile(r"Glyph (\d+) .*missing from (current )?font")


@lru_cache(maxsize=1)
def fallback_fonts() -> tuple[str, ...]:
    """The installed families of :data:`CJK_FONTS` (empty when none is installed)."""
    from matplotlib import font_manager

    have = {f.name for f in font_manager.fontManager.ttflist}
    return tuple(name for name in CJK_FONTS if name in have)


#: Text drawn without FreeType's hinting (matplotlib's own image tests draw so): text is most of a
#: figure's drawing time, and unhinted glyphs are about 40 % cheaper to lay out (0.33 ms against
#: 0.57 ms per label, ``FT2Font.set_text``) and read the same at 100 dpi.
TEXT_HINTING = "no_hinting"


@contextlib.contextmanager
def plot_fonts() -> Iterator[None]:
    """An ``rc_context`` whose font family list is DejaVu Sans followed by the installed CJK fonts
    (and text without hinting, :data:`TEXT_HINTING`)."""
    import matplotlib

    families = ["DejaVu Sans", *fallback_fonts()]
    with matplotlib.rc_context({"font.family": families, "text.hinting": TEXT_HINTING}):
        yield


def apply_fonts(fig: Any) -> None:
    """Give every text of ``fig`` (already drawn or not) the fallback family list."""
    from matplotlib.text import Text

    families = ["DejaVu Sans", *fallback_fonts()]
    for t in fig.findobj(Text):
        t.set_fontfamily(families)


def save_png(fig: Any, path: str | os.PathLike[str] | IO[bytes], *, tight: bool = False, **kwargs: Any) -> list[str]:
    """``fig.savefig(path)`` with the fallback fonts (after ``tight_layout`` if ``tight``);
    returns the characters no font could draw (their warnings are swallowed, every other
    warning passes on)."""
    import matplotlib

    apply_fonts(fig)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if tight:
            fig.tight_layout()
            # laid out once: no layout engine at all, so that savefig draws once (a "none" placeholder
            # engine still makes it run a layout pass, a full draw without pixels, before the real one)
            with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
                fig.set_layout_engine(None)  # (None would mean the rc's engine where one is set)
        fig.savefig(path, **kwargs)
    for w in caught:
        if not _GLYPH.search(str(w.message)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return missing_glyphs(caught)


def save_svg(fig: Any, path: str | os.PathLike[str]) -> None:
    """``fig`` as SVG at ``path``, the same bytes for the same figure (fixed hash salt, no date),
    each truncated tick label with its full name as a ``<title>`` tooltip
    (:func:`evalkit.plots._layout.set_tick_labels`). Call after :func:`save_png` (which lays
    the figure out and reports missing glyphs)."""
    import io
    from pathlib import Path
    from xml.sax.saxutils import escape

    import matplotlib

    from evalkit._escape import label
    from evalkit.plots._layout import tooltips

    apply_fonts(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "evalkit"}), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # glyph warnings were reported by save_png
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    for gid, full in tooltips(fig).items():
        text = text.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{escape(label(full))}</title>', 1)
    Path(path).write_text(text, encoding="utf-8")


def missing_glyphs(caught: list[warnings.WarningMessage]) -> list[str]:
    """Characters named by matplotlib's "Glyph N missing from font(s)" warnings, in order, once each."""
    out: list[str] = []
    for w in caught:
        m = _GLYPH.search(str(w.message))
        if m:
            ch = chr(int(m.group(1)))
            if ch not in out:
                out.append(ch)
    return out
