"""Cells of a Parquet file counted on its dictionary codes (pyarrow): no string per row.

Parquet writers (pyarrow, pandas, DuckDB, Spark) store a text column dictionary-encoded: each
row is a small integer into a dictionary of the column chunk's distinct values. An Arena-style
file (``model_a, model_b, winner``) has a few hundred distinct names and three labels, so its
``GROUP BY`` can be done on the integers: the indices are decoded without building a string per
row, each batch's distinct (model_a, model_b, label) triples are counted with ``np.bincount``,
and only those few thousand cells are turned back into text. At 1e7 rows and 200 models this
takes about a third of the CPU time of DuckDB's ``GROUP BY`` on the same file, on one core.

What it takes: one Parquet file whose player and label columns are text, dictionary-encoded in
every row group, with a label mapping (``arena``, ``left_right`` without weights, ``columns`` or
``canonical`` with text outcomes), no weight column. With ``--cluster`` (a text or integer column)
it counts the cells collapsed over the clusters and keeps each row's codes (players, outcome,
cluster: 9 bytes a row, up to :data:`ROWS_BUDGET`), from which
:class:`~evalkit.engine._clustered.SqlClusterCounts` computes the cluster-robust meat without
reading the file again; the cluster's census (a missing value, an integer's span) comes from the
row groups' statistics, so DuckDB is not used at all. It gives up (None: DuckDB reads the file)
on anything else: more than :data:`MAX_DISTINCT` distinct values in a batch, a
column chunk whose declared size is beyond the read limits (``max_bytes``, ``max_ratio``:
:mod:`evalkit.io._limits`), a column named twice. Its memory stays bounded: one batch of
:data:`BATCH_ROWS` rows of indices, and the cells. The cells are the ones DuckDB's query gives (:func:`evalkit.io.fastpath.cell_sql`):
the same columns, types and order; unknown labels and missing values become missing outcomes
and players, for :func:`~evalkit.io.fastpath.first_problem` to send the file to the pandas
reader, which says where.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.io._limits import current_limits
from evalkit.io.fastpath import CellSpec, cell_spec
from evalkit.io.formats import detect_format

__all__ = ["parquet_dictionary_cells", "parquet_dictionary_clustered", "dictionary_cells", "dictionary_rows", "CodedRows", "numpy_view", "BATCH_ROWS",
           "MAX_DISTINCT", "ROWS_BUDGET",
           "StatisticsError", "statistics_error", "check_statistics"]

#: Rows decoded at a time (three index columns: a few tens of MB at most).
BATCH_ROWS = 1 << 20
#: The most distinct values of a column in one batch (its dictionary) this path takes.
MAX_DISTINCT = 1 << 16
#: Cells of one batch counted densely (``np.bincount``) up to this many combinations; above, sorted.
DENSE_CELLS = 1 << 22
#: Bits of a player's code in a cell's key (``MAX_DISTINCT`` players at most).
_PLAYER_BITS = 17
#: Bits of an outcome's code in a cell's key.
_OUTCOME_BITS = 8


def parquet_dictionary_cells(path: Path, *, fmt: str | None, cluster: str | None, opts: dict[str, Any]
                             ) -> tuple[dict[str, np.ndarray], str, int, None] | None:
    """``(cells, format, 1, None)`` of one Parquet file counted on its dictionary codes, as
    :func:`evalkit.engine._duckdb.duckdb_file_cells` returns them, or None where this path does
    not apply (see the module docstring; with a cluster, DuckDB reads the file and asks
    :func:`dictionary_cells` for the cells collapsed over it)."""
    if cluster is not None or not _is_parquet(path):
        return None
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names  # a column named twice: dictionary_cells declines the file
        name = fmt or ("columns" if opts["columns"] else detect_format(list(names), source=str(path)))
        spec = cell_spec(name, names, mapping=opts["columns"], outcome_map=opts["outcome_map"])
    except Exception:  # noqa: BLE001 - any file pyarrow or the format detection refuses: DuckDB's (or pandas') to read
        return None
    cells = dictionary_cells(path, spec) if spec is not None else None
    return None if cells is None else (cells, name, 1, None)


def parquet_dictionary_clustered(path: Path, *, fmt: str | None, cluster: str, opts: dict[str, Any]
                                 ) -> tuple[dict[str, np.ndarray], str, dict[str, Any]] | None:
    """``(cells, format, clustered)`` of one Parquet file with a cluster, without DuckDB: the cells
    collapsed over the cluster and each row's codes (:func:`dictionary_rows`), the cluster column's
    census (:func:`_census`: from the file's statistics), and in ``clustered`` what
    :class:`~evalkit.engine._clustered.SqlClusterCounts` takes (``spec``, ``relation``, ``span``,
    ``rows``); None where DuckDB's path (:func:`~evalkit.engine._duckdb.duckdb_file_cells`) must
    read the file: no statistics, a missing cluster (its located error), a file too large for the
    rows' codes, or anything :func:`dictionary_cells` declines."""
    from dataclasses import replace

    from evalkit.engine._duckdb import parquet_relation

    if not _is_parquet(path):
        return None
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, pre_buffer=False)
        names = pf.schema_arrow.names
        name = fmt or ("columns" if opts["columns"] else detect_format(list(names), source=str(path)))
        spec = cell_spec(name, names, cluster=cluster, mapping=opts["columns"], outcome_map=opts["outcome_map"])
        census = _census(pf, spec.cluster) if spec is not None and spec.cluster is not None else None
    except Exception:  # noqa: BLE001 - any file pyarrow or the format detection refuses: DuckDB's (or pandas') to read
        return None
    if census is None or census[0] or pf.metadata.num_rows * 9 > ROWS_BUDGET:
        return None
    assert spec is not None and spec.cluster is not None
    got = dictionary_rows(path, replace(spec, cluster=None, cluster_name=None), (spec.cluster, census[1]))
    if got is None:
        return None
    return got[0], name, {"spec": spec, "relation": parquet_relation(path), "span": census[1], "rows": got[1]}


