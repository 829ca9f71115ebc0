"""Aggregate a source to counts where the rows live: DuckDB (default), pandas, or Dask.

``source -> engine reduces rows to cells -> ComparisonCounts`` is the canonical path of the
ratings: the rows never reach numpy. Every engine returns the same cells (keys identical,
weights equal) and the same :class:`~evalkit.io.ReadReport`.

- ``"duckdb"``: each file is scanned once by an embedded, multi-threaded, out-of-core
  DuckDB query (``GROUP BY player_a, player_b, outcome[, cluster]``). Invalid rows (unknown
  labels, missing values, self-comparisons, bad weights) are counted in the same query; when
  there are any, the file is read again by the pandas reader, which raises the usual error
  with its line number. The fast path never pays for locating errors.
- ``"pandas"``: :func:`~evalkit.io.read_comparisons`, then a ``groupby``. Also what DuckDB
  and Dask use for DataFrames, AlpacaEval and MT-bench files, ``constants=``, callable
  ``outcome_map``, non-UTF-8 encodings, and any file they cannot read.
- ``"dask"``: ``dask.dataframe`` on a ``dask.distributed`` cluster (``scheduler=`` address or
  client, or ``EVALKIT_DASK_SCHEDULER``): each partition is reduced to cells on a worker,
  the cells are summed here. Reads local paths, globs and fsspec URLs (``s3://...``).
"""

from __future__ import annotations

import csv
import glob as _glob
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._progress import ProgressFn, tick
from evalkit.io._files import _CSV_NA, check_unique_columns, container_of, read_head
from evalkit.io.counts import ComparisonCounts, cells_from_frame
from evalkit.io.fastpath import KEY_TYPES, cell_spec, cell_sql, first_problem
from evalkit.io.read import _paths, check_read_options, detect_format, read_comparisons
from evalkit.io.report import ReadReport, merge_reports

__all__ = ["AGGREGATION_ENGINES", "aggregate_comparisons"]

#: Engines of :func:`aggregate_comparisons`.
AGGREGATION_ENGINES: tuple[str, ...] = ("duckdb", "pandas", "dask")
_SELF = "a player compared with itself (dropped because self_comparisons='drop')"


