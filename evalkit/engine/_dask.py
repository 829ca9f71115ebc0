"""The Dask engine of :func:`~evalkit.engine.aggregate_comparisons`: cells per partition, on a cluster.

Each partition of a ``dask.dataframe`` (Parquet, CSV or JSON Lines; local paths, globs or
fsspec URLs) is reduced to cells by :func:`~evalkit.io.fastpath.partition_cells` on a worker,
and the partial cells are summed on the workers too (:func:`combine_cells`, a tree of fan-in 8): the
client receives one table of cells, never one per partition. Invalid rows are flagged in the cells and
the file is then read by the pandas reader for the exact error (local files), as on DuckDB.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._progress import ProgressFn, tick
from evalkit.engine.executor import _DASK_MISSING, dask_client
from evalkit.io._files import _CSV_NA, read_head
from evalkit.io.counts import ComparisonCounts
from evalkit.io.fastpath import cell_spec, partition_cells
from evalkit.io.read import detect_format
from evalkit.io.report import ReadReport

__all__ = ["dask_aggregate"]

_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".json")


def _kind(path: str) -> str:
    name = path.lower().removesuffix(".gz")
    if name.endswith(_PARQUET) or os.path.isdir(path):
        return "parquet"
    if name.endswith(_JSONL):
        return "jsonl"
    return "csv"


def read_json_part(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """``pandas.read_json``, as Dask's ``engine=`` for JSON Lines (on the client for the meta, on the
    workers for the partitions). A line that is not an object (``[1, 2]``, ``5``) is a TypeError of
    the data in pandas >= 2.1; pandas 2.0 (the lower bound) raises ``AttributeError: 'list' object has
    no attribute 'keys'``, which would pass for a failure of the cluster. It is raised as a TypeError,
    so that the pandas reader locates the line, as for every other error of the data."""
    try:
        return pd.read_json(*args, **kwargs)
    except AttributeError as exc:
        if "has no attribute 'keys'" not in str(exc):
            raise
        raise TypeError(f"a JSON record is not an object ({exc})") from exc


def _frame(path: str):
    import dask.dataframe as dd

    kind = _kind(path)
    if kind == "parquet":  # one partition per row group: a worker never holds a whole file
        return dd.read_parquet(path, split_row_groups=True), kind
    comp = "gzip" if path.endswith(".gz") else None
    if kind == "jsonl":
        return dd.read_json(path, lines=True, blocksize=None if comp else 2**26, compression=comp,
                            engine=read_json_part), kind
    sep = "\t" if path.lower().removesuffix(".gz").endswith((".tsv", ".tab")) else ","
    return dd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=_CSV_NA,
                       blocksize=None if comp else 2**26, compression=comp), kind


_FAN_IN = 8


def combine_cells(parts: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    """Partial cells (of partitions, or of earlier combinations) summed into one table, on a worker."""
    both = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    return both.groupby(keys, dropna=False, sort=False).agg(
        weight=("weight", "sum"), n=("n", "sum"), bad_w=("bad_w", "max")).reset_index()


def _dask_cells(client: Any, item: str, *, fmt: str | None, cluster: str | None,
                opts: dict[str, Any]) -> tuple[ComparisonCounts, ReadReport] | None:
    """Cells of one path computed on the cluster, or None when the pandas reader must read it."""
    import dask

    from evalkit.engine._duckdb import check_cluster, check_header
    from evalkit.engine.aggregate import finish_cells

    if "://" not in item and os.path.isfile(item):
        with open(item, "rb") as fh:
            head = fh.read(4096)
        if check_header(Path(item), read_head(Path(item))) is None or head[:2] == b"\x1f\x8b" and not item.endswith(".gz"):
            return None
    ddf, _ = _frame(item)
    cols = [str(c) for c in ddf.columns]
    name = fmt or ("columns" if opts["columns"] else detect_format(cols, source=item))
    spec = cell_spec(name, cols, cluster=cluster, mapping=opts["columns"],
                     outcome_map=opts["outcome_map"])
    if spec is None and cluster is not None:
        check_cluster(item, name, cols, cluster, opts)
    if spec is None:
        return None
    needed = spec.key_columns + [c for c in (spec.outcome, spec.weight) if c] + [c for c, _ in spec.wins]
    ddf = ddf[list(dict.fromkeys(needed))]  # only these columns are read (Parquet) or shipped
    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    tasks = [dask.delayed(partition_cells)(part, spec) for part in ddf.to_delayed()]
    while len(tasks) > 1:  # summed on the workers, _FAN_IN partials at a time: the client gets one table
        tasks = [dask.delayed(combine_cells)(tasks[k:k + _FAN_IN], keys) for k in range(0, len(tasks), _FAN_IN)]
    cells = client.compute(tasks[0]).result()
    return finish_cells(cells, path=item, fmt=name, cluster=cluster, opts=opts,
                        per_row=max(1, len(spec.wins)))


#: What every worker must be able to run: the partition reducer (checked before any task is sent).
_PROBE = "import evalkit.io.fastpath"
#: Seconds to wait for the scheduler to have a worker, and for the workers to answer the probe.
PREFLIGHT_TIMEOUT = 30.0
# Errors of the data (a file the Dask reader cannot parse): the pandas reader then names the problem
# with its line. Anything else (a worker that died, cannot import a module, lost its connection) is
# a failure of the cluster and is raised: never a silent read of the whole file on the client.
_DATA_ERRORS = (ValueError, TypeError, KeyError)


def preflight(client: Any, *, timeout: float = PREFLIGHT_TIMEOUT) -> None:
    """Raise a one-line ValueError unless the cluster has workers and every one of them can import
    evalkit's partition reducer (a worker without evalkit would otherwise fail each task, or hang)."""
    import concurrent.futures

    where = getattr(getattr(client, "scheduler", None), "address", None) or "the scheduler"
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, concurrent.futures.TimeoutError):
        raise ValueError(f"The Dask cluster at {where} has no worker (waited {timeout:g} s): start workers "
                         "(dask worker SCHEDULER) or use --engine duckdb.") from None
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:  # exec of an import: nothing of evalkit is unpickled on the worker to run the probe itself
        got = pool.submit(client.run, exec, _PROBE, {}, on_error="return").result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise ValueError(f"The Dask workers at {where} did not answer in {timeout:g} s.") from None
    finally:
        pool.shutdown(wait=False)
    bad = {addr: res for addr, res in got.items() if isinstance(res, BaseException)}
    if bad:
        addr, exc = next(iter(bad.items()))
        raise ValueError(
            f"{len(bad)} of {len(got)} Dask workers cannot run evalkit (worker {addr}: {type(exc).__name__}: "
            f"{exc}); install evalkit[dask], the same version as here, in every worker's environment.")


