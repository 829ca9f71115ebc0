"""Cluster-robust terms in SQL: counts for the fit without the cluster, scores per cluster by DuckDB.

With ``cluster=`` and many clusters (50,000 items at 1e7 rows) the cells ``(player_a,
player_b, outcome, cluster)`` are about as many as the rows; fetching them into Python took
6.8 GB. Yet neither the fit nor a cluster-robust sandwich needs them:

- the fit reads the cells collapsed over the cluster, ``(player_a, player_b, outcome)``, the
  same query as without a cluster;
- the sandwich's meat is ``S^T S``, where ``S[g, p]`` is the sum of the score contributions
  of cluster ``g`` to player ``p``'s coordinate (``w * u`` to ``player_a``'s, ``-w * u`` to
  ``player_b``'s, ``u`` depending only on the pair and the outcome at the fitted strengths).
  :meth:`SqlClusterCounts.cluster_meat` sends the ``u`` of each collapsed cell to DuckDB, which
  reads the file once more as integer codes (players joined to a small table; a nearly dense
  integer cluster is its own row of ``S``, less the smallest id, other clusters join a table of
  the distinct ids) and joins each row to its cell's ``u`` on those codes; the rows stream in
  batches into a dense ``S`` (``np.add.at``), or, for a large ``S``, DuckDB sums its non-zeros:
  memory of the size of ``S``, not of the rows. The same connection sums the position test's
  comparison units (:meth:`SqlClusterCounts.unit_sums`, one ``GROUP BY`` on one integer key), so
  one process start serves both;
- ``G`` (the number of clusters), whether a cluster is missing and an integer cluster's smallest
  and largest id come from one more ``count(DISTINCT ...)``.

Everything else that needs the per-cluster cells (the cluster bootstrap's resampling units,
the judge panels of the warnings, merging several files) reads :attr:`ComparisonCounts.cells`
or the cluster column: the object then fetches them by the query it replaced and holds them
from then on (the same cells, the same memory, as before).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.io.counts import ComparisonCounts
from evalkit.io.fastpath import KEY_TYPES, CellSpec, _outcome_sql, _q, cell_sql

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

__all__ = ["SqlClusterCounts", "cluster_census", "gram", "isolated"]


def _connect() -> Any:
    import os

    import duckdb

    from evalkit.engine._duckdb import configure

    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    # memory_limit under an address-space cap, spilling to a private temp_directory: a tenth of the
    # cap in a process whose DuckDB already ran queries (it keeps the address space it mapped), 30 %
    # in :func:`isolated`'s fresh child
    configure(con, share=0.3 if os.environ.get("EVALKIT_CLUSTER_CHILD") == "0" else 0.1)
    return con


#: Integer cluster types whose values, less the smallest, serve as the cluster's row of ``S`` (no join)
INT_TYPES = tuple(t for t in KEY_TYPES if t != "VARCHAR")


def cluster_census(con: Any, spec: CellSpec, relation: str, kind: str | None = None
                   ) -> tuple[int, bool, tuple[int, int] | None]:
    """``(G, some cluster missing, span)`` of the file: one ``count(DISTINCT)`` over the cluster column.

    ``span`` is ``(smallest, largest)`` of an integer cluster column (``kind``, its DuckDB type) whose
    values are nearly dense (at most ``2 G + 1024`` values from the smallest to the largest): the
    value less the smallest is then the cluster's row of ``S`` and of the units' key, and the
    cluster-robust terms need no table of the ids and no join to it; else None."""
    from evalkit.engine._duckdb import run

    assert spec.cluster is not None
    col = _q(spec.cluster)
    ints = kind in INT_TYPES
    span_sql = f", min({col}), max({col})" if ints else ""
    # counted as stored: text or integer keys only (fastpath.KEY_TYPES), whose distinct values are those
    # of their text; 0.25 s against 0.55 s for the text at 1e7 rows
    got = run(con, f"SELECT count(DISTINCT {col}) FILTER (WHERE {_not_self(spec)}), "
                   f"coalesce(bool_or({col} IS NULL), false){span_sql} FROM {relation}", "all")[0]
    g, missing = int(got[0]), bool(got[1])
    span = None
    if ints and got[2] is not None and int(got[3]) - int(got[2]) + 1 <= 2 * g + 1024:
        span = (int(got[2]), int(got[3]))
    return g, missing, span


def rows_sql(spec: CellSpec, relation: str, cluster: str | None = None) -> str:
    """The file's comparisons one per row (``player_a, player_b, outcome, g, weight``; ``g`` the
    cluster as the SQL expression ``cluster``, by default its text), as
    :func:`~evalkit.io.fastpath.cell_sql` reads them, without grouping: the queries below group
    them once, on their own keys."""
    assert spec.cluster is not None
    g = cluster or f"CAST({_q(spec.cluster)} AS VARCHAR)"
    ids = (f"CAST({_q(spec.player_a)} AS VARCHAR) AS player_a, CAST({_q(spec.player_b)} AS VARCHAR) AS player_b, "
           f"{g} AS g")
    if spec.wins:
        return " UNION ALL ".join(f"SELECT {ids}, CAST({o!r} AS DOUBLE) AS outcome, TRY_CAST({_q(c)} AS DOUBLE) "
                                  f"AS weight FROM {relation}" for c, o in spec.wins)
    weight = f"TRY_CAST({_q(spec.weight)} AS DOUBLE)" if spec.weight else "CAST(1 AS DOUBLE)"
    return f"SELECT {ids}, {_outcome_sql(spec)} AS outcome, {weight} AS weight FROM {relation}"


def _not_self(spec: CellSpec) -> str:
    """SQL: the row is not a self-comparison (those are dropped, and so are clusters holding only them)."""
    return (f"CAST({_q(spec.player_a)} AS VARCHAR) IS DISTINCT FROM CAST({_q(spec.player_b)} AS VARCHAR)")


class SqlClusterCounts(ComparisonCounts):
    """Counts collapsed over the cluster, whose cluster-robust scores DuckDB computes.

    ``cells`` are the collapsed cells (``player_a, player_b, outcome, weight, n``);
    ``spec``/``relation``/``path`` say how to read the file again; ``n_clusters`` is ``G``.
    Reading :attr:`cells` or the cluster column fetches the per-cluster cells (see the module
    docstring); :meth:`cluster_scores` works on the collapsed cells only.
    """

    def __init__(self, cells: Mapping[str, Any], cluster: str, *, n_clusters: int, spec: CellSpec,
                 relation: str, path: Path, opts: dict[str, Any], fmt: str,
                 span: tuple[int, int] | None = None) -> None:
        super().__init__({**cells, cluster: np.zeros(len(cells["n"]), dtype=object)}, cluster)
        assert self._arrays is not None
        del self._arrays[cluster]  # the placeholder only satisfied the check of the columns
        self._g, self._spec, self._relation, self._path = n_clusters, spec, relation, path
        self._opts, self._fmt, self._span = opts, fmt, span
        self._expanded = False
        self._units: tuple[int, float, float] | None = None

    @property
    def collapsed(self) -> bool:
        """Whether the cells are still collapsed over the cluster (:meth:`cluster_scores` applies)."""
        return not self._expanded

    @property
    def n_clusters(self) -> int:
        return self._g

    @property
    def cells(self) -> Any:
        self.expand()
        return super().cells

    def column(self, name: str) -> np.ndarray:
        if name == self.cluster:
            self.expand()
        return super().column(name)

    def expand(self) -> None:
        """Replace the collapsed cells by the per-cluster cells (the query this class avoids)."""
        if self._expanded:
            return
        from evalkit.engine._duckdb import run
        from evalkit.engine.aggregate import finish_cells

        con = _connect()
        try:
            cells = run(con, cell_sql(self._spec, self._relation), "numpy")
        finally:
            con.close()
        done = finish_cells(cells, path=str(self._path), fmt=self._fmt, cluster=self.cluster, opts=self._opts,
                            sorted_=True)
        if done is None:  # pragma: no cover - the same file passed the same checks when it was collapsed
            raise RuntimeError(f"{self._path} changed while it was read (its per-cluster cells are not clean).")
        full = done[0]
        self._arrays = {k: full.column(k) for k in full._arrays or {}}
        self._frame, self._codes, self._expanded = None, None, True

    def cluster_meat(self, u: np.ndarray, n_cols: int, u_extra: np.ndarray | None = None) -> csr_matrix:
        """``S^T S`` (``n_cols x n_cols``, CSR), ``S`` (``G x n_cols``) holding per cluster the sum over
        its comparisons of ``w * u`` in ``player_a``'s column and ``-w * u`` in ``player_b``'s (and
        ``w * u_extra`` in the last column, Davidson's ``log nu``); ``u`` / ``u_extra`` per collapsed
        cell (one comparison of unit weight). One pass over the file as integer codes, which also
        gives :meth:`unit_sums` (kept for the warnings); only ``S`` or its non-zeros reach Python."""
        if not self.collapsed:
            raise RuntimeError("cluster_meat needs the collapsed cells; these were expanded.")
        players, a, b = self.codes()
        table = {"ci": a.astype(np.int32), "cj": b.astype(np.int32),
                 "outcome": self.column("outcome").astype(float), "u": np.asarray(u, dtype=float)}
        if u_extra is not None:
            table["ue"] = np.asarray(u_extra, dtype=float)
        meat, units = isolated("terms", spec=self._spec, relation=self._relation, players=players, table=table,
                               n_cols=n_cols, units=self._units is None, span=self._span)
        self._units = self._units or units
        assert meat is not None
        return meat

    def unit_sums(self) -> tuple[int, float, float]:
        """Decisive votes (outcome 0 or 1) grouped into comparison units (cluster x unordered pair):
        ``(units, largest weight of a unit, sum over units of (sum w y - sum w / 2)^2)`` with
        ``y = outcome == 1``: what the clustered position-bias test needs
        (:func:`evalkit.stats.judge_warnings.clustered_share_test`), from DuckDB (kept from
        :meth:`cluster_meat`'s pass when that ran first)."""
        if self._units is None:
            self._units = isolated("terms", spec=self._spec, relation=self._relation, players=self.codes()[0],
                                   table=None, n_cols=0, units=True, span=self._span)[1]
        assert self._units is not None
        return self._units


#: Above this many entries of ``S`` (clusters x columns) the meat's scores are summed by DuckDB's
#: ``GROUP BY`` into a sparse ``S``; at or below it, streamed into a dense ``S`` by ``np.add.at``.
DENSE_SCORES = 25_000_000

def _coded(con: Any, spec: CellSpec, relation: str, players: Any, span: tuple[int, int] | None
           ) -> tuple[str, int]:
    """SQL giving each comparison of the file as codes (``gid, ca, cb, outcome, weight``;
    self-comparisons left out), and the number of cluster rows of ``S``.

    The players join a small table ``names`` (name, code). The cluster's row ``gid``: with ``span``
    (a nearly dense integer column, :func:`cluster_census`) the value less the smallest, else its
    rank in a table ``ids`` of the distinct clusters (a join). The joins drop what the counts
    dropped: rows whose players are not in the counts, rows without a cluster. Each use below
    reads the file again (0.13 s for the scan and the joins at 1e7 rows; a temporary table of the
    codes took 0.45 s and, under a 2 GB cap, the room the rest needed)."""
    from evalkit.engine._duckdb import run

    assert spec.cluster is not None
    # the cluster as stored: the SQL path reads text or integer keys only (fastpath.KEY_TYPES), whose
    # equality is that of their text; a join on BIGINT is about 4x faster than on its text (1e7 rows)
    g = col = _q(spec.cluster)
    con.register("names", {"name": np.asarray(players, dtype=object),
                           "c": np.arange(len(players), dtype=np.int32)})
    where = "na.c <> nb.c"
    if span is not None:
        lo, hi = span
        wide = lo < -(2**63) or hi >= 2**63  # UBIGINT or HUGEINT beyond BIGINT: subtract as HUGEINT
        gid = f"CAST(CAST(r.g AS HUGEINT) - {lo} AS BIGINT)" if wide else f"CAST(r.g AS BIGINT) - {lo}"
        join, where, n_g = "", where + " AND r.g IS NOT NULL", hi - lo + 1
    else:
        run(con, "CREATE TEMP TABLE ids AS SELECT g, CAST(row_number() OVER () - 1 AS BIGINT) AS gid FROM "
                 f"(SELECT DISTINCT {g} AS g FROM {relation} WHERE {_not_self(spec)} AND {col} IS NOT NULL)", "all")
        (n_g,) = run(con, "SELECT count(*) FROM ids", "all")[0]
        gid, join = "ids.gid", "JOIN ids ON r.g = ids.g"
    return (f"SELECT {gid} AS gid, na.c AS ca, nb.c AS cb, r.outcome, r.weight "
            f"FROM ({rows_sql(spec, relation, g)}) r JOIN names na ON r.player_a = na.name "
            f"JOIN names nb ON r.player_b = nb.name {join} WHERE {where}"), int(n_g)


def _meat_on(con: Any, coded: str, n_g: int, table: dict[str, np.ndarray], n_cols: int) -> csr_matrix:
    """``S^T S`` from the coded rows: each row joins its collapsed cell's unit score on the
    players' codes and the outcome, and adds ``w * u`` to ``S[gid, ca]``, ``-w * u`` to
    ``S[gid, cb]`` (and ``w * ue`` to the last column). Small ``S``: the rows stream in batches
    into ``np.add.at`` (memory: ``S`` and one batch); large ``S``: DuckDB sums the non-zeros."""
    from scipy.sparse import coo_matrix, csr_matrix

    from evalkit.engine._duckdb import run

    con.register("scores_u", table)
    extra = "ue" in table
    join = f"FROM ({coded}) c JOIN scores_u u ON u.ci = c.ca AND u.cj = c.cb AND u.outcome = c.outcome"
    if n_g * n_cols > DENSE_SCORES:
        vals = ["wu", "-wu"] + (["we"] if extra else [])
        cols = ["ca", "cb"] + ([f"CAST({n_cols - 1} AS INTEGER)"] if extra else [])
        sql = f"SELECT c.gid, c.ca, c.cb, c.weight * u.u AS wu{', c.weight * u.ue AS we' if extra else ''} {join}"
        got = run(con, f"SELECT gid, p, sum(v) AS v FROM (SELECT gid, unnest([{', '.join(cols)}]) AS p, "
                       f"unnest([{', '.join(vals)}]) AS v FROM ({sql})) GROUP BY gid, p", "numpy")
        return gram(coo_matrix((got["v"], (got["gid"], got["p"])), shape=(n_g, n_cols)).tocsr())
    scores = np.zeros(n_g * n_cols)
    row = f"c.gid * {n_cols}"
    rel = con.sql(f"SELECT {row} + c.ca, {row} + c.cb, coalesce(c.weight * u.u, 0)"  # a missing weight adds nothing
                  + (f", {row} + {n_cols - 1}, coalesce(c.weight * u.ue, 0)" if extra else "") + f" {join}")
    # to_arrow_reader where DuckDB has it (2.0 deprecates fetch_arrow_reader), fetch_arrow_reader before
    reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader
    for batch in reader(4_000_000):
        # np.add.at, not np.bincount(minlength=S.size): its cost is the batch's, not S's (numpy >= 1.25)
        wu = batch.column(2).to_numpy()
        np.add.at(scores, batch.column(0).to_numpy(), wu)
        np.add.at(scores, batch.column(1).to_numpy(), -wu)
        if extra:
            np.add.at(scores, batch.column(3).to_numpy(), batch.column(4).to_numpy())
    s = scores.reshape(n_g, n_cols)
    return csr_matrix(s.T @ s)


def _units_sql(con: Any, coded: str, n_g: int, n: int) -> tuple[int, float, float]:
    """:meth:`SqlClusterCounts.unit_sums` from the coded rows (one ``GROUP BY`` on integer codes: the
    unit as one ``BIGINT`` when it fits in 62 bits, a third faster than three keys)."""
    from evalkit.engine._duckdb import run

    unit = (f"(gid * {n} + least(ca, cb)) * {n} + greatest(ca, cb)" if n_g * n * n < 2**62
            else "gid, least(ca, cb), greatest(ca, cb)")
    sql = ("SELECT count(*), coalesce(max(s0), 0), coalesce(sum((s1 - 0.5 * s0) * (s1 - 0.5 * s0)), 0) FROM "
           "(SELECT sum(CASE WHEN outcome = 1 THEN weight ELSE 0 END) AS s1, sum(weight) AS s0 "
           f"FROM ({coded}) WHERE outcome IN (0, 1) GROUP BY {unit})")
    ((units, largest, e0sq),) = run(con, sql, "all")
    return int(units), float(largest), float(e0sq)


def _terms(spec: CellSpec, relation: str, players: Any, table: dict[str, np.ndarray] | None, n_cols: int,
           units: bool, span: tuple[int, int] | None = None
           ) -> tuple[csr_matrix | None, tuple[int, float, float] | None]:
    """``(meat, unit sums)`` in one DuckDB connection (one process under a cap): the meat when
    ``table`` (the unit scores) is given, the unit sums when ``units``. Each reads the file again
    (one aggregation grouping both by the unit, with a join to the scores, was slower: 3.6 s against
    1.1 + 1.5 s at 1e7 rows and 50,000 items)."""
    con = _connect()
    try:
        (code, n_g), n = _coded(con, spec, relation, players, span), len(players)
        meat = None if table is None else _meat_on(con, code, n_g, table, n_cols)
        return meat, (_units_sql(con, code, n_g, n) if units else None)
    finally:
        con.close()


_TASKS: dict[str, Callable[..., Any]] = {"terms": _terms}


def _address_cap() -> bool:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return False
    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


def isolated(task: str, **kw: Any) -> Any:
    """Run a task of this module in this process, or, under an address-space limit (``ulimit -v``;
    or ``EVALKIT_CLUSTER_CHILD=1``), in a fresh child process: DuckDB keeps the address space it
    mapped for this process's earlier queries (1.4 GB of a 2 GB cap after reducing 1e7 rows, with
    130 MB resident), so a second large query here would fail where a new process has room. The
    child gets the same limit and returns only the small result."""
    import os

    if not (_address_cap() or os.environ.get("EVALKIT_CLUSTER_CHILD") == "1"):
        return _TASKS[task](**kw)
    import pickle
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="evalkit-cluster-") as tmp:
        job, out = Path(tmp) / "job.pkl", Path(tmp) / "out.pkl"
        job.write_bytes(pickle.dumps((task, kw)))
        env = {**os.environ, "EVALKIT_CLUSTER_CHILD": "0"}
        done = subprocess.run([sys.executable, "-c", "import sys; from evalkit.engine._clustered import _child; "
                               "_child(sys.argv[1])", tmp], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            if "memory" in done.stderr.lower():
                raise MemoryError(f"the cluster-robust terms ran out of memory in their DuckDB process ({last})")
            raise RuntimeError(f"the cluster-robust terms' DuckDB process failed: {last}")
        return pickle.loads(out.read_bytes())


def _child(folder: str) -> None:
    """Entry point of :func:`isolated`'s child: run ``job.pkl``'s task, write ``out.pkl``."""
    import pickle

    task, kw = pickle.loads((Path(folder) / "job.pkl").read_bytes())
    (Path(folder) / "out.pkl").write_bytes(pickle.dumps(_TASKS[task](**kw)))


def gram(scores: csr_matrix, *, block: int = 4096) -> csr_matrix:
    """``S^T S`` of a sparse ``S`` (clusters x players): for up to 4,096 columns as dense blocks of
    ``block`` clusters (BLAS; no transposed copy of ``S``), else by a sparse product."""
    from scipy.sparse import csr_matrix

    k = scores.shape[1]
    if k > 4096:
        return (scores.T @ scores).tocsr()
    out = np.zeros((k, k))
    for start in range(0, scores.shape[0], block):
        part = scores[start:start + block].toarray()
        out += part.T @ part
    return csr_matrix(out)
