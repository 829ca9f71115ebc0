"""The Dask engine of :func:`~evalkit.engine.aggregate_comparisons`: cells per partition, on a cluster.

Each partition of a ``dask.dataframe`` (Parquet, CSV or JSON Lines; local paths, globs or
fsspec URLs) is reduced to cells by :func:`~evalkit.io.fastpath.partition_cells` on a worker;
only the cells travel back and are summed here. Invalid rows are flagged in the cells and
the file is then read by the pandas reader for the exact error (local files), as on DuckDB.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._progress import ProgressFn, tick
from evalkit.engine.executor import _DASK_MISSING, SCHEDULER_ENV
from evalkit.io._files import _CSV_NA
from evalkit.io.counts import ComparisonCounts
from evalkit.io.fastpath import cell_spec, partition_cells
from evalkit.io.read import detect_format
from evalkit.io.report import ReadReport

__all__ = ["dask_aggregate", "dask_client"]

_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".json")


def dask_client(scheduler: str | Any | None) -> tuple[Any, bool]:
    """A ``distributed.Client`` for ``scheduler`` (address, client, or the environment) and
    whether this call opened it."""
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_DASK_MISSING) from exc
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV)
    if scheduler is None:
        raise ValueError(
            f"The Dask engine needs a scheduler: pass --scheduler tcp://HOST:PORT or set {SCHEDULER_ENV}."
        )
    if isinstance(scheduler, Client):
        return scheduler, False
    return Client(scheduler), True


def _kind(path: str) -> str:
    name = path.lower().removesuffix(".gz")
    if name.endswith(_PARQUET) or os.path.isdir(path):
        return "parquet"
    if name.endswith(_JSONL):
        return "jsonl"
    return "csv"


def _frame(path: str):
    import dask.dataframe as dd

    kind = _kind(path)
    if kind == "parquet":
        return dd.read_parquet(path), kind
    comp = "gzip" if path.endswith(".gz") else None
    if kind == "jsonl":
        return dd.read_json(path, lines=True, blocksize=None if comp else 2**26, compression=comp), kind
    sep = "\t" if path.lower().removesuffix(".gz").endswith((".tsv", ".tab")) else ","
    return dd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=_CSV_NA,
                       blocksize=None if comp else 2**26, compression=comp), kind


def dask_aggregate(
    source: str | Path | Sequence[str | Path], *, cluster: str | None, scheduler: str | Any | None,
    read: dict[str, Any], progress: ProgressFn | None = None,
) -> tuple[ComparisonCounts, ReadReport]:
    """Cells of ``source`` computed on a Dask cluster (see the module docstring)."""
    from evalkit.engine.aggregate import _pandas, finish_cells

    try:
        import dask.dataframe  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_DASK_MISSING) from exc
    client, own = dask_client(scheduler)
    try:
        items = [str(source)] if isinstance(source, (str, Path)) else [str(s) for s in source]
        fmt = read.get("format")
        opts = {"columns": read.get("columns"), "outcome_map": read.get("outcome_map"),
                "self_comparisons": read.get("self_comparisons", "error")}
        parts, reports = [], []
        tick(progress, "aggregate", 0, len(items))
        for k, item in enumerate(items):
            ddf, _ = _frame(item)
            cols = [c for c in ddf.columns]
            name = fmt or ("columns" if opts["columns"] else detect_format(cols, source=item))
            spec = cell_spec(name, cols, cluster=cluster, mapping=opts["columns"],
                             outcome_map=opts["outcome_map"])
            res = None
            if spec is not None:
                import dask

                tasks = [dask.delayed(partition_cells)(part, spec) for part in ddf.to_delayed()]
                cells = pd.concat(client.gather(client.compute(tasks)), ignore_index=True)
                keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
                cells = cells.groupby(keys, dropna=False, sort=False).agg(
                    weight=("weight", "sum"), n=("n", "sum"), bad_w=("bad_w", "max")).reset_index()
                res = finish_cells(cells, path=item, fmt=name, cluster=cluster, opts=opts,
                                   per_row=max(1, len(spec.wins)))
            if res is None:  # the pandas reader says what is wrong, with the line
                res = _pandas(item, cluster, read)
            parts.append(res[0])
            reports.append(res[1])
            tick(progress, "aggregate", k + 1, len(items))
    finally:
        if own:
            client.close()
    from evalkit.engine.aggregate import _merge_cells
    from evalkit.io.report import merge_reports

    return _merge_cells(parts, cluster), merge_reports(reports)
