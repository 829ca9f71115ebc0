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
  reads the file once more as integer codes (players joined to a small table; an integer
  cluster whose range fits a dense ``S`` is its own row of ``S``, less the smallest id, other
  clusters join a table of the distinct ids) and joins each row to its cell's ``u`` on those
  codes; the rows stream in batches into a dense ``S`` (``np.add.at``), or, for a large ``S``,
  DuckDB sums its non-zeros:
  memory of the size of ``S``, not of the rows. The same batches give ``G`` (the number of
  clusters) and the position test's sums per cluster (:meth:`SqlClusterCounts.unit_sums`);
  without the meat (or with a large ``S``) one ``GROUP BY`` on the cluster gives them;
- whether a cluster is missing and an integer cluster's smallest and largest id come from one
  query before the fit (:func:`cluster_census`), which a Parquet file answers from its statistics.

Under an address-space cap (``ulimit -v``) all of it runs in this process: the connections
start no asynchronous I/O threads (:func:`evalkit.engine._duckdb.connect`), whose ``malloc``
arenas took 1.4 GB of a 2 GB cap, and DuckDB spills past its ``memory_limit``.

Everything else that needs the per-cluster cells (the cluster bootstrap's resampling units,
the judge panels of the warnings, merging several files) reads :attr:`ComparisonCounts.cells`
or the cluster column: the object then fetches them by the query it replaced and holds them
from then on (the same cells, the same memory, as before).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.io.counts import ComparisonCounts
from evalkit.io.fastpath import KEY_TYPES, CellSpec, _lit, _outcome_sql, _q, cell_sql

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

__all__ = ["SqlClusterCounts", "cluster_census", "gram"]


def _connect() -> Any:
    from evalkit.engine._duckdb import configure, connect

    con = connect()
    # memory_limit under an address-space cap (a quarter of it), spilling to a private temp_directory
    configure(con, share=0.25)
    return con


#: Integer cluster types whose values, less the smallest, serve as the cluster's row of ``S`` (no join)
INT_TYPES = tuple(t for t in KEY_TYPES if t != "VARCHAR")


def cluster_census(con: Any, spec: CellSpec, relation: str, kind: str | None = None
                   ) -> tuple[bool, tuple[int, int] | None]:
    """``(some cluster missing, span)`` of the file, from one query that a Parquet file answers
    from its statistics (3 ms at 1e7 rows).

    ``span`` is ``(smallest, largest)`` of an integer cluster column (``kind``, its DuckDB type), else
    None; :class:`SqlClusterCounts` uses it when a dense ``S`` of that many rows fits
    :data:`DENSE_SCORES`. ``G`` and the position test's sums come later, from the meat's pass (or
    :func:`_census_sql`)."""
    from evalkit.engine._duckdb import run

    assert spec.cluster is not None
    col = _q(spec.cluster)
    ints = kind in INT_TYPES
    span_sql = f", min({col}), max({col})" if ints else ""
    got = run(con, f"SELECT count(*) - count({col}){span_sql} FROM {relation}", "all")[0]
    span = (int(got[1]), int(got[2])) if ints and got[1] is not None else None
    return bool(got[0]), span


def _census_sql(spec: CellSpec, relation: str) -> tuple[int, tuple[int, float, float]]:
    """``(G, unit sums)`` by one ``GROUP BY`` on the cluster, for counts whose meat was not computed
    (the meat's pass gives both; this one costs a read of the file). ``G`` counts the clusters
    holding a comparison that is not a self-comparison; the unit sums are
    :meth:`SqlClusterCounts.unit_sums`."""
    from evalkit.engine._duckdb import run

    assert spec.cluster is not None
    held = "g IS NOT NULL AND votes > 0"
    con = _connect()
    try:
        got = run(con, f"SELECT count(*) FILTER (WHERE g IS NOT NULL AND live), count(*) FILTER (WHERE {held}), "
                       f"coalesce(max(s0) FILTER (WHERE {held}), 0), "
                       f"coalesce(sum((s1 - 0.5 * s0) * (s1 - 0.5 * s0)) FILTER (WHERE {held}), 0) FROM "
                       f"(SELECT {_q(spec.cluster)} AS g, {_census_sums(spec)} FROM {relation} GROUP BY g)", "all")[0]
    finally:
        con.close()
    return int(got[0]), (int(got[1]), float(got[2]), float(got[3]))


