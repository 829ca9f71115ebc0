"""Plain tables: left/right/winner logs, canonical frames and any table with a column map.

``left_right`` (LLMFAO, evalica): ``left``, ``right``, ``winner`` in ``left`` / ``right`` /
``tie``; ``player_a`` = ``left``. Optional LLMFAO columns: ``prompt`` -> ``item``,
``worker`` -> ``judge``.

``canonical``: a table that already has ``player_a``, ``player_b`` and a numeric ``outcome``
(plus any optional canonical columns).

``columns``: any table, with ``columns={"player_a": "<col>", "player_b": "<col>",
"outcome": "<col>", ...}`` naming the source column of each canonical column,
``constants={"player_b": "baseline"}`` for columns with one value, and ``outcome_map``
turning the outcome column into player_a's score: a dict of labels (an unmapped label is an
error, never a tie) or a vectorised callable ``Series -> Series``. Without ``outcome_map`` the
outcome must already be numeric. Missing outcomes are an error unless
``missing_outcome="drop"`` (then they are dropped and counted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from evalkit._errors import describe_bad, where
from evalkit.io._common import (
    Converted,
    base_frame,
    keep_all,
    map_labels,
    numeric_if_possible,
    require_columns,
)
from evalkit.io._files import LINE
from evalkit.io.formats import LEFT_RIGHT_WINNERS, check_column_keys  # noqa: F401 - re-exported
from evalkit.io.schema import CANONICAL_COLUMNS

__all__ = ["LEFT_RIGHT_WINNERS", "OutcomeMap", "convert_left_right", "convert_canonical",
           "convert_columns", "check_column_keys"]


OutcomeMap = Mapping[object, float] | Callable[[pd.Series], pd.Series]

_MISSING_OUTCOME = "outcome is missing (dropped because missing_outcome='drop')"


def convert_left_right(raw: pd.DataFrame, *, source: str) -> Converted:
    """left/right/winner tables -> canonical rows (see the module docstring)."""
    require_columns(raw, ("left", "right", "winner"), fmt="left_right", source=source)
    outcome = map_labels(raw["winner"], LEFT_RIGHT_WINNERS, column="winner", source=source,
                         lines=raw[LINE].to_numpy())
    frame = base_frame(raw, raw["left"], raw["right"], outcome)
    if "prompt" in raw.columns:
        frame["item"] = raw["prompt"].to_numpy(dtype=object)
    if "worker" in raw.columns:
        frame["judge"] = raw["worker"].to_numpy(dtype=object)
    if "weight" in raw.columns:  # a comparison counted `weight` times (validated: finite, >= 0, bounded total)
        frame["weight"] = raw["weight"].to_numpy()
    return Converted(frame, keep_all(len(frame)), [])


def _outcome(
    raw: pd.DataFrame, column: str, outcome_map: OutcomeMap | None, *, source: str,
    missing_outcome: str,
) -> tuple[np.ndarray, np.ndarray]:
    values = numeric_if_possible(raw[column])
    lines = raw[LINE].to_numpy()
    missing = values.isna().to_numpy()
    if missing.any() and missing_outcome != "drop":
        raise ValueError(
            f"The '{column}' column of {source} (the outcome) has a missing value "
            f"{where(missing, lines)}. Fill it, or pass missing_outcome='drop' to drop and count "
            "such rows."
        )
    if outcome_map is None:
        if not pd.api.types.is_numeric_dtype(values):
            bad = pd.to_numeric(values, errors="coerce").isna().to_numpy() & ~missing
            raise ValueError(
                f"The '{column}' column of {source} must be player_a's numeric score in [0, 1]. "
                f"Got {describe_bad(values.to_numpy(), bad)} {where(bad, lines)} instead; pass "
                "outcome_map={label: score, ...} to translate labels."
            )
        return values.to_numpy(dtype=float), missing
    if callable(outcome_map):
        mapped = pd.Series(outcome_map(values), index=values.index)
        out = pd.to_numeric(mapped, errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(out) & ~missing
        if bad.any():
            raise ValueError(
                f"outcome_map turned the '{column}' value(s) "
                f"{describe_bad(values.to_numpy(), bad)} of {source} into no number "
                f"{where(bad, lines)}; it must return player_a's score for every present value."
            )
        return out, missing
    out = map_labels(values, outcome_map, column=column, source=source, lines=lines, skip=missing)
    return out, missing


def convert_columns(
    raw: pd.DataFrame,
    *,
    source: str,
    columns: Mapping[str, str] | None = None,
    constants: Mapping[str, Any] | None = None,
    outcome_map: OutcomeMap | None = None,
    missing_outcome: str = "error",
) -> Converted:
    """Any table with a column map -> canonical rows (see the module docstring)."""
    if missing_outcome not in ("error", "drop"):
        raise ValueError(f"missing_outcome must be 'error' or 'drop'; got {missing_outcome!r}.")
    columns = dict(columns or {})
    constants = dict(constants or {})
    check_column_keys(columns, constants)
    # canonical names present in the data are used unless mapped or given as constants
    for name in CANONICAL_COLUMNS:
        if name in raw.columns and name not in columns and name not in constants:
            columns[name] = name
    needed = [c for c in ("player_a", "player_b", "outcome") if c not in constants]
    absent = [c for c in needed if c not in columns]
    if absent:
        have = [c for c in raw.columns if c != LINE]
        raise ValueError(
            f"{source}: no source column for {absent}. Its columns are {have}; pass "
            'columns={"player_a": ..., "player_b": ..., "outcome": ...} (and/or constants=).'
        )
    require_columns(raw, list(dict.fromkeys(columns.values())), fmt="columns", source=source)
    if "outcome" in constants:
        outcome = np.full(len(raw), float(constants["outcome"]))
        missing = np.zeros(len(raw), dtype=bool)
    else:
        outcome, missing = _outcome(raw, columns["outcome"], outcome_map, source=source,
                                    missing_outcome=missing_outcome)

    def pick(name: str) -> pd.Series:
        if name in constants:
            return pd.Series(constants[name], index=raw.index, dtype=object)
        return raw[columns[name]]

    frame = base_frame(raw, pick("player_a"), pick("player_b"), outcome)
    for name in CANONICAL_COLUMNS[3:]:
        if name in ("line", "source"):
            continue
        if name in columns or name in constants:
            frame[name] = pick(name).to_numpy(dtype=object)
    drop = keep_all(len(frame))
    drop[missing] = _MISSING_OUTCOME
    return Converted(frame, drop, [])


def convert_canonical(raw: pd.DataFrame, *, source: str, missing_outcome: str = "error") -> Converted:
    """A table already in canonical columns (numeric outcome)."""
    return convert_columns(raw, source=source, missing_outcome=missing_outcome)
