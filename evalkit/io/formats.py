"""What a comparisons source is, before any row is read: formats, containers, paths, options.

Kept free of pandas so that a fast path (``evalkit rate`` on a Parquet file through DuckDB)
can name the format, check the header and expand the paths without importing the pandas
reader; :mod:`evalkit.io.read`, :mod:`evalkit.io._files`, :mod:`evalkit.io.schema` and the
format converters re-export these names.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["FORMATS", "LINE", "CANONICAL_COLUMNS", "ARENA_WINNERS", "LEFT_RIGHT_WINNERS", "detect_format",
           "source_paths", "check_read_options", "check_column_keys", "container_of", "check_unique_columns",
           "read_head"]

REQUIRED_COLUMNS: tuple[str, ...] = ("player_a", "player_b", "outcome", "weight")
OPTIONAL_COLUMNS: tuple[str, ...] = ("item", "task", "judge", "budget", "source", "line")
CANONICAL_COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + OPTIONAL_COLUMNS

#: Arena ``winner`` labels -> ``model_a``'s score.
ARENA_WINNERS: dict[str, float] = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
#: Left/right ``winner`` labels -> the left answer's score.
LEFT_RIGHT_WINNERS: dict[str, float] = {"left": 1.0, "right": 0.0, "tie": 0.5}

LINE = "_line"

#: Drop reason of a self-comparison under ``self_comparisons="drop"`` (every reader and engine).
SELF_COMPARISON = "a player compared with itself (dropped because self_comparisons='drop')"

# Strings read as missing in CSV files. "NA" is deliberately absent: it can be a name.
_CSV_NA = ["", "nan", "NaN", "NULL", "null", "None"]


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


#: Known formats and the columns that identify them, in detection order.
FORMATS: dict[str, tuple[str, ...]] = {
    "canonical": ("player_a", "player_b", "outcome"),
    "counts": ("player_a", "player_b", "wins_a", "wins_b"),
    "mt_bench": ("model_1", "model_2", "g1_winner", "g2_winner"),
    "arena": ("model_a", "model_b", "winner"),
    "alpaca_eval": ("generator_1", "generator_2", "preference"),
    "alpaca_eval_csv": ("model_dir|generator_2", "instruction_id", "preference"),
    "left_right": ("left", "right", "winner"),
    "columns": ("any, mapped with columns=",),
}

_SUFFIXES = {".csv", ".tsv", ".tab", ".json", ".jsonl", ".ndjson", ".parquet", ".pq", ".gz"}
def _has(columns: Sequence[str], spec: str) -> bool:
    return any(alt in columns for alt in spec.split("|"))


def detect_format(columns: Sequence[str], *, source: str = "<data>") -> str:
    """Name the format whose identifying columns are all present.

    Raises
    ------
    ValueError
        If no known format matches; the message lists the columns found and what each
        format needs.
    """
    columns = [c for c in columns if c != LINE]
    for name, needed in FORMATS.items():
        if name != "columns" and all(_has(columns, spec) for spec in needed):
            return name
    known = "; ".join(f"{n} ({', '.join(c)})" for n, c in FORMATS.items() if n != "columns")
    raise ValueError(
        f"{source} is in none of the known formats: its columns are {columns}. Known formats "
        f"(identifying columns): {known}. For another table pass "
        'columns={"player_a": ..., "player_b": ..., "outcome": ...}.'
    )


def source_paths(source: str | Path | Sequence[str | Path]) -> list[Path]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            from evalkit.io._walk import walk_files  # symlink loops end at their first repetition

            found = [p for p in walk_files(path) if p.suffix.lower() in _SUFFIXES]
            if not found:
                raise ValueError(f"{path} is a directory without any {sorted(_SUFFIXES)} file.")
            return found
        return [path]
    paths = [Path(p) for p in source]
    if not paths:
        raise ValueError("read_comparisons got an empty list of sources.")
    return paths


def check_read_options(*, format: str | None = None, self_comparisons: str = "error",
                       columns: Mapping[str, str] | None = None,
                       constants: Mapping[str, object] | None = None) -> None:
    """Raise a ValueError for options :func:`read_comparisons` does not accept."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}; got {format!r}.")
    if self_comparisons not in ("error", "drop"):
        raise ValueError(f"self_comparisons must be 'error' or 'drop'; got {self_comparisons!r}.")
    check_column_keys(columns, constants)


def check_column_keys(columns: Mapping[str, str] | None, constants: Mapping[str, object] | None) -> None:
    """Raise a ValueError when a ``columns`` / ``constants`` key is not a canonical column."""
    unknown = [k for k in list(columns or {}) + list(constants or {}) if k not in CANONICAL_COLUMNS]
    if unknown:
        raise ValueError(
            f"columns/constants keys must be canonical column names {list(CANONICAL_COLUMNS)}; "
            f"got {unknown}."
        )


def container_of(path: Path, head: bytes) -> str:
    """Name the container of ``path`` from its first bytes: parquet, json, jsonl or csv."""
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        raise ValueError(f"{path} is a zip archive (an Inspect .eval log?), not a table of comparisons (CSV/TSV, JSON, "
                         "JSON Lines or Parquet). Harness logs are read by compare, curve and report --traces.")
    if path.suffix.lower() in (".parquet", ".pq"):
        raise ValueError(f"{path} is named like a Parquet file but is not one (it does not start with the "
                         f"Parquet magic bytes 'PAR1'; it starts with {head[:8]!r}).")
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if text.startswith("["):
        return "json"
    if text.startswith("{"):
        return "jsonl"
    return "csv"


def check_unique_columns(path: Path | str, columns: list[str]) -> None:
    """Raise a ValueError when a header names a column twice (it would be silently renamed)."""
    seen: dict[str, int] = {}
    for k, name in enumerate(columns, start=1):
        if name in seen:
            raise ValueError(
                f"The header of {path} names the column {name!r} twice (columns {seen[name]} and {k}). "
                "Column names must be unique: rename or remove one of them."
            )
        seen[name] = k


def read_head(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file, decompressed when it is gzip (b"" when unreadable)."""
    with open(path, "rb") as fh:
        head = fh.read(size)
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as fh:
                return fh.read(size)
        except (OSError, EOFError, zlib.error):  # a corrupt stream: no head (the reader says why)
            return b""
    return head