def _census_sums(spec: CellSpec) -> str:
    """SQL aggregates per cluster over its comparisons that are not self-comparisons: ``live`` (one
    exists), ``votes`` (decisive ones: outcome 0 or 1, with a weight), ``s0`` (their weight) and
    ``s1`` (the weight of those won by ``player_a``)."""
    diff = _not_self(spec)
    if spec.wins:  # a row per pair: each decisive count column is a weight of its outcome
        cols = [(f"TRY_CAST({_q(c)} AS DOUBLE)", o) for c, o in spec.wins if o in (0.0, 1.0)]
        votes = " + ".join(f"count({w}) FILTER (WHERE {diff})" for w, _ in cols) or "0"
        s0 = " + ".join(f"coalesce(sum({w}) FILTER (WHERE {diff}), 0)" for w, _ in cols) or "0"
        s1 = " + ".join(f"coalesce(sum({w}) FILTER (WHERE {diff}), 0)" for w, o in cols if o == 1.0) or "0"
        return f"bool_or({diff}) AS live, {votes} AS votes, {s0} AS s0, {s1} AS s1"
    assert spec.outcome is not None
    if spec.labels is None:
        won, lost = (f"TRY_CAST({_q(spec.outcome)} AS DOUBLE) = {v}" for v in (1, 0))
    else:
        text = f"CAST({_q(spec.outcome)} AS VARCHAR)"
        won, lost = (f"{text} IN ({', '.join(_lit(k) for k, o in spec.labels.items() if o == v) or 'NULL'})"
                     for v in (1.0, 0.0))
    w = f"TRY_CAST({_q(spec.weight)} AS DOUBLE)" if spec.weight else "CAST(1 AS DOUBLE)"
    return (f"bool_or({diff}) AS live, count({w}) FILTER (WHERE {diff} AND ({won} OR {lost})) AS votes, "
            f"coalesce(sum({w}) FILTER (WHERE {diff} AND ({won} OR {lost})), 0) AS s0, "
            f"coalesce(sum({w}) FILTER (WHERE {diff} AND {won}), 0) AS s1")


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

    def __init__(self, cells: Mapping[str, Any], cluster: str, *, spec: CellSpec, relation: str, path: Path,
                 opts: dict[str, Any], fmt: str, span: tuple[int, int] | None = None) -> None:
        super().__init__({**cells, cluster: np.zeros(len(cells["n"]), dtype=object)}, cluster)
        assert self._arrays is not None
        del self._arrays[cluster]  # the placeholder only satisfied the check of the columns
        self._spec, self._relation, self._path = spec, relation, path
        # integer ids less the smallest index S's rows when a dense S of that many rows fits the budget
        # (no table of the ids, no join); else the ids' table, G rows (S's memory bounded either way)
        if span is not None and (span[1] - span[0] + 1) * (len(self.players) + 1) > DENSE_SCORES:
            span = None
        self._opts, self._fmt, self._span = opts, fmt, span
        self._expanded = False
        self._g: int | None = None  # G and the unit sums: from the meat's pass, else _census_sql
        self._units: tuple[int, float, float] | None = None

    @property
    def collapsed(self) -> bool:
        """Whether the cells are still collapsed over the cluster (:meth:`cluster_scores` applies)."""
        return not self._expanded

    @property
    def n_clusters(self) -> int:
        """``G``, the clusters holding a comparison that is not a self-comparison (from the meat's
        pass when it ran first, else the per-cluster cells once fetched, else one ``GROUP BY``)."""
        if self._g is None and self._expanded:
            return int(super().n_clusters or 0)
        if self._g is None:
            self._g, self._units = _census_sql(self._spec, self._relation)
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
        cell (one comparison of unit weight). One pass over the file as integer codes; only ``S`` or its
        non-zeros reach Python."""
        if not self.collapsed:
            raise RuntimeError("cluster_meat needs the collapsed cells; these were expanded.")
        players, a, b = self.codes()
        table = {"ci": a.astype(np.int32), "cj": b.astype(np.int32),
                 "outcome": self.column("outcome").astype(float), "u": np.asarray(u, dtype=float)}
        if u_extra is not None:
            table["ue"] = np.asarray(u_extra, dtype=float)
        meat, g, units = _meat(self._spec, self._relation, players, table, n_cols, self._span)
        self._g, self._units = g, units or self._units
        return meat

    def unit_sums(self) -> tuple[int, float, float]:
        """Decisive votes (outcome 0 or 1, a weight; self-comparisons left out) summed per cluster:
        ``(clusters holding one, largest weight of a cluster, sum over clusters of (sum w y - sum w /
        2)^2)`` with ``y = outcome == 1``: what the position-bias test clustered by the counts'
        cluster needs (:func:`evalkit.stats.judge_warnings.clustered_share_test`), from the meat's
        pass when it ran first, else one ``GROUP BY``."""
        if self._units is None:
            self._g, self._units = _census_sql(self._spec, self._relation)
        return self._units


#: Rows per batch of the meat's stream: its NumPy temporaries stay small (fresh memory costs its first
#: touch: 1e6 rows took 0.91x the time of 4e6 in the whole command, 1e7 rows, 50,000 clusters)
BATCH_ROWS = 1_000_000

#: Above this many entries of ``S`` (clusters x columns) the meat's scores are summed by DuckDB's
#: ``GROUP BY`` into a sparse ``S``; at or below it, streamed into a dense ``S`` by ``np.add.at``.
DENSE_SCORES = 25_000_000

def _coded(con: Any, spec: CellSpec, relation: str, players: Any, span: tuple[int, int] | None
           ) -> tuple[str, int]:
    """SQL giving each comparison of the file as codes (``gid, ca, cb, outcome, weight``;
    self-comparisons left out), and the number of cluster rows of ``S``.

    The players join a small table ``names`` (name, code). The cluster's row ``gid``: with ``span``
    (an integer column whose range fits a dense ``S``) the value less the smallest, else its
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