def _census(pf: Any, column: str) -> tuple[bool, tuple[int, int] | None] | None:
    """``(some value missing, (smallest, largest) of an integer column)`` of ``column`` from the
    row groups' statistics (what :func:`~evalkit.engine._clustered.cluster_census` asks DuckDB),
    or None: a column that is neither text nor an integer, or a row group without statistics."""
    import pyarrow as pa

    meta = pf.metadata
    where = _leaves(meta, column)
    t = pf.schema_arrow.field(column).type if column in pf.schema_arrow.names else None
    ints = t is not None and pa.types.is_integer(t)
    if len(where) != 1 or not (ints or (t is not None and (pa.types.is_string(t) or pa.types.is_large_string(t)))):
        return None
    missing, lo, hi = False, None, None
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(where[0]).statistics
        if stats is None or not stats.has_null_count or (ints and not stats.has_min_max):
            return None
        missing = missing or stats.null_count > 0
        if ints:
            lo = int(stats.min) if lo is None else min(lo, int(stats.min))
            hi = int(stats.max) if hi is None else max(hi, int(stats.max))
    return missing, ((lo, hi) if ints and lo is not None and hi is not None else None)


def dictionary_cells(path: Path, spec: CellSpec) -> dict[str, np.ndarray] | None:
    """The cells of ``spec`` (no cluster: the cells over all clusters) in the Parquet file
    ``path``, counted on its dictionary codes, or None where this path does not take them."""
    got = dictionary_rows(path, spec)
    return None if got is None else got[0]


