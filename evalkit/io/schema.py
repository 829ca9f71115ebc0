"""The canonical comparisons frame: the one table every reader produces and every fit reads.

One row is one judged comparison between two players:

============  ========  =====================================================================
column        required  meaning
============  ========  =====================================================================
``player_a``  yes       first player (str)
``player_b``  yes       second player (str), different from ``player_a``
``outcome``   yes       ``player_a``'s score in [0, 1]: 1 win, 0.5 tie, 0 loss, or continuous
``weight``    yes       non-negative weight of the comparison (1.0 when the source has none)
``item``      no        prompt / instruction / item id (str), the natural cluster for paired tests
``task``      no        task id (str)
``judge``     no        who judged (annotator, worker, judge model) (str)
``budget``    no        budget at which the comparison was made (float)
``source``    no        file the row came from (str)
``line``      no        1-based line (JSONL/CSV) or record number (JSON list) in ``source``
============  ========  =====================================================================

Players are strings (numeric ids are turned into strings) so that ``"1"`` from a CSV and
``1`` from JSON are the same player. :func:`validate_comparisons` is the single gate that
every reader and every DataFrame passed by a user goes through.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit._errors import check_total_weight, describe_bad, nonnegative_column, where
from evalkit.io.formats import CANONICAL_COLUMNS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS  # noqa: F401

__all__ = [
    "REQUIRED_COLUMNS",
    "OPTIONAL_COLUMNS",
    "CANONICAL_COLUMNS",
    "validate_comparisons",
]


_STR_COLUMNS = ("player_a", "player_b", "item", "task", "judge", "source")


_NON_SCALAR = (list, tuple, dict, set, bytes, bytearray, memoryview, np.ndarray)


def _refuse_non_scalar(values: pd.Series, column: str | None, source: str | None) -> None:
    """An id must be text or a number: a list, struct (dict), array or binary value is refused, never
    turned into its printed form (``"[1, 2]"``, ``"b'..'"``)."""
    bad = values.map(lambda v: isinstance(v, _NON_SCALAR) or (isinstance(v, str) and _has_surrogate(v))).to_numpy(
        dtype=bool)
    if bad.any():
        first = values[bad].iloc[0]
        kind = "text with a lone surrogate (invalid Unicode)" if isinstance(first, str) else type(first).__name__
        src = f" of {source}" if source else ""
        raise ValueError(
            f"The '{column}' column{src} must hold text or numbers (a name or an id); got a {kind} value "
            f"({str(first)[:60]!r}) in {int(bad.sum())} rows (first at row {int(np.flatnonzero(bad)[0]) + 1}). "
            "List, struct and binary columns are not names: pick or build a text column."
        )


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _to_str(series: pd.Series, column: str | None = None, source: str | None = None) -> pd.Series:
    """Strings for ids; keeps missing values missing; 3.0 -> '3' for float-typed ids."""
    if pd.api.types.is_float_dtype(series):
        whole = series.dropna()
        if len(whole) and np.all(np.mod(whole.to_numpy(), 1) == 0):
            out = series.astype("Int64").astype("string")
            return out.astype(object).where(series.notna(), None)
    out = series.astype(object)
    mask = out.notna()
    kind = pd.api.types.infer_dtype(out, skipna=True)
    if kind not in ("string", "integer", "floating", "empty", "boolean", "decimal", "mixed-integer-float"):
        _refuse_non_scalar(out, column, source)
    elif kind == "string" and _has_surrogate("".join(pd.unique(out[mask]))):
        _refuse_non_scalar(out, column, source)
    if kind != "string":  # already str: skip the per-row map
        out[mask] = out[mask].map(str)
    return out.where(mask, None)


def validate_comparisons(frame: pd.DataFrame, *, source: str | None = None) -> pd.DataFrame:
    """Check a comparisons frame and return it in canonical form.

    Parameters
    ----------
    frame : pandas.DataFrame
        At least ``player_a``, ``player_b`` and ``outcome``; ``weight`` defaults to 1.
        Other canonical columns are kept; non-canonical columns are kept after them.
    source : str, optional
        Name used in error messages (a file name).

    Returns
    -------
    pandas.DataFrame
        A new frame with canonical dtypes and column order and a fresh ``RangeIndex``.

    Raises
    ------
    ValueError
        On a missing column, a missing player, a player compared with itself, an outcome
        that is missing or outside [0, 1], or a negative / non-finite weight. The message
        names the column, what was found, what is allowed, how many rows and where the
        first one is (``line`` when the frame has it).
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"comparisons must be a pandas DataFrame; got {type(frame).__name__}.")
    src = f" in {source}" if source else ""
    missing = [c for c in ("player_a", "player_b", "outcome") if c not in frame.columns]
    if missing:
        raise ValueError(
            f"The comparisons frame{src} lacks the required column(s) {missing}; "
            f"it has {list(frame.columns)}. Required: ['player_a', 'player_b', 'outcome']."
        )
    if len(frame) == 0:
        raise ValueError(f"The comparisons frame{src} has no rows.")
    out = frame.copy()
    out.index = pd.RangeIndex(len(out))
    if "weight" not in out.columns:
        out["weight"] = 1.0
    lines = out["line"].to_numpy() if "line" in out.columns else None

    for col in _STR_COLUMNS:
        if col in out.columns:
            out[col] = _to_str(out[col], col, source)
    for col in ("player_a", "player_b"):
        bad = out[col].isna().to_numpy()
        if bad.any():
            raise ValueError(
                f"The '{col}' column{src} must name a player. Got a missing value "
                f"{where(bad, lines)} instead."
            )
    same = (out["player_a"] == out["player_b"]).to_numpy()
    if same.any():
        raise ValueError(
            f"A player cannot be compared with itself{src}: 'player_a' == 'player_b' "
            f"({describe_bad(out['player_a'].to_numpy(), same)}) {where(same, lines)}."
        )
    outcome = pd.to_numeric(out["outcome"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(outcome) | (outcome < 0) | (outcome > 1)
    if bad.any():
        raise ValueError(
            f"The 'outcome' column{src} must be player_a's score in [0, 1] (1 win, 0.5 tie, 0 loss). "
            f"Got {describe_bad(out['outcome'].to_numpy(), bad)} {where(bad, lines)} instead."
        )
    out["outcome"] = outcome
    out["weight"] = nonnegative_column(out, "weight", allowed="finite and >= 0", source=src, lines=lines)
    check_total_weight(out["weight"].to_numpy(), source=src)
    if "budget" in out.columns:
        out["budget"] = pd.to_numeric(out["budget"], errors="coerce").astype(float)
    if "line" in out.columns:
        out["line"] = pd.to_numeric(out["line"], errors="coerce").astype("Int64")
    order = [c for c in CANONICAL_COLUMNS if c in out.columns]
    extra = [c for c in out.columns if c not in CANONICAL_COLUMNS]
    return out[order + extra]
