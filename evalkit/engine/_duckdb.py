"""DuckDB's side of :func:`~evalkit.engine.aggregate_comparisons`: one file -> numpy cells.

Free of pandas: the query's result is fetched as numpy arrays (``fetchnumpy``) and checked
with numpy, so that ``evalkit rate`` on a Parquet file imports neither pandas nor the pandas
reader unless a row is invalid (then the caller reads the file again with the pandas reader,
which raises the usual error with its line number).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.io._limits import check_columns, check_lines, current_limits
from evalkit.io.fastpath import KEY_TYPES, absent_cluster, cell_spec, cell_sql
from evalkit.io.formats import _CSV_NA, check_unique_columns, container_of, detect_format, read_head

__all__ = ["check_header", "configure", "connect", "relation", "run", "duckdb_file_cells"]


def _is_tsv(path: Path) -> bool:
    return bool({".tsv", ".tab"} & {s.lower() for s in path.suffixes})


def check_header(path: Path, head: bytes, con: Any = None) -> str | None:
    """The container of a local file (None when the pandas reader must sniff it), after
    checking that its header names no column twice (ValueError); ``con``: a DuckDB connection
    to read a Parquet schema with (else a short-lived one)."""
    if not head.strip() or head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return None
    try:
        kind = container_of(path, head)
    except ValueError:
        return None
    if kind == "parquet":
        names = parquet_columns(path, con)
        if names is None:
            return None
        check_unique_columns(path, [n for n in names if not n.startswith("__index")])
    elif kind == "csv":
        # what the pandas reader reads differently, or refuses with a located error, goes to it:
        # bare CR line ends (old Mac), text that is not UTF-8 (random bytes), a NUL byte
        if re.search(rb"\r(?!\n)|\x00", head):
            return None
        try:
            head.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # not merely a character cut at the end of the head
                return None
        first = _first_line(path, head)
        if first is None:
            return None
        sep = "\t" if _is_tsv(path) else ","
        header = next(csv.reader([first], delimiter=sep), [])
        check_columns(len(header), str(path))
        check_unique_columns(path, [h.strip() for h in header])
    return kind


def _first_line(path: Path, head: bytes) -> str | None:
    """The whole header line (however long, up to the line-length limit); None when it is not text."""
    if b"\n" not in head:
        import gzip
        import zlib

        limit = int(current_limits().max_line_bytes)
        try:
            with (gzip.open(path, "rb") if head[:2] == b"\x1f\x8b" else open(path, "rb")) as fh:
                line = fh.readline(limit + 1)
        except (OSError, EOFError, zlib.error):
            return None
        check_lines(line, str(path))
        head = line
    try:
        return head.decode("utf-8-sig").split("\n", 1)[0].rstrip("\r")
    except UnicodeDecodeError:
        return None


def parquet_columns(path: Path, con: Any = None) -> list[str] | None:
    """Top-level column names of a Parquet file as written, duplicates kept (DuckDB's
    ``parquet_schema`` lists the flattened schema tree; None when it cannot be read), read on
    ``con`` or a short-lived connection (not DuckDB's default one, whose database and threads
    would live as long as the process)."""
    import duckdb

    lit = "'" + str(path).replace("'", "''") + "'"
    own = con is None
    con = connect(threads=1) if own else con
    try:
        rows = con.execute(f"SELECT name, num_children FROM parquet_schema({lit})").fetchall()
    except duckdb.Error:
        return None
    finally:
        if own:
            con.close()
    names, k = [], 1

    def skip(k: int) -> int:  # past the node at k and its subtree
        children = rows[k][1] or 0
        k += 1
        for _ in range(children):
            k = skip(k)
        return k

    for _ in range(rows[0][1] or 0):
        names.append(rows[k][0])
        k = skip(k)
    return names


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def parquet_relation(path: Path) -> str:
    """DuckDB table function reading the Parquet file ``path`` (no check: see :func:`relation`)."""
    return f"read_parquet({_literal(path)})"


def relation(path: Path, head: bytes, con: Any = None) -> str | None:
    """DuckDB table function reading ``path`` (None: let the pandas reader handle it);
    ``con``: as in :func:`check_header`."""
    kind = check_header(path, head, con)
    if kind is None:
        return None
    lit = _literal(path)
    with path.open("rb") as fh:
        gz = "'gzip'" if fh.read(2) == b"\x1f\x8b" else "'none'"
    if gz == "'gzip'":  # a gzip bomb is refused here, in well under a second, not streamed for minutes
        from evalkit.io._limits import check_gzip_prefix

        check_gzip_prefix(path)
    if kind == "parquet":
        return parquet_relation(path)
    if kind == "csv":
        sep = "\\t" if _is_tsv(path) else ","
        nulls = ", ".join("'" + v + "'" for v in _CSV_NA)
        # quote and escape as pandas reads them: an unterminated quote is an error on both engines
        return (f"read_csv({lit}, header=true, all_varchar=true, delim=E'{sep}', quote='\"', escape='\"', "
                f"nullstr=[{nulls}], compression={gz}, max_line_size={int(current_limits().max_line_bytes)})")
    fmt = "'array'" if kind == "json" else "'newline_delimited'"
    return f"read_json({lit}, format={fmt}, compression={gz})"


def _address_cap() -> int:
    """The process's address-space limit in bytes (``ulimit -v``), or -1 without one."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: no address-space limit to read
        return -1
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return -1 if soft == resource.RLIM_INFINITY else int(soft)