def dask_aggregate(
    source: str | Path | Sequence[str | Path], *, cluster: str | None, scheduler: str | Any | None,
    read: dict[str, Any], progress: ProgressFn | None = None, fast: bool = True,
) -> tuple[ComparisonCounts, ReadReport]:
    """Cells of ``source`` computed on a Dask cluster (see the module docstring); ``fast=False``
    (options only the pandas reader has) reads every file with the pandas reader."""
    from evalkit.engine._duckdb import AbsentClusterError
    from evalkit.engine.aggregate import _pandas

    try:
        import dask.dataframe  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_DASK_MISSING) from exc
    client, own = dask_client(scheduler)
    try:
        if fast:
            preflight(client)
        items = [str(source)] if isinstance(source, (str, Path)) else [str(s) for s in source]
        fmt = read.get("format")
        opts = {"columns": read.get("columns"), "outcome_map": read.get("outcome_map"),
                "self_comparisons": read.get("self_comparisons", "error"),
            "keep": tuple(read.get("keep_columns") or ())}
        parts, reports = [], []
        tick(progress, "aggregate", 0, len(items))
        for k, item in enumerate(items):
            missing = "://" not in item and not any(ch in item for ch in "*?[") and not os.path.exists(item)
            try:  # a local path that does not exist: the pandas reader says so (nothing to read on the client)
                res = _dask_cells(client, item, fmt=fmt, cluster=cluster, opts=opts) if fast and not missing else None
            except _DATA_ERRORS as exc:  # a file Dask cannot parse: the pandas reader names the problem
                if "://" in item or isinstance(exc, AbsentClusterError):
                    raise
                res = None
            except Exception as exc:  # noqa: BLE001 - the cluster failed: say so, read nothing here
                raise ValueError(f"The Dask cluster failed on {item} ({type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0] if str(exc) else 'no message'}); "
                                 "nothing was read on the client. Check the workers' logs, or use "
                                 "--engine duckdb.") from exc
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
