"""Load a file of records into a raw DataFrame, remembering where each record came from.

The container (CSV/TSV, JSON Lines, a JSON list or column dict, Parquet) is recognised from
the content, not the file name; gzip-compressed files (``.csv.gz``, ``.jsonl.gz``...) are
decompressed first, streamed and within the limits of :mod:`evalkit.io._limits` (bytes held,
compression ratio, line length, columns, JSON depth), whatever the file claims. Each raw frame carries a ``_line`` column: the 1-based
line of the record in a JSONL file, ``row + 1`` in a CSV (the header is line 1, so the
first record is line 2, exact unless quoted fields span lines), and the 1-based record
number in a JSON list, a JSON column dict or a Parquet file.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.io._json import check_depth, too_deep_to_parse
from evalkit.io._limits import ReadLimits, check_columns, check_lines, current_limits, read_bytes
from evalkit.io.formats import (  # noqa: F401 - re-exported
    _CSV_NA,
    _UTF16_BOMS,
    LINE,
    check_unique_columns,
    container_of,
    read_head,
)

__all__ = ["LINE", "load_records", "container_of", "read_head", "decode_text", "check_unique_columns"]

def text_encoding(data: bytes, encoding: str | None) -> str:
    """The encoding to decode ``data`` with: ``encoding``, else UTF-16 after a UTF-16 BOM, else UTF-8."""
    if encoding:
        return encoding
    if data[:2] in _UTF16_BOMS:
        return "utf-16"
    return "utf-8-sig"


def decode_text(path: Path, data: bytes, encoding: str | None = None) -> str:
    """Decode a text file; a decode error names the file, the 1-based line, the byte and the remedy."""
    enc = text_encoding(data, encoding)
    try:
        return data.decode(enc)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{path} is not valid {enc.replace('-sig', '')} text: byte {data[exc.start:exc.start + 1]!r} at "
            f"line {line} cannot be decoded ({exc.reason}). Pass encoding='...' with the file's "
            "encoding (e.g. 'latin-1', 'cp1252', 'utf-16'), or re-save the file as UTF-8."
        ) from None
    except LookupError:
        raise ValueError(f"encoding={encoding!r} is not a known text encoding.") from None


def _empty(path: Path, what: str) -> ValueError:
    return ValueError(f"{path} is empty: {what}. Expected at least one record.")


def _keys(records: list, path: Path, what: str) -> None:
    """Refuse records whose keys together name more than ``max_columns`` columns."""
    limit = current_limits().max_columns
    seen: set = set()
    for rec in records:
        seen.update(rec)
        if len(seen) > limit:
            check_columns(len(seen), str(path), what=f"distinct keys in its {what}")


def _from_json_text(path: Path, text: str) -> pd.DataFrame:
    try:
        check_depth(text.encode("utf-8", "surrogatepass"), str(path))
        obj = json.loads(text)
    except RecursionError:
        raise too_deep_to_parse(str(path)) from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. "
            "Expected a JSON list of records, or JSON Lines (one object per line)."
        ) from None
    if isinstance(obj, list):
        bad = [i for i, rec in enumerate(obj) if not isinstance(rec, dict)]
        if bad:
            raise ValueError(
                f"{path}: record {bad[0] + 1} of the JSON list is a {type(obj[bad[0]]).__name__}, "
                f"not an object ({len(bad)} such records). Each record must be a JSON object."
            )
        _keys(obj, path, "records")
        frame = pd.DataFrame.from_records(obj) if obj else pd.DataFrame()
    elif isinstance(obj, dict) and obj and all(isinstance(v, (dict, list)) for v in obj.values()):
        check_columns(len(obj), str(path))
        frame = pd.DataFrame(obj)  # column-oriented JSON, as written by DataFrame.to_json()
    elif isinstance(obj, dict):
        check_columns(len(obj), str(path))
        frame = pd.DataFrame.from_records([obj])
    else:
        raise ValueError(
            f"{path} holds a JSON {type(obj).__name__}; expected a list of records, a column "
            "dict, or JSON Lines."
        )
    if len(frame) == 0:
        raise _empty(path, "the JSON holds no records")
    frame = frame.reset_index(drop=True)
    frame[LINE] = np.arange(1, len(frame) + 1)
    return frame


def _from_jsonl(path: Path, text: str) -> pd.DataFrame:
    lines = re.split(r"\r\n|\r|\n", text)  # the line breaks JSON Lines and the line-length check count
    records: list[dict] = []
    limit = current_limits().max_depth
    columns: set = set()
    numbers: list[int] = []
    for i, line in enumerate(lines, start=1):  # JSON parsing: the one loop the readers keep
        if not line.strip():
            continue
        try:
            if line.count("[") + line.count("{") > limit:
                check_depth(line.encode("utf-8", "surrogatepass"), f"{path}: line {i}")
            rec = json.loads(line)
        except RecursionError:
            raise too_deep_to_parse(f"{path}: line {i}") from None
        except json.JSONDecodeError as exc:
            if i == 1 and len(records) == 0:
                # maybe a pretty-printed single JSON document rather than JSON Lines
                try:
                    return _from_json_text(path, text)
                except ValueError:
                    pass
            raise ValueError(
                f"{path}: line {i} is not valid JSON ({exc.msg} at column {exc.colno}): "
                f"{line[:80]!r}. Each line of a JSON Lines file must be one JSON object."
            ) from None
        if not isinstance(rec, dict):
            raise ValueError(
                f"{path}: line {i} is a JSON {type(rec).__name__}, not an object: {line[:80]!r}. "
                "Each line of a JSON Lines file must be one JSON object."
            )
        records.append(rec)
        numbers.append(i)
        columns.update(rec)
        if len(columns) > current_limits().max_columns:
            check_columns(len(columns), str(path), what="distinct keys in its records")
    if not records:
        raise _empty(path, "no JSON records")
    if len(records) == 1 and records[0] and all(
        isinstance(v, (dict, list)) for v in records[0].values()
    ):
        return _from_json_text(path, text)  # one column-oriented JSON document
    frame = pd.DataFrame.from_records(records)
    frame[LINE] = np.asarray(numbers, dtype=np.int64)
    return frame


def csv_header(first: str, sep: str, where: object) -> list[str]:
    """The cells of a CSV header line. Python 3.10's csv reader refuses a NUL ("line contains NUL";
    3.11 reads it): there the NULs are read as a private-use stand-in and put back."""
    try:
        return next(csv.reader([first], delimiter=sep), [])
    except csv.Error:
        if "\0" not in first or "\ue000" in first:
            raise ValueError(f"{where}: line 1 (the header) could not be read as CSV: {first[:200]!r}.") from None
        cells = next(csv.reader([first.replace("\0", "\ue000")], delimiter=sep), [])
        return [c.replace("\ue000", "\0") for c in cells]


def _from_csv(path: Path, data: bytes, encoding: str | None = None) -> pd.DataFrame:
    suffixes = [x.lower() for x in path.suffixes]
    sep = "\t" if {".tsv", ".tab"} & set(suffixes) else ","
    text = decode_text(path, data, encoding)
    found = re.match(r"[^\r\n]*", text)  # always matches (possibly empty)
    first = found.group() if found else ""  # the header line, whatever ends it (old Mac files: \r)
    header = csv_header(first, sep, path)
    check_columns(len(header), str(path))
    check_unique_columns(path, [h.strip() for h in header])
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=_CSV_NA,
            skip_blank_lines=False,
        )
    except pd.errors.EmptyDataError:
        raise _empty(path, "no header and no rows") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path} could not be parsed as CSV ({exc}). Known formats: CSV/TSV with a header, "
            "JSON Lines, a JSON list of records, Parquet."
        ) from None
    frame[LINE] = np.arange(2, len(frame) + 2)
    blank = frame.drop(columns=LINE).isna().all(axis=1).to_numpy()
    frame = frame.loc[~blank].reset_index(drop=True)
    if len(frame) == 0:
        from evalkit._escape import label

        raise _empty(path, f"a header ({', '.join(map(label, frame.columns[:-1]))}) but no rows")
    return frame


def load_records(path: str | Path, *, encoding: str | None = None,
                 limits: ReadLimits | Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, str]:
    """Read one file into a raw frame with a ``_line`` column.

    ``encoding`` is the text encoding of CSV/JSON files (default: UTF-8, or UTF-16 after a
    UTF-16 byte-order mark; a UTF-8 BOM is skipped). ``limits`` (a :class:`ReadLimits` or a
    mapping of its fields) bounds what the file may cost (:mod:`evalkit.io._limits`).

    Returns
    -------
    (frame, container)
        ``container`` is one of ``"csv"``, ``"jsonl"``, ``"json"``, ``"parquet"``.

    Raises
    ------
    ValueError
        If the file does not exist, is empty, exceeds a limit, or cannot be parsed (the
        message names the file and, for JSON Lines, the offending line).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist or is not a file.")
    with read_limits_of(limits):
        return _load(path, encoding)


