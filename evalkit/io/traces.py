"""The session table: scored submissions of agent sessions at their cumulative budget.

One row is one scored submission:

===========  ========  ======================================================================
column       required  meaning
===========  ========  ======================================================================
``system``   yes       the agent / configuration that ran the session (str)
``task``     no        the task the session worked on (str); a single task ``"all"`` if absent
``session``  yes       session id (str), unique within one (system, task)
``budget``   yes       *cumulative* budget spent by the session when it submitted (float, >= 0):
                       tokens, cost, wall or agent time; the unit is the caller's
``score``    yes       the submission's score (float); higher is better unless the analysis is
                       told ``higher_is_better=False``
``source``   no        file the row came from (str)
``line``     no        1-based line (CSV counts the header as line 1, JSONL the first record)
===========  ========  ======================================================================

Within one session the budget is cumulative, so it must not decrease in file order: a
decreasing budget almost always means per-call usage was logged instead of a running total.
:func:`validate_traces` is the single gate; :func:`read_traces` reads CSV, JSONL, Parquet or a
DataFrame (with a column mapping) and goes through it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit._errors import check_magnitude, describe_bad, nonnegative_column, where
from evalkit.io._files import load_records
from evalkit.io.schema import _to_str

__all__ = ["TRACE_COLUMNS", "validate_traces", "read_traces"]

TRACE_COLUMNS: tuple[str, ...] = ("system", "task", "session", "budget", "score")
_OPTIONAL = ("source", "line")
_ID_COLUMNS = ("system", "task", "session")


def validate_traces(
    frame: pd.DataFrame,
    *,
    source: str | None = None,
    missing_score: str = "raise",
    order: str = "check",
) -> pd.DataFrame:
    """Check a session table and return it in canonical form.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``system, session, budget, score`` and optionally ``task``, ``source``,
        ``line``; other columns are kept after the canonical ones.
    source : str, optional
        Name used in error messages (a file name).
    missing_score : {"raise", "drop"}
        What to do with rows whose score is missing (a submission that was never scored):
        raise, or drop them with a warning that counts them.
    order : {"check", "sort"}
        ``"check"`` (default) requires the budget to be non-decreasing within each session in
        row order (it is cumulative); ``"sort"`` sorts each session by budget instead.

    Returns
    -------
    pandas.DataFrame
        A new frame with string ids, float budget and score, sorted stably by
        (system, task, session, budget), with a fresh ``RangeIndex``.

    Raises
    ------
    ValueError
        On a missing column, a missing id, a budget that is missing, negative or not finite,
        a score that is not a number (or missing with ``missing_score="raise"``), or a budget
        that decreases within a session. Messages name the column, the offending values and
        the first line.
    """
    _check_options(frame, missing_score=missing_score, order=order)
    src = f" in {source}" if source else ""
    _check_shape(frame, src)
    out = frame.copy()
    out.index = pd.RangeIndex(len(out))
    if "task" not in out.columns:
        out["task"] = "all"
    lines = _lines(out)
    _canonical_ids(out, src, lines)
    _numeric_columns(out, src, lines)
    nan_score = np.isnan(out["score"].to_numpy())
    if nan_score.any():
        out = _drop_unscored(out, nan_score, missing_score=missing_score, src=src, lines=lines)
        lines = _lines(out)
    if order == "check":
        _check_cumulative(out, src, lines)
    return _canonical_order(out)


def _lines(out: pd.DataFrame) -> np.ndarray | None:
    """The ``line`` column as an array, or None when the table has none."""
    return out["line"].to_numpy() if "line" in out.columns else None


def _check_options(frame: object, *, missing_score: str, order: str) -> None:
    """Reject a non-DataFrame input and unknown option values."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"traces must be a pandas DataFrame; got {type(frame).__name__}.")
    if missing_score not in ("raise", "drop"):
        raise ValueError(f"missing_score must be 'raise' or 'drop'; got {missing_score!r}.")
    if order not in ("check", "sort"):
        raise ValueError(f"order must be 'check' or 'sort'; got {order!r}.")