def dictionary_rows(path: Path, spec: CellSpec, keep: tuple[str, tuple[int, int] | None] | None = None
                    ) -> tuple[dict[str, np.ndarray], CodedRows | None] | None:
    """:func:`dictionary_cells`, and each row as codes (:class:`CodedRows`) with its cluster
    ``keep = (column, span)`` (``span``: an integer column's smallest and largest value, each row's
    cluster being its value less the smallest; None: a text column, each distinct value a cluster),
    for the cluster-robust meat without a second read of the file. The rows are None without
    ``keep``, where they would pass :data:`ROWS_BUDGET` bytes, or the cluster column is not text or
    an integer with a span, or a batch holds more than :data:`MAX_DISTINCT` clusters."""
    if spec.cluster or spec.outcome is None or not _is_parquet(path):
        return None  # a counts file (no outcome column) is already cells: DuckDB sums it
    import pyarrow.parquet as pq

    columns = [spec.player_a, spec.player_b, spec.outcome]
    try:
        # no I/O thread pool (pre_buffer off): under an address cap each thread reserves its malloc arena
        probe = pq.ParquetFile(path, pre_buffer=False)
        rows = _Rows.start(probe, keep, columns)
        text = [keep[0]] if rows is not None and keep is not None and keep[1] is None else []
        pf = pq.ParquetFile(path, read_dictionary=columns + text, pre_buffer=False)
        names = pf.schema_arrow.names
        if len(set(names)) != len(names) or not _takes(pf, spec):
            return None
        assert spec.labels is not None
        counter = _Counter(spec.labels)
        read = columns + ([keep[0]] if rows is not None and keep is not None else [])
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=read, use_threads=False):
            if not counter.add(batch.column(0), batch.column(1), batch.column(2), rows):
                return None
            if rows is not None and (counter.rows_lost or not rows.cluster(batch.column(3))):
                rows = None
    except _Outside as out:
        assert keep is not None
        raise statistics_error(path, keep[0], keep[1], *out.args) from None
    except Exception:  # noqa: BLE001 - a file pyarrow cannot decode: DuckDB's to read, or to report
        return None
    return counter.cells(), (rows.done(counter) if rows is not None else None)


def _leaves(meta: Any, column: str) -> list[int]:
    """The indices of the Parquet leaf columns whose path is ``column`` (one for a plain column)."""
    return [k for k in range(meta.num_columns) if meta.schema.column(k).path == column]


def _is_parquet(path: Path) -> bool:
    """Whether ``path`` is a file that starts and ends with Parquet's magic bytes."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"PAR1":
                return False
            f.seek(-4, 2)
            return f.read(4) == b"PAR1"
    except OSError:
        return False


def _takes(pf: Any, spec: CellSpec | None) -> bool:
    """Whether this path counts the file: text labels mapped to outcomes, no weights, no
    cluster, and the three columns text, dictionary-encoded in every row group."""
    import pyarrow as pa

    if spec is None or spec.wins or spec.weight or spec.cluster or spec.outcome is None or not spec.labels:
        return False
    columns = [spec.player_a, spec.player_b, spec.outcome]
    schema = pf.schema_arrow
    for c in columns:
        t = schema.field(c).type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            return False
    meta = pf.metadata
    where = {meta.schema.column(k).path: k for k in range(meta.num_columns)}
    if any(c not in where for c in columns):  # a nested column of that name
        return False
    lim = current_limits()
    if len(schema.names) > lim.max_columns:
        return False
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in columns:
            chunk = group.column(where[c])
            if not chunk.has_dictionary_page or not _plausible(chunk, lim):
                return False
    return True


def _plausible(chunk: Any, lim: Any) -> bool:
    """Whether a column chunk's declared sizes are within the read limits (``max_bytes``
    decompressed, ``max_ratio`` past ``ratio_grace``); a chunk that is not (a Parquet bomb, or
    a very large chunk) is left to DuckDB's scan, whose memory is capped."""
    raw, packed = int(chunk.total_uncompressed_size), max(int(chunk.total_compressed_size), 1)
    return raw <= lim.max_bytes and (raw <= lim.ratio_grace or raw <= lim.max_ratio * packed)