def read_limits_of(limits: ReadLimits | Mapping[str, Any] | None):  # noqa: ANN201 - a context manager
    """``read_limits(limits)`` when limits are given, else a no-op context."""
    from contextlib import nullcontext

    from evalkit.io._limits import read_limits

    return read_limits(limits) if limits is not None else nullcontext()


_JSON_SUFFIXES = {".json", ".jsonl", ".ndjson"}


def _check_suffix(path: Path, kind: str, head: bytes) -> None:
    """A file named ``.json``/``.jsonl`` must hold JSON, one named ``.gz`` gzip: a file that is not
    what its name says is an error that says so, never silently read as something else."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    inner = suffixes[-2] if suffixes[-1:] == [".gz"] and len(suffixes) == 2 else suffixes[-1] if suffixes else ""
    if inner in _JSON_SUFFIXES and kind not in ("json", "jsonl"):
        raise ValueError(f"{path} is named like a JSON file ({inner}) but does not hold JSON: it starts with "
                         f"{head!r}, not '{{' or '['. Rename it after its content, or fix the file.")


def _load(path: Path, encoding: str | None) -> tuple[pd.DataFrame, str]:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if path.suffix.lower() == ".gz" and magic != b"\x1f\x8b":
        raise ValueError(f"{path} is named like a gzip file (.gz) but is not one: it starts with {magic!r}, not the "
                         "gzip magic bytes 1f 8b. Rename it after its content, or fix the file.")
    data = read_bytes(path)
    if not data[:4096].strip():
        raise _empty(path, "the file has no content")
    if encoding is None and data[:2] in _UTF16_BOMS:
        data = decode_text(path, data).encode("utf-8")  # UTF-16 with a BOM: sniff as text
    elif encoding is not None and not data.startswith(b"PAR1"):
        data = decode_text(path, data, encoding).encode("utf-8")
    kind = container_of(path, data[:4096])
    _check_suffix(path, kind, data[:8])
    if kind in ("csv", "jsonl"):
        check_lines(data, str(path))
    if kind == "parquet":
        try:
            import pyarrow.parquet as pq

            names = pq.read_schema(io.BytesIO(data)).names
        except Exception as exc:  # pyarrow raises several types
            raise ValueError(f"{path} looks like Parquet but could not be read: {exc}") from None
        check_columns(len(names), str(path))
        check_unique_columns(path, [n for n in names if not n.startswith("__index_level")])
        try:
            frame = pd.read_parquet(io.BytesIO(data)).reset_index(drop=True)
        except Exception as exc:  # pyarrow raises several types
            raise ValueError(f"{path} looks like Parquet but could not be read: {exc}") from None
        if len(frame) == 0:
            raise _empty(path, "the Parquet file has no rows")
        frame[LINE] = np.arange(1, len(frame) + 1)
        return frame, kind
    if kind == "csv":
        return _from_csv(path, data), kind
    text = decode_text(path, data)
    try:
        if kind == "json":
            return _from_json_text(path, text), kind
        return _from_jsonl(path, text), "jsonl"
    except UnicodeEncodeError as exc:  # a lone surrogate escaped in the JSON (e.g. "\ud800")
        raise ValueError(f"{path} holds a string that is not valid Unicode: {exc.object[exc.start:exc.end]!r} (a lone "
                         "surrogate, written in the JSON as a \\uD8xx-\\uDFxx escape without its pair). "
                         "Fix the file.") from None