def _check_shape(frame: pd.DataFrame, src: str) -> None:
    """Require the columns ``system, session, budget, score`` and at least one row."""
    required = ("system", "session", "budget", "score")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(
            f"The session table{src} lacks the required column(s) {missing}; it has "
            f"{list(frame.columns)}. Required: {list(required)} (plus optional 'task'). "
            "Use the `columns` mapping of read_traces to rename yours."
        )
    if len(frame) == 0:
        raise ValueError(f"The session table{src} has no rows.")


def _canonical_ids(out: pd.DataFrame, src: str, lines: np.ndarray | None) -> None:
    """Turn the id columns (and ``source``) into strings in place; no id may be missing."""
    for col in _ID_COLUMNS + (("source",) if "source" in out.columns else ()):
        out[col] = _to_str(out[col], col, src.removeprefix(" in ") or None)
    for col in _ID_COLUMNS:
        bad = out[col].isna().to_numpy()
        if bad.any():
            raise ValueError(f"The '{col}' column{src} must not be missing. Got a missing value {where(bad, lines)} instead.")


def _numeric_columns(out: pd.DataFrame, src: str, lines: np.ndarray | None) -> None:
    """Set ``budget`` and ``score`` to floats (a missing score stays NaN) and ``line`` to Int64, in place."""
    budget = nonnegative_column(out, "budget", allowed="a finite cumulative budget >= 0", source=src, lines=lines)
    raw_score = out["score"]
    score = pd.to_numeric(raw_score, errors="coerce").to_numpy(dtype=float)
    not_number = np.isnan(score) & raw_score.notna().to_numpy()
    if not_number.any() or np.isinf(score).any():
        bad = not_number | np.isinf(score)
        raise ValueError(
            f"The 'score' column{src} must be a finite number. Got "
            f"{describe_bad(raw_score.to_numpy(), bad)} {where(bad, lines)} instead."
        )
    check_magnitude(score, "score", source=src, lines=lines, raw=raw_score.to_numpy())
    check_magnitude(budget, "budget", source=src, lines=lines)
    out["budget"] = budget
    out["score"] = score
    if "line" in out.columns:
        out["line"] = pd.to_numeric(out["line"], errors="coerce").astype("Int64")


def _drop_unscored(
    out: pd.DataFrame, nan_score: np.ndarray, *, missing_score: str, src: str, lines: np.ndarray | None
) -> pd.DataFrame:
    """Raise on unscored submissions, or drop them with a warning that counts them."""
    if missing_score == "raise":
        raise ValueError(
            f"The 'score' column{src} is missing {where(nan_score, lines)}. Pass "
            "missing_score='drop' to drop unscored submissions (they are counted)."
        )
    key = out["system"] + "/" + out["task"] + "/" + out["session"]
    empty = sorted(set(key[nan_score]) - set(key[~nan_score]))
    lost = (
        f"; {len(empty)} session(s) are left without any submission ({', '.join(empty[:3])}"
        f"{' ...' if len(empty) > 3 else ''})" if empty else ""
    )
    warnings.warn(
        f"Dropped {int(nan_score.sum())} unscored submission(s){src} "
        f"({where(nan_score, lines)[3:]}){lost}.",
        UserWarning,
        stacklevel=3,  # the caller of validate_traces
    )
    out = out.loc[~nan_score].reset_index(drop=True)
    if len(out) == 0:
        raise ValueError(f"The session table{src} has no scored submission.")
    return out


def _check_cumulative(out: pd.DataFrame, src: str, lines: np.ndarray | None) -> None:
    """Require the budget to be non-decreasing within each session, in row order."""
    # session codes without building 'system/task/session' strings (memory of 10,000 logs' rows)
    codes = out.groupby(list(_ID_COLUMNS), sort=False).ngroup().to_numpy()
    pos = np.arange(len(out))
    order_idx = np.lexsort((pos, codes))
    b = out["budget"].to_numpy()[order_idx]
    c = codes[order_idx]
    drop = np.zeros(len(out), dtype=bool)
    drop[order_idx[1:]] = (c[1:] == c[:-1]) & (b[1:] < b[:-1])
    if drop.any():
        first = int(np.flatnonzero(drop)[0])
        raise ValueError(
            f"The 'budget' column{src} must be cumulative (non-decreasing within a session in "
            f"row order). It decreases {where(drop, lines)}: session "
            f"{out['session'].iat[first]!r} of system {out['system'].iat[first]!r}, task "
            f"{out['task'].iat[first]!r}, goes down to {out['budget'].to_numpy(dtype=float)[first]:g}. Per-call "
            "usage must be summed first; pass order='sort' if rows are merely shuffled."
        )


