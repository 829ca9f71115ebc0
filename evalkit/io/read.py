"""``read_comparisons``: one entry point from judgment logs to the canonical frame.

The format is detected from the columns (or records' keys) found in the file, or chosen
with ``format=``. Every row of the result carries ``source`` (the file) and ``line`` (where
in it); every dropped row is counted in the report by reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from evalkit._errors import where
from evalkit.io._common import Converted, keep_raw_columns
from evalkit.io._files import LINE, load_records
from evalkit.io.alpaca_eval import alpaca_eval_notes, convert_alpaca_eval, convert_alpaca_eval_csv
from evalkit.io.counts import convert_pair_counts
from evalkit.io.fastchat import convert_arena, convert_mt_bench
from evalkit.io.formats import FORMATS, check_read_options, detect_format
from evalkit.io.formats import SELF_COMPARISON as _SELF
from evalkit.io.formats import source_paths as _paths
from evalkit.io.report import ReadReport, ReadResult
from evalkit.io.schema import validate_comparisons
from evalkit.io.tables import (
    OutcomeMap,
    convert_canonical,
    convert_columns,
    convert_left_right,
)

__all__ = ["FORMATS", "check_read_options", "detect_format", "read_comparisons"]



@dataclass(frozen=True)
class _ReadOptions:
    """The options of :func:`read_comparisons` that every file's conversion needs."""

    columns: Mapping[str, str] | None = None
    constants: Mapping[str, object] | None = None
    outcome_map: OutcomeMap | None = None
    missing_outcome: str = "error"
    self_comparisons: str = "error"
    judge: str | None = None
    baseline: str | None = None
    model_name_from: str = "generator_2"
    keep: Mapping[str, str] = field(default_factory=dict)


class _Part(NamedTuple):
    """One source read and converted: its format, full frame, drop reasons, notes and kept rows."""

    format: str
    frame: pd.DataFrame
    drop: np.ndarray
    notes: list[str]
    kept: pd.DataFrame


def _convert(raw: pd.DataFrame, fmt: str, *, source: str, path: Path | None,
             opts: _ReadOptions) -> Converted:
    if fmt == "arena":
        return convert_arena(raw, source=source)
    if fmt == "mt_bench":
        return convert_mt_bench(raw, source=source)
    if fmt == "alpaca_eval":
        return convert_alpaca_eval(raw, source=source, path=path,
                                   model_name_from=opts.model_name_from)
    if fmt == "alpaca_eval_csv":
        return convert_alpaca_eval_csv(raw, source=source, path=path, baseline=opts.baseline,
                                       judge=opts.judge)
    if fmt == "left_right":
        return convert_left_right(raw, source=source)
    if fmt == "counts":
        return convert_pair_counts(raw, source=source)
    if fmt == "canonical":
        return convert_canonical(raw, source=source, missing_outcome=opts.missing_outcome)
    return convert_columns(raw, source=source, columns=opts.columns,
                           constants=opts.constants, outcome_map=opts.outcome_map,
                           missing_outcome=opts.missing_outcome)


def _one(raw: pd.DataFrame, *, source: str, path: Path | None, fmt: str | None,
         opts: _ReadOptions) -> tuple[str, pd.DataFrame, np.ndarray, list[str]]:
    if fmt is None:
        fmt = "columns" if opts.columns or opts.constants else detect_format(
            list(raw.columns), source=source)
    conv = _convert(raw, fmt, source=source, path=path, opts=opts)
    keep_raw_columns(raw, conv.frame, opts.keep, fmt=fmt, source=source)
    frame = conv.frame.rename(columns={LINE: "line"})
    frame["source"] = source
    if opts.judge is not None and "judge" not in frame.columns:
        frame["judge"] = opts.judge
    drop = conv.drop.copy()
    # raw values compared here; validate_comparisons catches '1' vs 1 after str conversion
    same = ((frame["player_a"].to_numpy() == frame["player_b"].to_numpy())
            & frame["player_a"].notna().to_numpy() & pd.isna(drop))
    if same.any() and opts.self_comparisons == "drop":
        drop[same] = _SELF
    elif same.any():
        raise ValueError(
            f"A player cannot be compared with itself: in {source}, player_a == player_b "
            f"(e.g. {frame.loc[same, 'player_a'].iloc[0]!r}) {where(same, frame['line'].to_numpy())}. "
            "Pass self_comparisons='drop' to drop and count such rows."
        )
    return fmt, frame, drop, conv.notes


