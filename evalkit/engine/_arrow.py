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
``canonical`` with text outcomes), no weight column; with ``--cluster``, the cells collapsed over
the clusters (DuckDB checks the cluster column and computes the cluster-robust terms). It gives up (None: DuckDB
reads the file) on anything else: more than :data:`MAX_DISTINCT` distinct values in a batch, a
column chunk whose declared size is beyond the read limits (``max_bytes``, ``max_ratio``:
:mod:`evalkit.io._limits`), a column named twice. Its memory stays bounded: one batch of
:data:`BATCH_ROWS` rows of indices, and the cells. The cells are the ones DuckDB's query gives (:func:`evalkit.io.fastpath.cell_sql`):
the same columns, types and order; unknown labels and missing values become missing outcomes
and players, for :func:`~evalkit.io.fastpath.first_problem` to send the file to the pandas
reader, which says where.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evalkit.io._limits import current_limits
from evalkit.io.fastpath import CellSpec, cell_spec
from evalkit.io.formats import detect_format

__all__ = ["parquet_dictionary_cells", "dictionary_cells", "numpy_view", "BATCH_ROWS", "MAX_DISTINCT"]

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


def dictionary_cells(path: Path, spec: CellSpec) -> dict[str, np.ndarray] | None:
    """The cells of ``spec`` (no cluster: the cells over all clusters) in the Parquet file
    ``path``, counted on its dictionary codes, or None where this path does not take them."""
    if spec.cluster or not _is_parquet(path):
        return None
    import pyarrow.parquet as pq

    columns = [spec.player_a, spec.player_b, spec.outcome]
    try:
        # no I/O thread pool (pre_buffer off): under an address cap each thread reserves its malloc arena
        pf = pq.ParquetFile(path, read_dictionary=columns, pre_buffer=False)
        names = pf.schema_arrow.names
        if len(set(names)) != len(names) or not _takes(pf, spec):
            return None
        assert spec.labels is not None
        counter = _Counter(spec.labels)
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=False):
            if not counter.add(*(batch.column(k) for k in range(3))):
                return None
    except Exception:  # noqa: BLE001 - a file pyarrow cannot decode: DuckDB's to read, or to report
        return None
    return counter.cells()


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

    def add(self, a: Any, b: Any, w: Any) -> bool:
        """Count one batch; False where it has more distinct values than this path takes."""
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
        ga = self._codes(va, self._players)[ka]
        gb = self._codes(vb, self._players)[kb]
        gw = self._codes([self._labels.get(v) if v is not None else None for v in vw], self._outcomes)[kw]
        if len(self._players) > 1 << _PLAYER_BITS or len(self._outcomes) > 1 << _OUTCOME_BITS:
            return False
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
