"""Aggregate a source to counts where the rows live: DuckDB (default), pandas, or Dask.

``source -> engine reduces rows to cells -> ComparisonCounts`` is the canonical path of the
ratings: the rows never reach numpy. Every engine returns the same cells (keys identical,
weights equal) and the same :class:`~evalkit.io.ReadReport`.

- ``"duckdb"``: each file is scanned once by an embedded, multi-threaded, out-of-core
  DuckDB query (``GROUP BY player_a, player_b, outcome[, cluster]``). Invalid rows (unknown
  labels, missing values, self-comparisons, bad weights) are counted in the same query; when
  there are any, the file is read again by the pandas reader, which raises the usual error
  with its line number. The fast path never pays for locating errors. A Parquet file whose
  player and label columns are dictionary-encoded text (no weights, no cluster) is counted
  on its dictionary codes instead (:mod:`evalkit.engine._arrow`, pyarrow and ``np.bincount``
  on one core, about a third of DuckDB's CPU time; the same cells, tested), and DuckDB is
  then not even imported.
- ``"pandas"``: :func:`~evalkit.io.read_comparisons`, then a ``groupby``. Also what DuckDB
  and Dask use for DataFrames, AlpacaEval and MT-bench files, ``constants=``, callable
  ``outcome_map``, non-UTF-8 encodings, and any file they cannot read.
- ``"dask"``: ``dask.dataframe`` on a ``dask.distributed`` cluster (``scheduler=`` address or
  client, or ``EVALKIT_DASK_SCHEDULER``): each partition is reduced to cells on a worker,
  the cells are summed here. Reads local paths, globs and fsspec URLs (``s3://...``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._lazy import is_dataframe
from evalkit._progress import ProgressFn, tick
from evalkit.engine._duckdb import configure, connect, duckdb_file_cells
from evalkit.engine._names import AGGREGATION_ENGINES
from evalkit.io.counts import ComparisonCounts
from evalkit.io.fastpath import first_problem
from evalkit.io.formats import SELF_COMPARISON as _SELF
from evalkit.io.formats import check_read_options, source_paths
from evalkit.io.report import ReadReport, merge_reports

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AGGREGATION_ENGINES", "aggregate_comparisons"]



def _expand(source: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [source] if isinstance(source, (str, Path)) else list(source)
    out: list[Path] = []
    for item in items:
        text = str(item)
        if any(ch in text for ch in "*?[") and not Path(text).exists():
            from evalkit.io._walk import glob_files  # symlink loops end at their first repetition

            found = glob_files(text)
            if not found:
                raise ValueError(f"The pattern {text!r} matches no file.")
            out += found
        else:
            out += source_paths(item)
    return out


def finish_cells(cells: Mapping[str, Any] | pd.DataFrame, *, path: str, fmt: str, cluster: str | None,
                 opts: dict[str, Any], per_row: int = 1,
                 sorted_: bool = False) -> tuple[ComparisonCounts, ReadReport] | None:
    """Clean cells (numpy columns, or a DataFrame from Dask) -> counts and report; None when a
    row is invalid (the caller re-reads the file with the pandas reader)."""
    self_ok = opts["self_comparisons"] == "drop"
    if len(cells["n"]) == 0 or first_problem(cells, cluster, self_ok=self_ok) is not None:
        return None
    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    if not sorted_:  # Dask's partial sums: a pandas frame, sorted by pandas
        if not is_dataframe(cells):
            raise TypeError("finish_cells: unsorted cells must be a DataFrame (Dask's partial sums).")
        cells = cells.sort_values(keys, kind="stable", ignore_index=True)
    cols = {k: np.asarray(cells[k]) for k in keys}
    n = np.asarray(cells["n"]).astype(np.int64)
    rows = int(n.sum())
    same = cols["player_a"].astype(object) == cols["player_b"].astype(object)
    dropped = {_SELF: int(n[same].sum())} if same.any() else {}
    if same.any():
        cols = {k: v[~same] for k, v in cols.items()}
    cols["weight"] = np.asarray(cells["weight"], dtype=float)[~same]
    if not float(cols["weight"].sum()) <= 2.0**53:  # evalkit._errors.MAX_TOTAL_WEIGHT: the pandas reader says why
        return None
    cols["n"] = n[~same]
    if len(cols["n"]) == 0:
        return None
    kept = rows - sum(dropped.values())
    notes = () if per_row == 1 else (
        f"{rows // per_row} rows of pre-aggregated counts became {kept} weighted comparison rows "
        "(one per wins_a / wins_b / ties count)",)
    report = ReadReport(source=path, format=fmt, rows_read=rows // per_row, rows_kept=kept,
                        dropped=dropped, notes=notes)
    return ComparisonCounts(cols, cluster), report


def _duckdb_file(con: Any, path: Path, *, cluster: str | None, **kw: Any
                 ) -> tuple[ComparisonCounts, ReadReport] | None:
    """Counts and report of one file by DuckDB, or None (the pandas reader reads it)."""
    from evalkit.engine._arrow import dictionary_rows

    got = duckdb_file_cells(con, path, cluster=cluster, flat=dictionary_rows, **kw)
    if got is None:
        return None
    cells, name, per_row, clustered = got
    done = finish_cells(cells, path=str(path), fmt=name, cluster=None if clustered else cluster, opts=kw["opts"],
                        per_row=per_row, sorted_=True)
    if done is None or clustered is None or cluster is None:
        return done
    return _clustered(done, cluster, path=path, opts=kw["opts"], fmt=name, clustered=clustered)


def _clustered(done: tuple[ComparisonCounts, ReadReport], cluster: str, *, path: Path, opts: dict[str, Any], fmt: str,
               clustered: dict[str, Any]) -> tuple[ComparisonCounts, ReadReport]:
    """Cells collapsed over the cluster -> :class:`~evalkit.engine._clustered.SqlClusterCounts`."""
    from evalkit.engine._clustered import SqlClusterCounts

    flat = done[0]
    keys = ("player_a", "player_b", "outcome", "weight", "n")
    return SqlClusterCounts({k: flat.column(k) for k in keys}, cluster, path=path, opts=opts, fmt=fmt,
                            **clustered), done[1]


def _dictionary_file(path: Path, *, cluster: str | None, fmt: str | None, opts: dict[str, Any]
                     ) -> tuple[ComparisonCounts, ReadReport] | None:
    """Counts and report of a Parquet file counted on its dictionary codes
    (:mod:`evalkit.engine._arrow`), or None (DuckDB or the pandas reader reads it). With a
    cluster, each row's codes are kept for the cluster-robust meat: DuckDB is not used at all."""
    from evalkit.engine._arrow import parquet_dictionary_cells, parquet_dictionary_clustered

    if cluster is not None:
        clustered = parquet_dictionary_clustered(path, fmt=fmt, cluster=cluster, opts=opts)
        if clustered is None:
            return None
        cells, name, terms = clustered
        done = finish_cells(cells, path=str(path), fmt=name, cluster=None, opts=opts, sorted_=True)
        return None if done is None else _clustered(done, cluster, path=path, opts=opts, fmt=name, clustered=terms)
    got = parquet_dictionary_cells(path, fmt=fmt, cluster=cluster, opts=opts)
    if got is None:
        return None
    cells, name, per_row, _ = got
    return finish_cells(cells, path=str(path), fmt=name, cluster=cluster, opts=opts, per_row=per_row, sorted_=True)


