"""Helpers that phrase validation errors the same way everywhere.

Messages follow scikit-learn's shape: what was expected, what was found, how often and
where the first offence is (``"... Got 'A' in 3 rows (first at line 17) instead."``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["where", "describe_bad", "nonnegative_column", "list_ids"]


def where(mask: np.ndarray, lines: Sequence[int] | np.ndarray | None, *, source: str | None = None) -> str:
    """Say how many rows ``mask`` flags and where the first one is.

    ``lines`` gives the 1-based source line (or row number) of each row; without it the
    0-based row position is reported.
    """
    mask = np.asarray(mask, dtype=bool)
    idx = np.flatnonzero(mask)
    n = idx.size
    if n == 0:
        return "in 0 rows"
    first = idx[0]
    if lines is not None:
        loc = f"line {int(np.asarray(lines)[first])}"
    else:
        loc = f"row {int(first)}"
    src = f" of {source}" if source else ""
    plural = "row" if n == 1 else "rows"
    return f"in {n} {plural} (first at {loc}{src})"


def describe_bad(values: np.ndarray, mask: np.ndarray, *, limit: int = 3) -> str:
    """Quote up to ``limit`` distinct offending values."""
    bad = list(dict.fromkeys(map(repr, np.asarray(values, dtype=object)[np.asarray(mask, bool)])))
    shown = ", ".join(bad[:limit])
    more = f" and {len(bad) - limit} more" if len(bad) > limit else ""
    return shown + more


def nonnegative_column(
    frame: pd.DataFrame, column: str, *, allowed: str, source: str = "", lines: np.ndarray | None = None
) -> np.ndarray:
    """``frame[column]`` as finite floats >= 0, or a ValueError naming the offending rows.

    ``allowed`` completes "The '<column>' column must be ..."; ``source`` is a suffix such as
    ``" in votes.csv"``.
    """
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        raise ValueError(
            f"The '{column}' column{source} must be {allowed}. "
            f"Got {describe_bad(frame[column].to_numpy(), bad)} {where(bad, lines)} instead."
        )
    return values


def list_ids(ids: Sequence[object], *, limit: int = 10, sep: str = ", ") -> str:
    """At most ``limit`` ids joined by ``sep``, then "and N more" (an error line stays one short line)."""
    items = [str(i) for i in ids]
    shown = sep.join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