class _Counter:
    """Counts of (player_a, player_b, outcome) over batches of dictionary-encoded columns.

    The players and outcomes get global codes in order of appearance; the counts live in a dense
    array indexed by the codes (strides: powers of two, grown as codes appear) while it has at
    most :data:`DENSE_CELLS` entries, else in sorted (key, count) arrays merged as they grow."""

    def __init__(self, labels: dict[str, float] | Any) -> None:
        self._labels = dict(labels)
        self._players: dict[str | None, int] = {}
        self._outcomes: dict[float | None, int] = {}
        self._dense: np.ndarray | None = np.zeros(0, dtype=np.int64)
        self._stride = (0, 0)  # (players, outcomes) of the dense array
        self._keys: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._pending = 0
        self._buffer: np.ndarray | None = None
        self.rows_lost = False  # a batch the rows' codes could not take: they are dropped

    def add(self, a: Any, b: Any, w: Any, rows: _Rows | None = None) -> bool:
        """Count one batch (and record its rows' codes in ``rows``); False where it has more
        distinct values than this path takes."""
        parts = [_indices(a), _indices(b), _indices(w)]
        if any(p is None or len(p[1]) > MAX_DISTINCT for p in parts):
            return False
        (ia, va), (ib, vb), (iw, vw) = parts  # type: ignore[misc]
        la, lb, lw = len(va) + 1, len(vb) + 1, len(vw) + 1  # + the missing value's slot
        local = self._local(ia, ib, iw, lb, lw)
        if la * lb * lw <= DENSE_CELLS:
            n = np.bincount(local, minlength=la * lb * lw)
            cells = np.flatnonzero(n)
            n = n[cells]
        else:
            cells, n = np.unique(local, return_counts=True)
        cells, kw = np.divmod(cells, lw)
        ka, kb = np.divmod(cells, lb)
        ta, tb = self._codes(va, self._players), self._codes(vb, self._players)
        tw = self._codes([self._labels.get(v) if v is not None else None for v in vw], self._outcomes)
        ga, gb, gw = ta[ka], tb[kb], tw[kw]
        if len(self._players) > 1 << _PLAYER_BITS or len(self._outcomes) > 1 << _OUTCOME_BITS:
            return False
        if rows is not None and not rows.players((ia, ta), (ib, tb), (iw, tw)):
            self.rows_lost = True
        self._grow()
        if self._dense is not None:
            s, t = self._stride
            np.add.at(self._dense, (ga * s + gb) * t + gw, n)
            return True
        self._keys.append((ga << (_PLAYER_BITS + _OUTCOME_BITS)) | (gb << _OUTCOME_BITS) | gw)
        self._counts.append(n.astype(np.int64))
        self._pending += len(n)
        if self._pending > 4 * DENSE_CELLS:
            self._merge()
        return True

    def _local(self, ia: np.ndarray, ib: np.ndarray, iw: np.ndarray, lb: int, lw: int) -> np.ndarray:
        """``(ia * lb + ib) * lw + iw`` (int64) in one buffer kept from batch to batch: fresh
        memory for each batch's temporaries costs page faults (about 2 ms per MB here), more
        than the arithmetic."""
        n = len(ia)
        if self._buffer is None or len(self._buffer) < n:
            self._buffer = np.empty(max(n, BATCH_ROWS), dtype=np.int64)
        out = self._buffer[:n]
        np.multiply(ia, lb, out=out)
        out += ib
        out *= lw
        out += iw
        return out

    @staticmethod
    def _codes(values: list[Any], table: dict[Any, int]) -> np.ndarray:
        """Global codes of a batch's dictionary ``values`` and of the missing value (last)."""
        codes = [table.setdefault(v, len(table)) for v in values]
        codes.append(table.setdefault(None, len(table)))
        return np.asarray(codes, dtype=np.int64)

    def _grow(self) -> None:
        """Room in the dense array for every code given so far, or the sorted arrays instead."""
        if self._dense is None:
            return
        s, t = self._stride
        need_s, need_t = max(s, _pow2(len(self._players))), max(t, _pow2(len(self._outcomes)))
        if (need_s, need_t) == (s, t):
            return
        ga, gb, gw, n = self._dense_cells()
        if need_s * need_s * need_t > DENSE_CELLS:  # too many players for a dense array
            self._dense = None
            self._keys = [(ga << (_PLAYER_BITS + _OUTCOME_BITS)) | (gb << _OUTCOME_BITS) | gw]
            self._counts, self._pending = [n], len(n)
            return
        self._dense = np.zeros(need_s * need_s * need_t, dtype=np.int64)
        self._dense[(ga * need_s + gb) * need_t + gw] = n
        self._stride = (need_s, need_t)

    def _dense_cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        assert self._dense is not None
        s, t = self._stride
        where = np.flatnonzero(self._dense)
        rest, gw = np.divmod(where, max(t, 1))
        ga, gb = np.divmod(rest, max(s, 1))
        return ga, gb, gw, self._dense[where]

    def _merge(self) -> None:
        """The sorted arrays' cells, each once."""
        keys = np.concatenate(self._keys) if self._keys else np.zeros(0, np.int64)
        counts = np.concatenate(self._counts) if self._counts else np.zeros(0, np.int64)
        uniq, inverse = np.unique(keys, return_inverse=True)
        total = np.zeros(len(uniq), dtype=np.int64)
        np.add.at(total, inverse, counts)
        self._keys, self._counts, self._pending = [uniq], [total], len(uniq)

    def cells(self) -> dict[str, np.ndarray]:
        """The cells, as DuckDB's query returns them: ``player_a, player_b`` (text, None where
        missing), ``outcome`` (NaN where missing), ``weight`` (the count), ``n``, ``bad_w``
        (False), ordered by player_a, player_b, outcome (missing values last)."""
        if self._dense is not None:
            ga, gb, gw, n = self._dense_cells()
        else:
            self._merge()
            keys, n = self._keys[0], self._counts[0]
            ga = keys >> (_PLAYER_BITS + _OUTCOME_BITS)
            gb = (keys >> _OUTCOME_BITS) & ((1 << _PLAYER_BITS) - 1)
            gw = keys & ((1 << _OUTCOME_BITS) - 1)
        players = _by_code(self._players)
        outcomes = _by_code(self._outcomes)
        player_rank = _ranks(players)
        outcome_rank = _ranks(outcomes)
        order = np.lexsort((outcome_rank[gw], player_rank[gb], player_rank[ga]))
        ga, gb, gw, n = ga[order], gb[order], gw[order], n[order]
        text = np.empty(len(players), dtype=object)
        text[:] = players
        value = np.array([np.nan if o is None else float(o) for o in outcomes], dtype=float)
        return {"player_a": text[ga], "player_b": text[gb], "outcome": value[gw],
                "weight": n.astype(float), "n": n, "bad_w": np.zeros(len(n), dtype=bool)}