def _expand(source: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [source] if isinstance(source, (str, Path)) else list(source)
    out: list[Path] = []
    for item in items:
        text = str(item)
        if any(ch in text for ch in "*?[") and not Path(text).exists():
            found = sorted(_glob.glob(text, recursive=True))
            if not found:
                raise ValueError(f"The pattern {text!r} matches no file.")
            out += [Path(p) for p in found]
        else:
            out += _paths(item)
    return out


def check_header(path: Path, head: bytes) -> str | None:
    """The container of a local file (None when the pandas reader must sniff it), after
    checking that its header names no column twice (ValueError)."""
    if not head.strip() or head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return None
    try:
        kind = container_of(path, head)
    except ValueError:
        return None
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except Exception:  # noqa: BLE001 - pyarrow raises several types; the pandas reader explains
            return None
        check_unique_columns(path, [n for n in names if not n.startswith("__index")])
    elif kind == "csv":
        first = head.decode("utf-8-sig", errors="replace").split("\n", 1)[0]
        sep = "\t" if _is_tsv(path) else ","
        header = next(csv.reader(io.StringIO(first), delimiter=sep), [])
        check_unique_columns(path, [h.strip() for h in header])
    return kind


def _is_tsv(path: Path) -> bool:
    return bool({".tsv", ".tab"} & {s.lower() for s in path.suffixes})


def _relation(path: Path, head: bytes) -> str | None:
    """DuckDB table function reading ``path`` (None: let the pandas reader handle it)."""
    kind = check_header(path, head)
    if kind is None:
        return None
    lit = "'" + str(path).replace("'", "''") + "'"
    with path.open("rb") as fh:
        gz = "'gzip'" if fh.read(2) == b"\x1f\x8b" else "'none'"
    if kind == "parquet":
        return f"read_parquet({lit})"
    if kind == "csv":
        sep = "\\t" if _is_tsv(path) else ","
        nulls = ", ".join("'" + v + "'" for v in _CSV_NA)
        return (f"read_csv({lit}, header=true, all_varchar=true, delim=E'{sep}', "
                f"nullstr=[{nulls}], compression={gz})")
    fmt = "'array'" if kind == "json" else "'newline_delimited'"
    return f"read_json({lit}, format={fmt}, compression={gz})"


def _run(con: Any, sql: str, fetch: str) -> Any:
    """Run a DuckDB query; a Ctrl-C that DuckDB turned into an error is a Ctrl-C again.

    DuckDB catches SIGINT while a query runs and raises ``InterruptException`` (or, through
    some of its Python paths, ``RuntimeError("Query interrupted")``); the CLI must see
    :class:`KeyboardInterrupt` (exit 130, one line), not an internal error or a fallback read.
    """
    import duckdb

    try:
        rel = con.sql(sql)
        return rel.df() if fetch == "df" else rel.fetchall()
    except duckdb.InterruptException as exc:
        raise KeyboardInterrupt from exc
    except RuntimeError as exc:
        if "interrupted" in str(exc).lower():
            raise KeyboardInterrupt from exc
        raise


def _duckdb_file(con: Any, path: Path, *, fmt: str | None, cluster: str | None,
                 opts: dict[str, Any]) -> tuple[ComparisonCounts, ReadReport] | None:
    """Cells of one file by DuckDB, or None when the pandas reader must read it."""
    import duckdb

    if not path.is_file():
        return None
    rel = _relation(path, read_head(path))
    if rel is None:
        return None
    try:
        schema = _run(con, f"DESCRIBE SELECT * FROM {rel}", "all")
    except duckdb.Error:
        return None
    types = {row[0]: str(row[1]) for row in schema}
    try:
        name = fmt or ("columns" if opts["columns"] else detect_format(list(types), source=str(path)))
    except ValueError:
        return None
    spec = cell_spec(name, list(types), cluster=cluster, mapping=opts["columns"],
                     outcome_map=opts["outcome_map"])
    if spec is None or any(types.get(c) not in KEY_TYPES for c in spec.key_columns):
        return None
    try:
        cells = _run(con, cell_sql(spec, rel), "df")
    except duckdb.Error:
        return None
    return finish_cells(cells, path=str(path), fmt=name, cluster=cluster, opts=opts,
                        per_row=max(1, len(spec.wins)), sorted_=True)


def finish_cells(cells: pd.DataFrame, *, path: str, fmt: str, cluster: str | None,
                 opts: dict[str, Any], per_row: int = 1,
                 sorted_: bool = False) -> tuple[ComparisonCounts, ReadReport] | None:
    """Clean cells -> counts and report; None when a row is invalid (the caller re-reads)."""
    self_ok = opts["self_comparisons"] == "drop"
    if len(cells) == 0 or first_problem(cells, cluster, self_ok=self_ok) is not None:
        return None
    rows = int(cells["n"].sum())
    same = (cells["player_a"] == cells["player_b"]).to_numpy(dtype=bool)
    dropped = {_SELF: int(cells.loc[same, "n"].sum())} if same.any() else {}
    cells = cells.loc[~same]
    if len(cells) == 0:
        return None
    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    cells = cells.drop(columns="bad_w")
    if not sorted_:
        cells = cells.sort_values(keys, kind="stable", ignore_index=True)
    else:
        cells = cells.reset_index(drop=True)
    cells["n"] = cells["n"].astype("int64")
    cells["weight"] = cells["weight"].astype(float)
    kept = rows - sum(dropped.values())
    notes = () if per_row == 1 else (
        f"{rows // per_row} rows of pre-aggregated counts became {kept} weighted comparison rows "
        "(one per wins_a / wins_b / ties count)",)
    report = ReadReport(source=path, format=fmt, rows_read=rows // per_row, rows_kept=kept,
                        dropped=dropped, notes=notes)
    return ComparisonCounts(cells, cluster), report


def _merge_cells(parts: list[ComparisonCounts], cluster: str | None) -> ComparisonCounts:
    if len(parts) == 1:
        return parts[0]
    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    both = pd.concat([p.cells for p in parts], ignore_index=True)
    cells = both.groupby(keys, sort=True)[["weight", "n"]].sum().reset_index()
    return ComparisonCounts(cells, cluster)


def _pandas(source: Any, cluster: str | None, read: dict[str, Any]) -> tuple[ComparisonCounts, ReadReport]:
    frame, report = read_comparisons(source, **read)
    return cells_from_frame(frame, cluster=cluster), report


def aggregate_comparisons(
    source: str | Path | Sequence[str | Path] | pd.DataFrame,
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    cluster: str | None = None,
    engine: str = "duckdb",
    scheduler: str | Any | None = None,
    encoding: str | None = None,
    progress: ProgressFn | None = None,
    **read_options: Any,
) -> tuple[ComparisonCounts, ReadReport]:
    """Read comparisons and reduce them to weighted cells, where they live.

    Parameters
    ----------
    source : path, glob, sequence of paths, directory, URL (Dask) or pandas.DataFrame
        As :func:`~evalkit.io.read_comparisons`, plus glob patterns (``"logs/*.parquet"``).
    format, columns
        As :func:`~evalkit.io.read_comparisons` (also ``"counts"``: pre-aggregated
        ``player_a, player_b, wins_a, wins_b[, ties]``).
    cluster : str, optional
        Canonical column to keep as the cluster key (``"item"``, ``"judge"``, ``"task"``),
        for cluster-robust intervals and the cluster bootstrap.
    engine : {"duckdb", "pandas", "dask"}, default "duckdb"
        Where the rows are reduced (see the module docstring).
    scheduler : str or distributed.Client, optional
        Dask scheduler address (``tcp://HOST:PORT``) or client; default
        ``EVALKIT_DASK_SCHEDULER``.
    encoding : str, optional
        Text encoding of CSV/JSON files (non-UTF-8 files take the pandas path).
    progress : callable, optional
        ``progress(stage, done, total)`` over the files (stage ``"read"``).
    **read_options
        Other keywords of :func:`~evalkit.io.read_comparisons` (``outcome_map``,
        ``self_comparisons``, ``missing_outcome``, ``judge``, ``baseline``, ...).

    Returns
    -------
    (ComparisonCounts, ReadReport)

    Raises
    ------
    ValueError
        Everything :func:`~evalkit.io.read_comparisons` raises, with the same message and
        line; an unknown engine; ImportError naming ``evalkit[dask]`` when Dask is absent.
    """
    if engine not in AGGREGATION_ENGINES:
        raise ValueError(f"engine must be one of {list(AGGREGATION_ENGINES)}; got {engine!r} instead.")
    check_read_options(format=format, columns=columns,
                       self_comparisons=read_options.get("self_comparisons", "error"),
                       constants=read_options.get("constants"))
    read = dict(format=format, columns=columns, encoding=encoding, **read_options)
    if isinstance(source, pd.DataFrame) or engine == "pandas":
        tick(progress, "read", 0, 1)
        out = _pandas(source, cluster, read)
        tick(progress, "read", 1, 1)
        return out
    fast_ok = (encoding in (None, "utf-8", "utf8") and not read_options.get("constants")
               and read_options.get("judge") is None)
    if engine == "dask":
        from evalkit.engine._dask import dask_aggregate

        return dask_aggregate(source, cluster=cluster, scheduler=scheduler, read=read,
                              progress=progress, fast=fast_ok)
    import duckdb

    paths = _expand(source)
    opts = {"columns": columns, "outcome_map": read_options.get("outcome_map"),
            "self_comparisons": read_options.get("self_comparisons", "error")}
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    done: dict[int, tuple[ComparisonCounts, ReadReport]] = {}
    slow: list[int] = []
    tick(progress, "read", 0, len(paths))
    for k, path in enumerate(paths):
        res = _duckdb_file(con, path, fmt=format, cluster=cluster, opts=opts) if fast_ok else None
        if res is None:
            slow.append(k)
        else:
            done[k] = res
        tick(progress, "read", k + 1, len(paths))
    con.close()
    if slow:  # the pandas reader: exact errors and line numbers, AlpacaEval notes across files
        files = [paths[k] for k in slow]
        counts, report = _pandas(files[0] if len(files) == 1 else files, cluster, read)
        done[slow[0]] = (counts, report)
    parts = [done[k] for k in sorted(done)]
    counts = _merge_cells([p[0] for p in parts], cluster)
    return counts, merge_reports(p[1] for p in parts)
