"""Helpers that phrase validation errors the same way everywhere.

Messages follow scikit-learn's shape: what was expected, what was found, how often and
where the first offence is (``"... Got 'A' in 3 rows (first at line 17) instead."``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["where", "describe_bad", "nonnegative_column"]


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


#: Largest magnitude of a score or budget evalkit accepts: means, variances and sums of squares of up
#: to 10^9 such values stay finite in float64 (1e300 would give an infinite SE and a meaningless p).
MAX_MAGNITUDE = 1e100
#: Largest total weight of a comparisons table: integers stay exact in float64 up to 2^53, and counts
#: fit int64 (beyond 9.2e18 they wrap to negative numbers).
MAX_TOTAL_WEIGHT = float(2**53)


def check_magnitude(values: np.ndarray, column: str, *, source: str = "", lines: np.ndarray | None = None,
                    raw: np.ndarray | None = None) -> None:
    """Refuse finite values beyond :data:`MAX_MAGNITUDE` in ``column`` (``source`` like ``" in x.csv"``)."""
    v = np.asarray(values, dtype=float)
    bad = np.abs(np.nan_to_num(v, nan=0.0)) > MAX_MAGNITUDE
    if bad.any():
        raise ValueError(
            f"The '{column}' column{source} must hold numbers of magnitude at most {MAX_MAGNITUDE:g}: larger ones "
            f"overflow the variance in float64 (the SE would be infinite and the test meaningless). Got "
            f"{describe_bad(v if raw is None else raw, bad)} {where(bad, lines)}. Rescale the column."
        )


def check_total_weight(weights: np.ndarray, *, source: str = "", what: str = "weight") -> None:
    """Refuse weights whose total exceeds :data:`MAX_TOTAL_WEIGHT` (counts would be inexact or overflow)."""
    total = float(np.sum(np.asarray(weights, dtype=float)))
    if not total <= MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"The '{what}' column{source} sums to {total:.3g}, more than 2^53 = {MAX_TOTAL_WEIGHT:.3g}: counts that "
            "large are not exact in float64 and overflow int64 past 9.2e18 (they would print as negative numbers). "
            "Divide the weights by a common factor."
        )
