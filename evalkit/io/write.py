"""Write tidy frames as CSV or Markdown (the CLI's ``--out``), without extra dependencies."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["to_markdown", "write_table"]


def _cell(value: object, floatfmt: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)):
        return format(float(value), floatfmt)
    return str(value).replace("|", "\\|")


def to_markdown(frame: pd.DataFrame, *, index: bool = False, floatfmt: str = ".6g") -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (numbers right-aligned)."""
    data = frame.reset_index() if index else frame
    cols = [str(c) for c in data.columns]
    numeric = [pd.api.types.is_numeric_dtype(data[c]) for c in data.columns]
    rows = [[_cell(v, floatfmt) for v in rec] for rec in data.itertuples(index=False)]
    head = "| " + " | ".join(cols) + " |"
    rule = "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"
    body = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([head, rule, *body]) + "\n"


def write_table(frame: pd.DataFrame, path: str | Path, *, index: bool = False) -> Path:
    """Write ``frame`` to ``path``: ``.csv`` as CSV, ``.md`` / ``.markdown`` as Markdown.

    Raises
    ------
    ValueError
        For any other suffix.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame.to_csv(path, index=index)
    elif suffix in (".md", ".markdown"):
        path.write_text(to_markdown(frame, index=index), encoding="utf-8")
    else:
        raise ValueError(f"--out must end in .csv or .md; got {path.name!r}.")
    return path
