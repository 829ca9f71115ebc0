"""Pieces shared by the format converters: the converter result, column checks, labels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalkit._errors import describe_bad, where
from evalkit.io._files import LINE

__all__ = ["Converted", "require_columns", "map_labels", "numeric_if_possible", "join_judge", "keep_raw_columns"]

#: Formats whose converters turn raw row k into canonical row k (extra raw columns can ride along).
ROW_FORMATS: tuple[str, ...] = ("arena", "left_right", "canonical", "columns")


class Converted(NamedTuple):
    """What a format converter returns for one raw frame.

    ``frame`` has canonical columns plus ``_line`` and still contains the rows to drop;
    ``drop`` holds, per row, ``None`` (keep) or the reason the row is dropped; ``notes``
    are observations for the report.
    """

    frame: pd.DataFrame
    drop: np.ndarray
    notes: list[str]


def keep_all(n: int) -> np.ndarray:
    """A drop array that keeps every row."""
    return np.full(n, None, dtype=object)


def require_columns(raw: pd.DataFrame, needed: Sequence[str], *, fmt: str, source: str) -> None:
    """Raise a ValueError naming the columns ``fmt`` needs that ``raw`` lacks."""
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        have = [c for c in raw.columns if c != LINE]
        raise ValueError(
            f"{source} lacks the column(s) {missing} that the '{fmt}' format needs "
            f"(required: {list(needed)}); it has {have}."
        )


def map_labels(
    values: pd.Series,
    mapping: Mapping[Any, float],
    *,
    column: str,
    source: str,
    lines: np.ndarray,
    skip: np.ndarray | None = None,
) -> np.ndarray:
    """Map categorical labels to scores; any label outside ``mapping`` is an error.

    ``skip`` marks rows that are dropped anyway (their labels are not checked).
    """
    out = values.map(mapping)
    bad = out.isna().to_numpy()
    if skip is not None:
        bad = bad & ~skip
    if bad.any():
        allowed = ", ".join(repr(k) for k in mapping)
        raise ValueError(
            f"The '{column}' column of {source} must be one of {{{allowed}}}. "
            f"Got {describe_bad(values.to_numpy(), bad)} {where(bad, lines)} instead."
        )
    return out.to_numpy(dtype=float, na_value=np.nan)


def numeric_if_possible(values: pd.Series) -> pd.Series:
    """Numbers when every present value parses as one (CSV cells arrive as strings)."""
    num = pd.to_numeric(values, errors="coerce")
    if (num.notna() | values.isna()).all():
        return num
    return values


def join_judge(values: pd.Series) -> pd.Series:
    """Judges logged as lists (FastChat: ``["gpt-4", "pair-v2"]``) become ``"gpt-4/pair-v2"``."""
    if values.dtype != object:  # a string (or numeric) column cannot hold lists
        return values
    if values.map(lambda v: isinstance(v, (list, tuple, np.ndarray))).any():
        return values.map(lambda v: "/".join(map(str, v)) if isinstance(v, (list, tuple, np.ndarray)) else v)
    return values


def base_frame(raw: pd.DataFrame, player_a: pd.Series, player_b: pd.Series, outcome) -> pd.DataFrame:
    """A canonical frame with the given players and outcome and the raw ``_line``."""
    return pd.DataFrame(
        {
            "player_a": player_a.to_numpy(dtype=object),
            "player_b": player_b.to_numpy(dtype=object),
            "outcome": np.asarray(outcome, dtype=float),
            LINE: raw[LINE].to_numpy(),
        }
    )


def keep_raw_columns(raw: pd.DataFrame, frame: pd.DataFrame, keep: Mapping[str, str], *, fmt: str,
                     source: str) -> None:
    """Copy the raw columns named in ``keep`` (``{column: who asked for it}``) into ``frame``, as they are.

    Raises a ValueError naming the column, who asked for it and the columns ``raw`` has when one is
    missing, or when ``fmt`` does not keep one canonical row per raw row (see :data:`ROW_FORMATS`).
    """
    if not keep:
        return
    if fmt not in ROW_FORMATS:
        raise ValueError(f"{source} is in the {fmt!r} format; extra columns ({', '.join(dict.fromkeys(keep.values()))}"
                         f") can be kept only for the formats {list(ROW_FORMATS)}, one comparison per row.")
    for col, why in keep.items():
        if col not in raw.columns:
            have = [c for c in raw.columns if c != LINE]
            raise ValueError(f"{source} has no column {col!r} (asked for by {why}); it has {have}.")
        if col not in frame.columns:
            frame[col] = raw[col].to_numpy()