def read_comparisons(
    source: str | Path | Sequence[str | Path] | pd.DataFrame,
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    constants: Mapping[str, object] | None = None,
    outcome_map: OutcomeMap | None = None,
    missing_outcome: str = "error",
    self_comparisons: str = "error",
    judge: str | None = None,
    baseline: str | None = None,
    model_name_from: str = "generator_2",
    encoding: str | None = None,
    keep_columns: Sequence[str] | Mapping[str, str] = (),
) -> ReadResult:
    """Read pairwise judgments into the canonical comparisons frame, with a report.

    Parameters
    ----------
    source : path, sequence of paths, directory or pandas.DataFrame
        A CSV/TSV, JSON Lines, JSON (list of records) or Parquet file; several files (read in
        order and concatenated); a directory (every such file below it, sorted); or a
        DataFrame. The container is recognised from the content.
    format : str, optional
        One of :data:`FORMATS`: ``"arena"``, ``"mt_bench"``, ``"alpaca_eval"``,
        ``"alpaca_eval_csv"``, ``"left_right"``, ``"canonical"``, ``"columns"``. Detected from
        the columns when omitted (``"columns"`` when ``columns``/``constants`` are given).
    columns : mapping, optional
        ``{canonical name: source column}`` for the ``"columns"`` format.
    constants : mapping, optional
        ``{canonical name: value}`` for columns with a single value (e.g. the baseline).
    outcome_map : dict or callable, optional
        Outcome labels to player_a's score (``"columns"`` format); unmapped labels are errors.
    missing_outcome : {"error", "drop"}
        What the ``"columns"`` format does with a missing outcome.
    self_comparisons : {"error", "drop"}
        A row whose two players are the same is an error, or dropped and counted.
    judge : str, optional
        Judge name for sources without a judge column (e.g. LLMFAO's GPT-4 file).
    baseline : str, optional
        Baseline of a derived AlpacaEval CSV (default: from its file name).
    model_name_from : {"generator_2", "directory"}
        How raw AlpacaEval annotations name the model (see :mod:`evalkit.io.alpaca_eval`).
    encoding : str, optional
        Text encoding of CSV/JSON files. Default: UTF-8, or UTF-16 when the file starts with
        a UTF-16 byte-order mark (a UTF-8 BOM is skipped).
    keep_columns : sequence of str, or mapping of column to who asked for it (named in errors)
        Raw columns to keep as they are, after the canonical ones (``arena``, ``left_right``,
        ``canonical`` and ``columns`` formats), e.g. per-answer lengths for style control.

    Returns
    -------
    ReadResult
        ``frame``: validated canonical frame (see :mod:`evalkit.io.schema`) with ``source``
        and ``line`` on every row; ``report``: a :class:`~evalkit.io.report.ReadReport`.

    Raises
    ------
    ValueError
        For an empty or unparsable file, a file in none of the formats, a missing column,
        an unknown outcome label, a self-comparison (unless dropped) or an invalid row; the
        message names the file, the line, the column, what was found and what is allowed.
    """
    check_read_options(format=format, self_comparisons=self_comparisons, columns=columns,
                       constants=constants)
    opts = _ReadOptions(columns=columns, constants=constants, outcome_map=outcome_map,
                        missing_outcome=missing_outcome, self_comparisons=self_comparisons,
                        judge=judge, baseline=baseline, model_name_from=model_name_from,
                        keep=dict(keep_columns) if isinstance(keep_columns, Mapping)
                        else dict.fromkeys(keep_columns, "keep_columns"))
    sources = _load_sources(source, encoding=encoding)
    parts = [_read_part(raw, source=name, path=path, fmt=format, opts=opts) for raw, name, path in sources]
    return _assemble(sources, parts)


def _load_sources(source: str | Path | Sequence[str | Path] | pd.DataFrame, *,
                  encoding: str | None) -> list[tuple[pd.DataFrame, str, Path | None]]:
    """Raw records of each source (with 1-based ``LINE``), its name and its path (None for a DataFrame)."""
    if isinstance(source, pd.DataFrame):
        if len(source) == 0:
            raise ValueError("The DataFrame passed to read_comparisons has no rows.")
        raw = source.reset_index(drop=True).copy()
        raw[LINE] = np.arange(1, len(raw) + 1)
        return [(raw, "<DataFrame>", None)]
    sources: list[tuple[pd.DataFrame, str, Path | None]] = []
    for path in _paths(source):
        raw, _ = load_records(path, encoding=encoding)
        sources.append((raw, str(path), path))
    return sources


def _read_part(raw: pd.DataFrame, *, source: str, path: Path | None, fmt: str | None,
               opts: _ReadOptions) -> _Part:
    """Convert one source and validate its kept rows; a source whose rows are all dropped is an error."""
    fmt, frame, drop, notes = _one(raw, source=source, path=path, fmt=fmt, opts=opts)
    keep = pd.isna(drop)
    if not keep.any():
        reasons = pd.Series(drop).value_counts().to_dict()
        raise ValueError(f"All {len(frame)} rows of {source} were dropped: {reasons}.")
    return _Part(fmt, frame, drop, notes, validate_comparisons(frame.loc[keep], source=source))


def _assemble(sources: list[tuple[pd.DataFrame, str, Path | None]], parts: list[_Part]) -> ReadResult:
    """Join the converted sources into one validated frame and the report of the whole read."""
    names = ", ".join(s[1] for s in sources)
    rows_read = sum(len(s[0]) for s in sources)
    formats = [p.format for p in parts]
    notes = [note for p in parts for note in p.notes]
    full = pd.concat([p.frame for p in parts], ignore_index=True)
    drop = np.concatenate([p.drop for p in parts])
    if any(f.startswith("alpaca_eval") for f in formats):
        notes += alpaca_eval_notes(full)
    if len(parts) == 1:
        out = parts[0].kept
    else:
        out = validate_comparisons(pd.concat([p.kept for p in parts], ignore_index=True), source=names)
    if "counts" in formats:
        notes.append(f"{rows_read} rows of pre-aggregated counts became {len(out)} "
                     "weighted comparison rows (one per wins_a / wins_b / ties count)")
    dropped = pd.Series(drop[~pd.isna(drop)], dtype=object).value_counts()
    report = ReadReport(
        source=names,
        format="+".join(dict.fromkeys(formats)),
        rows_read=rows_read,
        rows_kept=len(out),
        dropped={str(k): int(v) for k, v in dropped.items()},
        notes=tuple(dict.fromkeys(notes)),
    )
    return ReadResult(out, report)
