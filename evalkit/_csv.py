"""CSV of a table held as numpy columns (:func:`evalkit._escape.is_column_table`), without pandas.

The bytes are those ``DataFrame.to_csv`` writes for the same table through
:func:`evalkit._output.write_csv` (``tests/test_csv_columns.py`` compares them): floats in
numpy's shortest round-trip text (``astype(str)``, as pandas does), missing values empty,
text cells and column names neutralised by :func:`evalkit._escape.neutralize_cell` unless
``raw``, and a table with a carriage return inside a text cell written with ``\\r\\n`` line ends
(so that the cell is quoted). ``rate --out`` writes its leaderboard this way: its output path
then needs no pandas (about 0.3 s of start-up).
"""

from __future__ import annotations

import csv
import io
import math
import sys
from typing import Any

import numpy as np

from evalkit._escape import ColumnTable, neutralize_cell

__all__ = ["columns_csv"]


def _texts(values: Any, raw: bool) -> list[Any]:
    """One column's cells as CSV fields."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        out = arr.astype(str).astype(object)
        out[np.isnan(arr)] = ""
        return list(out)
    if arr.dtype.kind in "iub":
        return list(arr.astype(str))
    cells: list[Any] = []
    for v in arr.tolist():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            cells.append("")
        else:
            cells.append(v if raw else neutralize_cell(v))
    return cells


def nul_escapechar(has_nul: bool) -> str | None:
    """Extra writer options for a table with a NUL in a cell: Python 3.10's csv module refuses to
    write one ("need to escape, but no escapechar set") unless an escape character is set, and with
    one it writes the NUL as is, as 3.11 and later do without (so the bytes are the same)."""
    return "\\" if has_nul and sys.version_info < (3, 11) else None


def columns_csv(table: ColumnTable, *, raw: bool = False) -> str:
    """``table`` as CSV text (see the module's docstring for the rules)."""
    names = list(table.columns)
    header = [c if raw else neutralize_cell(c) for c in names]
    cols = [_texts(table.columns[c], raw) for c in names]
    crlf = any(isinstance(v, str) and "\r" in v for col in cols for v in col)
    buf = io.StringIO()
    nul = any(isinstance(v, str) and "\0" in v for col in [header, *cols] for v in col)
    writer = csv.writer(buf, lineterminator="\r\n" if crlf else "\n", escapechar=nul_escapechar(nul))
    writer.writerow(header)
    writer.writerows(zip(*cols, strict=True))
    return buf.getvalue()
