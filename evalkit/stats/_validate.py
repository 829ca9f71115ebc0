"""Argument checks shared by the tests and estimates (clear ``ValueError`` messages)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "ALTERNATIVES",
    "check_alternative",
    "check_confidence_level",
    "as_sample",
    "as_pairs",
    "check_pvalues",
    "named_pairs",
]

ALTERNATIVES = ("two-sided", "less", "greater")


def check_alternative(alternative: str) -> str:
    """Return ``alternative`` or raise if it is not one of :data:`ALTERNATIVES`."""
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {ALTERNATIVES}; got {alternative!r} instead."
        )
    return alternative


def check_confidence_level(confidence_level: float) -> float:
    """Return the level as float or raise if it is not strictly between 0 and 1."""
    try:
        level = float(confidence_level)
    except (TypeError, ValueError):
        raise ValueError(
            f"confidence_level must be a number in (0, 1); got {confidence_level!r} instead."
        ) from None
    if not 0.0 < level < 1.0:
        raise ValueError(
            f"confidence_level must be strictly between 0 and 1 (e.g. 0.95); got {confidence_level!r} instead."
        )
    return level


def as_sample(x: ArrayLike, *, name: str = "x", min_n: int = 2) -> np.ndarray:
    """A 1-d float array without NaN, with at least ``min_n`` observations."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 0 else arr
        if arr.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} must contain finite numbers; got {int(bad.sum())} NaN/inf values "
            f"(first at position {int(np.flatnonzero(bad)[0])}). Drop or impute them explicitly."
        )
    if arr.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} observations; got {arr.size}.")
    return arr


def as_pairs(
    x: ArrayLike, y: ArrayLike | None, *, names: Sequence[str] = ("x", "y"), min_n: int = 2
) -> np.ndarray:
    """Paired differences ``x - y`` (or ``x`` itself when ``y`` is None), checked."""
    if y is None:
        return as_sample(x, name=names[0], min_n=min_n)
    a = np.asarray(x, dtype=float).reshape(-1)
    b = np.asarray(y, dtype=float).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(
            f"Paired samples must have the same length: {names[0]} has {a.size} values and "
            f"{names[1]} has {b.size}. Align them on shared items first "
            "(evalkit.stats.paired_scores reports unmatched items)."
        )
    as_sample(a, name=names[0], min_n=min_n)
    as_sample(b, name=names[1], min_n=min_n)
    return a - b


def check_pvalues(pvalues: ArrayLike, *, name: str = "pvalues") -> np.ndarray:
    """A 1-d array of p-values, each in [0, 1]."""
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    if p.size == 0:
        raise ValueError(f"{name} is empty; a family needs at least one p-value.")
    bad = ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} must lie in [0, 1]; got {float(p[first])!r} at position {first} "
            f"({int(bad.sum())} values outside [0, 1] or NaN)."
        )
    return p


def named_pairs(pairs: Sequence[tuple[object, object]], known: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Given pairs as ``(str, str)`` tuples, and the sorted names in them that are not in ``known``."""
    out = [(str(a), str(b)) for a, b in pairs]
    return out, sorted({name for pair in out for name in pair} - set(known))