def connect(**config: Any) -> Any:
    """A new in-memory DuckDB connection (``config``: DuckDB settings), its own database.

    Under an address-space limit DuckDB's asynchronous I/O threads (eight in DuckDB 2.0; local
    files do not need them) are not started: each thread's ``malloc`` arena reserves 64 MB of
    address space and its stack 8 MB, about 650 MB of a 2 GB ``ulimit -v`` for idle threads.
    (DuckDB before 2.0 has no such threads, nor the setting.)"""
    import duckdb

    if _address_cap() > 0:
        try:
            return duckdb.connect(config={**config, "async_threads": 0})
        except duckdb.Error:  # DuckDB < 2.0: no async_threads setting
            pass
    return duckdb.connect(config=config)


def configure(con: Any, *, share: float = 0.2) -> None:
    """Bound DuckDB's memory and let it spill: under an address-space limit (``ulimit -v``, which
    DuckDB does not see) ``memory_limit`` is ``share`` (20 %) of it, and operators that exceed it spill to a
    private temporary directory (created by DuckDB only if it spills, removed when the
    connection closes or the process exits). DuckDB's own progress bar is off, and so is insertion-order
    preservation (every evalkit query groups or sorts)."""
    import atexit
    import os
    import secrets
    import shutil
    import tempfile

    soft = _address_cap()
    # DuckDB's progress bar writes to stdout (a pipe too) for queries over 2 s: it would corrupt --json
    # and --format csv output; the CLI shows its own progress on stderr
    con.execute("SET enable_progress_bar = false")
    con.execute("SET preserve_insertion_order = false")  # evalkit's queries group or sort; none needs the scan order
    if soft > 0:
        con.execute(f"SET memory_limit = '{max(64, int(soft * share) // 2**20)}MB'")
    # a fresh, unguessable path, not a directory: DuckDB creates it only when an operator spills and
    # removes it when the connection closes (1.1 and 2.0), so a process that never spills leaves
    # nothing, even one that ends without atexit (a process pool's or Dask's workers, os._exit)
    tmp = os.path.join(tempfile.gettempdir(), f"evalkit-duckdb-{os.getpid()}-{secrets.token_hex(8)}")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    con.execute("SET temp_directory = '" + tmp.replace("'", "''") + "'")


def run(con: Any, sql: str, fetch: str) -> Any:
    """Run a DuckDB query (``fetch``: ``"all"`` rows or ``"numpy"`` columns); a Ctrl-C that
    DuckDB turned into an error is a Ctrl-C again.

    DuckDB catches SIGINT while a query runs and raises ``InterruptException`` (or, through
    some of its Python paths, ``RuntimeError("Query interrupted")``); the CLI must see
    :class:`KeyboardInterrupt` (exit 130, one line), not an internal error or a fallback read.
    """
    import duckdb

    try:
        rel = con.sql(sql)
        if rel is None:  # a statement without a result (CREATE ...): DuckDB < 1.2 returns no relation
            return {} if fetch == "numpy" else []
        return {k: _plain(v) for k, v in rel.fetchnumpy().items()} if fetch == "numpy" else rel.fetchall()
    except duckdb.InterruptException as exc:
        raise KeyboardInterrupt from exc
    except RuntimeError as exc:
        if "interrupted" in str(exc).lower():
            raise KeyboardInterrupt from exc
        raise