#: Most bytes of the rows' codes kept for the cluster-robust meat (:class:`_Rows`: 9 a row, so
#: about 3e7 rows); a larger file's meat reads the file again (DuckDB).
ROWS_BUDGET = 256 << 20


@dataclass(frozen=True)
class CodedRows:
    """Each row of a file as codes, kept by the dictionary pass (:func:`dictionary_rows`).

    ``a``, ``b`` (uint16) index ``players`` (names in order of appearance), ``outcome`` (uint8)
    indexes ``outcomes`` (values; None: missing), ``gid`` (int32) is the row's cluster, one of
    ``n_g``. Self-comparisons are rows too (the meat leaves them out, as the counts do)."""

    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    gid: np.ndarray
    n_g: int
    players: list[Any]
    outcomes: list[Any]


class StatisticsError(ValueError):
    """A Parquet file whose column statistics do not hold the column's values: its metadata is
    corrupt, and DuckDB, which trusts the statistics (``min``/``max``, its aggregates' hash ranges),
    would count the column wrongly."""


def statistics_error(path: Path | str, column: str | None, span: tuple[int, int] | None,
                     found: int | None = None, row: int | None = None) -> StatisticsError:
    """The located error for ``column`` of ``path``, whose statistics give ``span``."""
    lo, hi = span or (None, None)
    where = f"row {row}: " if row is not None else ""
    what = f"a value {found}" if found is not None else "values"
    return StatisticsError(
        f"{path}: {where}column {column!r}: found {what} outside the range {lo} to {hi} that the file's Parquet "
        f"statistics give; allowed: statistics that hold every value. The file's metadata is corrupt, and DuckDB, "
        f"which trusts it, would count the column wrongly: rewrite the file (for example with "
        f"pyarrow.parquet.write_table(pyarrow.parquet.read_table(PATH), NEW_PATH)), or read it with --engine pandas, "
        f"which reads the values themselves.")