def _canonical_order(out: pd.DataFrame) -> pd.DataFrame:
    """Sort stably by (system, task, session, budget); canonical columns first."""
    out = out.sort_values(["system", "task", "session", "budget"], kind="stable")
    out = out.reset_index(drop=True)
    front = ["system", "task", "session", "budget", "score"] + [c for c in _OPTIONAL if c in out.columns]
    return out[front + [c for c in out.columns if c not in front]]


def _read_file(path: Path, fmt: str | None) -> tuple[pd.DataFrame, bool]:
    """Read a file into a frame; the flag says whether the first data row is line 2 (CSV)."""
    suffix = (fmt or path.suffix.lstrip(".")).lower()
    import io

    from evalkit.io._json import check_file

    if suffix in ("csv", "tsv", "txt"):  # bytes held, lines and nesting bounded before pandas parses them
        return pd.read_csv(io.BytesIO(check_file(path, "csv")), sep="\t" if suffix == "tsv" else ","), True
    if suffix in ("jsonl", "ndjson"):
        return pd.read_json(io.BytesIO(check_file(path, "jsonl")), lines=True, dtype=False), False
    if suffix == "json":
        return pd.read_json(io.BytesIO(check_file(path, "json")), dtype=False), False
    if suffix in ("parquet", "pq"):
        return pd.read_parquet(path), False
    raise ValueError(
        f"Cannot tell the format of {str(path)!r} from its suffix {path.suffix!r}; "
        "pass format='csv', 'jsonl', 'json' or 'parquet'."
    )


def read_traces(
    data: str | os.PathLike[str] | pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    format: str | None = None,  # noqa: A002 - the natural name for a file format
    missing_score: str = "raise",
    order: str = "check",
) -> pd.DataFrame:
    """Read a session table from CSV, JSONL, JSON, Parquet or a DataFrame.

    Parameters
    ----------
    data : path or pandas.DataFrame
        The table. File format from the suffix unless ``format`` is given.
    columns : mapping, optional
        Canonical name -> your column name, e.g. ``{"system": "agent", "budget": "tokens"}``.
    format : {"csv", "tsv", "jsonl", "json", "parquet"}, optional
        Overrides the suffix.
    missing_score, order
        Passed to :func:`validate_traces`.

    Returns
    -------
    pandas.DataFrame
        The validated session table; file input adds ``source`` and ``line`` columns.
    """
    lines = None
    if isinstance(data, pd.DataFrame):
        frame, source = data, None
    else:
        path = Path(data)
        if not path.exists():
            raise ValueError(f"No such file: {str(path)!r}.")
        if format is None:  # sniff the content (CSV/TSV, JSON Lines, JSON, Parquet; .gz too)
            frame, _ = load_records(path)
            lines = frame.pop("_line").to_numpy()
        else:
            try:
                frame, header = _read_file(path, format)
            except (ValueError, OSError) as exc:
                raise ValueError(f"Could not read {str(path)!r} as {format!r}: {exc}") from None
            lines = np.arange(len(frame)) + (2 if header else 1)
        source = path.name
    if columns:
        unknown = [k for k in columns if k not in TRACE_COLUMNS + _OPTIONAL]
        if unknown:
            raise ValueError(
                f"The columns mapping has unknown canonical name(s) {unknown}; allowed: "
                f"{list(TRACE_COLUMNS + _OPTIONAL)} (mapping is canonical -> yours)."
            )
        absent = [v for v in columns.values() if v not in frame.columns]
        if absent:
            raise ValueError(f"The columns mapping names {absent}, which the table lacks; it has {list(frame.columns)}.")
        frame = frame.rename(columns={v: k for k, v in columns.items()})
    if source is not None:
        frame = frame.copy()
        frame["source"] = source
        frame["line"] = lines
    return validate_traces(frame, source=source, missing_score=missing_score, order=order)