def _meat_on(con: Any, coded: str, n_g: int, table: dict[str, np.ndarray], n_cols: int, weighted: bool
             ) -> tuple[csr_matrix, int, tuple[int, float, float] | None]:
    """``(S^T S, G, unit sums or None)`` from the coded rows: each row joins its collapsed cell's
    unit score on the players' codes and the outcome, and adds ``w * u`` to ``S[gid, ca]``,
    ``-w * u`` to ``S[gid, cb]`` (and ``w * ue`` to the last column).

    Small ``S``: the rows stream in batches into ``np.add.at`` (memory: ``S`` and one batch), and
    the same batches give ``G`` (the clusters with a row) and the position test's sums per cluster
    (a sign per row: +1 won by ``player_a``, -1 lost, 0 neither; its weight when ``weighted``).
    Large ``S``: DuckDB sums the non-zeros, and the unit sums are left to :func:`_census_sql`."""
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
        meat = gram(coo_matrix((got["v"], (got["gid"], got["p"])), shape=(n_g, n_cols)).tocsr())
        return meat, int(np.unique(got["gid"]).size), None
    scores = np.zeros(n_g * n_cols)
    row = f"c.gid * {n_cols}"
    sign = "CAST(CASE c.outcome WHEN 1 THEN 1 WHEN 0 THEN -1 ELSE 0 END AS TINYINT)"
    rel = con.sql(f"SELECT {row} + c.ca, {row} + c.cb, coalesce(c.weight * u.u, 0), {sign}"  # a missing weight adds nothing
                  + (", coalesce(c.weight, 0)" if weighted else "")
                  + (f", {row} + {n_cols - 1}, coalesce(c.weight * u.ue, 0)" if extra else "") + f" {join}")
    # to_arrow_reader where DuckDB has it (2.0 deprecates fetch_arrow_reader), fetch_arrow_reader before
    reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader
    sums = np.zeros((4, n_g))  # per cluster: rows, decisive rows, their weight, their signed weight
    for batch in reader(BATCH_ROWS):
        # np.add.at, not np.bincount(minlength=S.size): its cost is the batch's, not S's (numpy >= 1.25)
        first, wu = _numpy(batch.column(0)), _numpy(batch.column(2))
        np.add.at(scores, first, wu)
        np.add.at(scores, _numpy(batch.column(1)), -wu)
        if extra:
            np.add.at(scores, _numpy(batch.column(5 if weighted else 4)), _numpy(batch.column(6 if weighted else 5)))
        _add_sums(sums, first // n_cols, _numpy(batch.column(3)), _numpy(batch.column(4)) if weighted else None)
    s = scores.reshape(n_g, n_cols)
    held = sums[1] > 0
    units = (int(held.sum()), float(sums[2][held].max(initial=0.0)), float(np.sum((0.5 * sums[3][held]) ** 2)))
    return csr_matrix(s.T @ s), int(np.count_nonzero(sums[0])), units


def _add_sums(sums: np.ndarray, gid: np.ndarray, sign: np.ndarray, weight: np.ndarray | None) -> None:
    """Add a batch's rows to ``sums`` (per cluster: rows, decisive rows, their weight, their weight
    times the sign), each by ``np.bincount`` over the clusters (its cost is the batch's)."""
    n_g = sums.shape[1]
    decisive = (sign != 0).astype(float)
    sums[0] += np.bincount(gid, minlength=n_g)
    votes = np.bincount(gid, weights=decisive, minlength=n_g)
    sums[1] += votes
    sums[2] += votes if weight is None else np.bincount(gid, weights=decisive * weight, minlength=n_g)
    sums[3] += np.bincount(gid, weights=sign if weight is None else sign * weight, minlength=n_g)


def _numpy(column: Any) -> np.ndarray:
    """A numeric Arrow column without nulls as a read-only NumPy view of its buffer
    (:func:`evalkit.engine._arrow.numpy_view`)."""
    if column.null_count:  # pragma: no cover - the queries above coalesce or compute every value
        raise ValueError("a cluster-robust term came back missing")
    from evalkit.engine._arrow import numpy_view

    return numpy_view(column)


def _meat(spec: CellSpec, relation: str, players: Any, table: dict[str, np.ndarray], n_cols: int,
          span: tuple[int, int] | None) -> tuple[csr_matrix, int, tuple[int, float, float] | None]:
    """``(meat, G, unit sums or None)`` (:func:`_meat_on`) on a connection of its own; DuckDB out of
    memory is a :class:`MemoryError` (one line from the CLI)."""
    import duckdb

    con = _connect()
    try:
        code, n_g = _coded(con, spec, relation, players, span)
        return _meat_on(con, code, n_g, table, n_cols, weighted=bool(spec.weight or spec.wins))
    except duckdb.OutOfMemoryException as exc:
        raise MemoryError(f"DuckDB ran out of memory computing the cluster-robust terms "
                          f"({str(exc).splitlines()[0]})") from exc
    finally:
        con.close()


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