def _merge_cells(parts: list[ComparisonCounts], cluster: str | None) -> ComparisonCounts:
    if len(parts) == 1:
        return parts[0]
    import pandas as pd

    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    both = pd.concat([p.cells for p in parts], ignore_index=True)
    cells = both.groupby(keys, sort=True)[["weight", "n"]].sum().reset_index()
    return ComparisonCounts(cells, cluster)


def _pandas(source: Any, cluster: str | None, read: dict[str, Any]) -> tuple[ComparisonCounts, ReadReport]:
    from evalkit.io.counts import cells_from_frame
    from evalkit.io.read import read_comparisons

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

    Examples
    --------
    >>> from evalkit.resources import data_file
    >>> counts, report = aggregate_comparisons(data_file("llmfao/gpt4-comparisons.csv"))
    >>> report.rows_kept, len(counts.players)
    (3236, 70)
    """
    if engine not in AGGREGATION_ENGINES:
        raise ValueError(f"engine must be one of {list(AGGREGATION_ENGINES)}; got {engine!r} instead.")
    check_read_options(format=format, columns=columns,
                       self_comparisons=read_options.get("self_comparisons", "error"),
                       constants=read_options.get("constants"))
    read = dict(format=format, columns=columns, encoding=encoding, **read_options)
    if is_dataframe(source) or engine == "pandas":
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
    return _duckdb(_expand(source), cluster=cluster, read=read, fast=fast_ok, progress=progress)


def _duckdb(paths: list[Path], *, cluster: str | None, read: dict[str, Any], fast: bool,
            progress: ProgressFn | None) -> tuple[ComparisonCounts, ReadReport]:
    """Each file by one DuckDB query; the files it cannot take (or with an invalid row) by the
    pandas reader, together (exact errors and line numbers, AlpacaEval notes across files)."""
    opts = {"columns": read["columns"], "outcome_map": read.get("outcome_map"),
            "self_comparisons": read.get("self_comparisons", "error"),
            "keep": tuple(read.get("keep_columns") or ())}
    con = None  # connected for the first file the dictionary path does not take
    done: dict[int, tuple[ComparisonCounts, ReadReport]] = {}
    slow: list[int] = []
    tick(progress, "read", 0, len(paths))
    for k, path in enumerate(paths):
        res = None
        if fast:
            res = _dictionary_file(path, cluster=cluster, fmt=read["format"], opts=opts)
            if res is None:
                if con is None:
                    con = connect()
                    configure(con)
                res = _duckdb_file(con, path, cluster=cluster, fmt=read["format"], opts=opts)
        if res is None:
            slow.append(k)
        else:
            done[k] = res
        tick(progress, "read", k + 1, len(paths))
    if con is not None:
        con.close()
    if slow:
        files = [paths[k] for k in slow]
        done[slow[0]] = _pandas(files[0] if len(files) == 1 else files, cluster, read)
    parts = [done[k] for k in sorted(done)]
    return _merge_cells([p[0] for p in parts], cluster), merge_reports(p[1] for p in parts)