def _plain(values: np.ndarray) -> np.ndarray:
    """A fetched column without NULL masks: missing text is None, a missing number NaN."""
    if not isinstance(values, np.ma.MaskedArray):
        return np.asarray(values)
    mask = np.ma.getmaskarray(values)
    if values.dtype.kind in "fc":
        return values.filled(np.nan)
    out = np.asarray(values.data, dtype=object).copy()
    out[mask] = None
    return out


class AbsentClusterError(ValueError):
    """A cluster column the file cannot have (raised before any row is read; no reader retries)."""


def check_cluster(path: Path | str, fmt: str, columns: list[str], cluster: str, opts: dict[str, Any]) -> None:
    """Raise a ValueError, before any row is read, when the file can have no cluster ``cluster``
    (:func:`~evalkit.io.fastpath.absent_cluster`)."""
    problem = absent_cluster(fmt, columns, cluster, opts["columns"], opts.get("keep", ()))
    if problem is not None:
        raise AbsentClusterError(f"{path} {problem}")


def duckdb_file_cells(con: Any, path: Path, *, fmt: str | None, cluster: str | None,
                      opts: dict[str, Any], flat: Any = None,
                      ) -> tuple[dict[str, np.ndarray], str, int, dict[str, Any] | None] | None:
    """``(cells, format, rows per record, clustered)`` of one file by one DuckDB query, or None when
    the pandas reader must read it (a format or container the fast path does not cover).
    The cells are unchecked: see :func:`~evalkit.io.fastpath.first_problem`.

    With a cluster the cells are collapsed over it and ``clustered`` holds what
    :class:`~evalkit.engine._clustered.SqlClusterCounts` needs (``spec``, ``relation``, ``span``):
    the cluster-robust terms are computed in SQL later (a missing cluster: None, the pandas
    reader's located error). ``flat(path, spec, (cluster column, span))``, if given, may return
    the cells of a spec without cluster itself, with each row's codes or None
    (:func:`evalkit.engine._arrow.dictionary_rows`; ``clustered["rows"]``); where it returns
    None, DuckDB counts them."""
    import duckdb

    if not path.is_file():
        return None
    rel = relation(path, read_head(path), con)
    if rel is None:
        return None
    try:
        schema = run(con, f"DESCRIBE SELECT * FROM {rel}", "all")
    except duckdb.Error:
        return None
    types = {row[0]: str(row[1]) for row in schema}
    try:
        name = fmt or ("columns" if opts["columns"] else detect_format(list(types), source=str(path)))
    except ValueError:
        return None
    spec = cell_spec(name, list(types), cluster=cluster, mapping=opts["columns"],
                     outcome_map=opts["outcome_map"])
    if spec is None and cluster is not None:
        check_cluster(path, name, list(types), cluster, opts)
    if spec is None or any(types.get(c) not in KEY_TYPES for c in spec.key_columns):
        return None
    clustered: dict[str, Any] | None = None
    keep: tuple[str, tuple[int, int] | None] | None = None
    try:
        if spec.cluster:
            from dataclasses import replace

            from evalkit.engine._clustered import cluster_census

            missing, span = cluster_census(con, spec, rel, types.get(spec.cluster))
            if missing:
                return None
            if span is not None:  # a Parquet file's census against its footer (others: nothing to check)
                from evalkit.engine._arrow import check_statistics

                check_statistics(path, spec.cluster, span)
            clustered, keep = {"spec": spec, "relation": rel, "span": span}, (spec.cluster, span)
            spec = replace(spec, cluster=None, cluster_name=None)
        cells = None
        if flat is not None and clustered is not None:
            got = flat(path, spec, keep)
            if got is not None:
                cells, clustered["rows"] = got
        if cells is None:
            cells = run(con, cell_sql(spec, rel), "numpy")
    except duckdb.OutOfMemoryException as exc:  # the pandas reader would need more memory, not less
        raise MemoryError(f"DuckDB ran out of memory reducing {path} to cells ({str(exc).splitlines()[0]})") from exc
    except duckdb.Error:
        return None
    return cells, name, max(1, len(spec.wins)), clustered