def check_statistics(path: Path, column: str, span: tuple[int, int]) -> None:
    """Raise :class:`StatisticsError` when ``span``, the smallest and largest ``column`` values a
    reader found in the Parquet file ``path``, falls outside its footer's statistics. DuckDB 1.1
    reads the values for ``min``/``max`` but sizes a ``GROUP BY`` on the column by the statistics
    (and crashed the process, a segmentation fault, when they lie); DuckDB 2 answers ``min``/``max``
    from the statistics themselves, so there the check passes and the rows' pass finds the lie."""
    if not _is_parquet(path):
        return
    import pyarrow.parquet as pq

    try:
        census = _census(pq.ParquetFile(path, pre_buffer=False), column)
    except Exception:  # noqa: BLE001 - a footer pyarrow cannot read: DuckDB read it, nothing to compare
        return
    stats = census[1] if census is not None else None
    if stats is not None and (span[0] < stats[0] or span[1] > stats[1]):
        raise statistics_error(path, column, stats, span[0] if span[0] < stats[0] else span[1])


class _Outside(Exception):
    """A cluster id outside the statistics' span: ``(value, row)``."""


class _Rows:
    """The codes of each row, written batch by batch into arrays of the file's row count."""

    def __init__(self, n: int, span: tuple[int, int] | None) -> None:
        # 9 bytes a row: fresh memory costs its first touch (about 2 ms per MB on a loaded machine)
        self.a, self.b = np.empty(n, np.uint16), np.empty(n, np.uint16)
        self.o, self.g = np.empty(n, np.uint8), np.empty(n, np.int32)
        self.span, self.at = span, 0
        self.ids: dict[Any, int] = {}  # a text cluster's code by value

    @classmethod
    def start(cls, pf: Any, keep: tuple[str, tuple[int, int] | None] | None, columns: list[str]) -> _Rows | None:
        """Arrays for the rows of ``pf``, or None (no cluster to keep, or not one these rows take)."""
        import pyarrow as pa

        if keep is None or keep[0] in columns:
            return None
        column, span = keep
        n, schema = pf.metadata.num_rows, pf.schema_arrow
        if column not in schema.names or n * 9 > ROWS_BUDGET:
            return None
        t = schema.field(column).type
        ints = pa.types.is_integer(t) and span is not None and span[1] - span[0] < 2**31
        text = span is None and (pa.types.is_string(t) or pa.types.is_large_string(t))
        lim = current_limits()
        meta = pf.metadata
        where = _leaves(meta, column)
        if not (ints or text) or len(where) != 1 or not all(
                _plausible(meta.row_group(g).column(where[0]), lim) for g in range(meta.num_row_groups)):
            return None
        return cls(n, span)

    def _slice(self, n: int) -> slice:
        return slice(self.at, self.at + n)

    def players(self, *parts: tuple[np.ndarray, np.ndarray]) -> bool:
        """Record a batch's (local indices, their global codes) of player_a, player_b and the outcome;
        False past 65,535 players (the codes are 16-bit)."""
        if len(parts[0][1]) and max(int(parts[0][1].max()), int(parts[1][1].max())) >= 1 << 16:
            return False
        part = self._slice(len(parts[0][0]))
        outs: list[np.ndarray] = [self.a, self.b, self.o]
        for out, (idx, table) in zip(outs, parts, strict=True):
            np.take(table.astype(out.dtype), idx, axis=None, out=out[part], mode="clip")
        return True

    def cluster(self, column: Any) -> bool:
        """Record the batch's clusters; False where these rows cannot (a missing or odd value)."""
        part = self._slice(len(column))
        if self.span is not None:
            if column.null_count:
                return False
            values = numpy_view(column)
            if values.dtype.kind not in "iu":
                return False
            if len(values) and (int(values.min()) < self.span[0] or int(values.max()) > self.span[1]):
                bad = int(np.flatnonzero((values < self.span[0]) | (values > self.span[1]))[0])
                raise _Outside(int(values[bad]), part.start + bad)  # statistics that lie: DuckDB's too
            lo = np.array(self.span[0]).astype(values.dtype)
            np.subtract(values, lo, out=self.g[part], casting="unsafe")
        else:
            got = _indices(column)
            if got is None or len(got[1]) > MAX_DISTINCT or column.null_count:
                return False
            idx, names = got
            table = np.array([self.ids.setdefault(v, len(self.ids)) for v in names] + [-1], dtype=np.int32)
            np.take(table, idx, axis=None, out=self.g[part], mode="clip")
        self.at = part.stop
        return True

    def done(self, counter: _Counter) -> CodedRows | None:
        """The rows, with the counter's players and outcomes by code."""
        if self.at != len(self.a):  # pragma: no cover - the file has the rows its footer says
            return None
        n_g = self.span[1] - self.span[0] + 1 if self.span is not None else len(self.ids)
        return CodedRows(self.a, self.b, self.o, self.g, n_g, _by_code(counter._players),
                         _by_code(counter._outcomes))


def _pow2(n: int) -> int:
    """The least power of two >= ``n`` (0 for 0)."""
    return 0 if n <= 0 else 1 << (n - 1).bit_length()


def _indices(column: Any) -> tuple[np.ndarray, list[Any]] | None:
    """``(indices, dictionary values)`` of a dictionary array, a missing row's index being
    ``len(values)``; None for any other array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(column.type) or not pa.types.is_integer(column.type.index_type):
        return None
    values = column.dictionary.to_pylist()
    idx = column.indices
    if idx.null_count:
        idx = pc.fill_null(idx, len(values))
    return numpy_view(idx), values


def numpy_view(column: Any) -> np.ndarray:
    """A numeric Arrow array without nulls as a read-only NumPy view of its buffer (pyarrow's
    ``to_numpy`` imports pandas, 0.3 s, to check for it)."""
    if column.null_count:
        raise ValueError("numpy_view: the array has missing values")
    dtype = np.dtype(str(column.type))  # int8 ... uint64, double
    return np.frombuffer(column.buffers()[1], dtype=dtype, count=len(column), offset=column.offset * dtype.itemsize)


def _by_code(table: dict[Any, int]) -> list[Any]:
    out: list[Any] = [None] * len(table)
    for value, code in table.items():
        out[code] = value
    return out


def _ranks(values: list[Any]) -> np.ndarray:
    """Each value's place in ascending order, missing (None) last."""
    order = sorted(range(len(values)), key=lambda k: (values[k] is None, values[k] if values[k] is not None else 0))
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values))
    return rank
