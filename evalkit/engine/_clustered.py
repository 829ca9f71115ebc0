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

A dictionary-encoded Parquet file skips the second read: the count on its dictionary codes
(:mod:`evalkit.engine._arrow`) keeps each row's codes (9 bytes a row), and :func:`_meat_rows`
adds them into ``S`` in NumPy, each row's ``u`` looked up in a dense table of the collapsed
cells (:func:`_dense_u`). At 1e7 rows, 50,000 items and 200 models: 1.4-1.7 s for the whole
``rate --cluster item`` against 2.1-2.3 s with DuckDB's second pass (the meat alone 0.6-0.8 s
against 1.2-1.4 s). DuckDB's pass, where it runs, looks ``u`` up the same way where the table
fits (:data:`DENSE_U`), else joins it.

Under an address-space cap (``ulimit -v``) all of it runs in this process: the connections
start no asynchronous I/O threads (:func:`evalkit.engine._duckdb.connect`), whose ``malloc``
arenas took 1.4 GB of a 2 GB cap, and DuckDB spills past its ``memory_limit``.

Everything else that needs the per-cluster cells (the cluster bootstrap's resampling units,
the judge panels of the warnings, merging several files) reads :attr:`ComparisonCounts.cells`
or the cluster column: the object then fetches them by the query it replaced and holds them
from then on (the same cells, the same memory, as before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.io.counts import ComparisonCounts
from evalkit.io.fastpath import KEY_TYPES, CellSpec, _lit, _outcome_sql, _q, cell_sql

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

    from evalkit.engine._arrow import CodedRows

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
                 opts: dict[str, Any], fmt: str, span: tuple[int, int] | None = None,
                 rows: CodedRows | None = None) -> None:
        super().__init__({**cells, cluster: np.zeros(len(cells["n"]), dtype=object)}, cluster)
        assert self._arrays is not None
        del self._arrays[cluster]  # the placeholder only satisfied the check of the columns
        self._spec, self._relation, self._path = spec, relation, path
        # integer ids less the smallest index S's rows when a dense S of that many rows fits the budget
        # (no table of the ids, no join); else the ids' table, G rows (S's memory bounded either way)
        self._stats, self._lying = span, False  # the statistics' span; rows found outside it
        if span is not None and (span[1] - span[0] + 1) * (len(self.players) + 1) > DENSE_SCORES:
            span = None
        self._opts, self._fmt, self._span = opts, fmt, span
        self._rows = rows  # each row's codes, kept by the count: the meat without reading the file again
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
            self._g, self._units = self._checked(_census_sql, self._spec, self._relation)
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

        def fetch() -> dict[str, np.ndarray]:
            con = _connect()
            try:
                return run(con, cell_sql(self._spec, self._relation), "numpy")
            finally:
                con.close()

        cells = self._checked(fetch)
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
        if self._lying:
            raise self._lie()
        players, a, b = self.codes()
        table = {"ci": a.astype(np.int32), "cj": b.astype(np.int32),
                 "outcome": self.column("outcome").astype(float), "u": np.asarray(u, dtype=float)}
        if u_extra is not None:
            table["ue"] = np.asarray(u_extra, dtype=float)
        done = _meat_rows(self._rows, players, table, n_cols) if self._rows is not None else None
        try:
            meat, g, units = done or _meat(self._spec, self._relation, players, table, n_cols, self._span)
        except _OutOfSpan:  # every later query on the column would be wrong too
            self._lying = True
            raise self._lie() from None
        self._g, self._units = g, units or self._units
        return meat

    def unit_sums(self) -> tuple[int, float, float]:
        """Decisive votes (outcome 0 or 1, a weight; self-comparisons left out) summed per cluster:
        ``(clusters holding one, largest weight of a cluster, sum over clusters of (sum w y - sum w /
        2)^2)`` with ``y = outcome == 1``: what the position-bias test clustered by the counts'
        cluster needs (:func:`evalkit.stats.judge_warnings.clustered_share_test`), from the meat's
        pass when it ran first, else one ``GROUP BY``."""
        if self._units is None:
            self._g, self._units = self._checked(_census_sql, self._spec, self._relation)
        return self._units

    def _lie(self) -> ValueError:
        from evalkit.engine._arrow import statistics_error

        return statistics_error(self._path, self._spec.cluster, self._stats)

    def _checked(self, query: Any, *args: Any) -> Any:
        """``query(*args)``, or the located error of a file whose statistics do not hold its
        cluster ids (found by the meat's pass, or by DuckDB's hash aggregate sized by them)."""
        import duckdb

        if self._lying:
            raise self._lie()
        try:
            return query(*args)
        except duckdb.Error as exc:
            if self._stats is None or "perfect hash aggregate" not in str(exc).lower():
                raise
            self._lying = True
            raise self._lie() from None


#: Rows per batch of the meat's stream: its NumPy temporaries stay small (fresh memory costs its first
#: touch: 1e6 rows took 0.91x the time of 4e6 in the whole command, 1e7 rows, 50,000 clusters)
BATCH_ROWS = 1_000_000

#: Rows at a time of the meat from the rows' codes (:func:`_meat_rows`): its temporaries stay in cache
CHUNK_ROWS = 1 << 16

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
    """``(S^T S, G, unit sums or None)`` from the coded rows: each row takes its collapsed cell's
    unit score (by the players' codes and the outcome) and adds ``w * u`` to ``S[gid, ca]``,
    ``-w * u`` to ``S[gid, cb]`` (and ``w * ue`` to the last column). The score comes from a
    dense table in NumPy (:func:`_dense_u`) where one fits, else from a join in DuckDB (at 1e7
    rows, 50,000 clusters and 200 players: 1.0 s for the pass against 1.7 s with the join).

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
        _within(got["gid"], n_g)
        meat = gram(coo_matrix((got["v"], (got["gid"], got["p"])), shape=(n_g, n_cols)).tocsr())
        return meat, int(np.unique(got["gid"]).size), None
    dense = _dense_u(table, n_cols - 1 if extra else n_cols)
    case = _outcome_case(dense[2]) if dense is not None else ""
    scores = np.zeros(n_g * n_cols)
    # per cluster and sign of the row (-1 lost by player_a, 0 neither, +1 won): rows, and their weight
    rows = np.zeros(3 * n_g, dtype=np.int64)
    weights = np.zeros(3 * n_g) if weighted else None
    batches = (_dense_batches(con, coded, n_cols, weighted, extra, dense[0], dense[1], case) if dense is not None
               else _joined_batches(con, join, n_cols, weighted, extra))
    for kind, first, second, wu, weight, last, we in batches:
        _within(kind, 3 * n_g)
        # np.add.at, not np.bincount(minlength=S.size): its cost is the batch's, not S's (numpy >= 1.25)
        np.add.at(scores, first, wu)
        np.add.at(scores, second, -wu)
        if we is not None:
            np.add.at(scores, last, we)
        rows += np.bincount(kind, minlength=3 * n_g)
        if weights is not None:
            weights += np.bincount(kind, weights=weight, minlength=3 * n_g)
    s = scores.reshape(n_g, n_cols)
    return csr_matrix(s.T @ s), *_unit_sums(rows.reshape(n_g, 3), weights)


class _OutOfSpan(Exception):
    """A row's cluster lies outside the span the file's statistics gave (:func:`_within`)."""


def _within(index: np.ndarray, size: int) -> None:
    """Raise :class:`_OutOfSpan` unless every ``index`` is in ``[0, size)``: a cluster id less the
    smallest id of the Parquet statistics (which DuckDB's ``min``/``max`` trust) indexes ``S``, and a
    hostile file's statistics may lie (an index past ``S``, or a negative one that would wrap)."""
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        raise _OutOfSpan


def _unit_sums(rows: np.ndarray, weights: np.ndarray | None) -> tuple[int, tuple[int, float, float]]:
    """``(G, unit sums)`` (:meth:`SqlClusterCounts.unit_sums`) from each cluster's rows and their
    weight (None: unweighted) by sign (columns: lost by player_a, neither, won)."""
    w = rows.astype(float) if weights is None else weights.reshape(-1, 3)
    held = rows[:, 0] + rows[:, 2] > 0  # decisive votes
    units = (int(held.sum()), float((w[:, 0] + w[:, 2])[held].max(initial=0.0)),
             float(np.sum((0.5 * (w[:, 2] - w[:, 0])[held]) ** 2)))
    return int(np.count_nonzero(rows.sum(axis=1))), units


#: Most entries of the dense table of unit scores per (player_a, player_b, outcome) that
#: :func:`_dense_u` builds (32 MB: 1,000 players, three outcomes); past it, or past :data:`DENSE_OUTCOMES` outcome values, DuckDB
#: joins each row to its cell's score instead (0.55 s more of DuckDB's time at 1e7 rows).
DENSE_U = 1 << 22
#: Most distinct outcome values the dense table takes (each a branch of one SQL ``CASE``).
DENSE_OUTCOMES = 16

def _dense_u(table: dict[str, np.ndarray], n_players: int
             ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray] | None:
    """``(u, ue, values)``: the collapsed cells' unit scores in a dense table indexed by
    ``(ca * P + cb) * (K + 1) + k``, ``k`` the outcome's rank among the ``K`` distinct outcome
    ``values`` (``K`` itself, a NaN slot, for none); None when the table would pass
    :data:`DENSE_U` entries or the outcomes :data:`DENSE_OUTCOMES` values."""
    values = np.unique(table["outcome"])
    slots = len(values) + 1
    if len(values) > DENSE_OUTCOMES or n_players * n_players * slots > DENSE_U:
        return None
    key = (table["ci"].astype(np.int64) * n_players + table["cj"]) * slots + np.searchsorted(values, table["outcome"])
    dense = []
    for name in ("u", "ue"):
        if name in table:
            out = np.full(n_players * n_players * slots, np.nan)
            out[key] = table[name]
            dense.append(out)
    return dense[0], dense[1] if len(dense) > 1 else None, values


def _outcome_case(values: np.ndarray) -> str:
    """SQL: the rank of ``c.outcome`` among ``values`` (their number for none)."""
    # each outcome as a DOUBLE parsed from its shortest repr: the very value the cells were grouped on
    when = " ".join(f"WHEN CAST('{float(v)!r}' AS DOUBLE) THEN {k}" for k, v in enumerate(values))
    return f"(CASE c.outcome {when} ELSE {len(values)} END)"


def _meat_rows(rows: CodedRows, players: Sequence[Any], table: dict[str, np.ndarray], n_cols: int
               ) -> tuple[csr_matrix, int, tuple[int, float, float]] | None:
    """:func:`_meat_on` from the rows' codes kept by the count (:class:`~evalkit.engine._arrow.CodedRows`;
    unweighted), without reading the file again; None where ``S`` or the dense table of unit
    scores (:func:`_dense_u`) would be too large. A row whose players or outcome make no collapsed
    cell (a self-comparison) adds nothing, as in the join."""
    from scipy.sparse import csr_matrix

    extra = "ue" in table
    n_players = n_cols - 1 if extra else n_cols
    if rows.n_g * n_cols > DENSE_SCORES:
        return None
    # the rows' codes in the counts' order; a player the counts dropped is the extra code n_players
    index = {name: k for k, name in enumerate(players)}
    width = n_players + 1
    dense = _dense_u(table, width)
    if dense is None:
        return None
    u, ue, values = dense
    slots = len(values) + 1
    pmap = np.array([index.get(name, n_players) for name in rows.players], dtype=np.int64)
    rank = np.searchsorted(values, [np.nan if v is None else float(v) for v in rows.outcomes])
    known = [v is not None and k < len(values) and values[k] == float(v) for k, v in zip(rank, rows.outcomes, strict=True)]
    omap = np.where(known, rank, len(values)).astype(np.int64)
    kmap = np.array([2 if v == 1.0 else 0 if v == 0.0 else 1 for v in rows.outcomes], dtype=np.int64)
    scores = np.empty(rows.n_g * n_cols)
    scores.fill(0.0)  # touched in order now, not page by page at random by the sums below
    counts = np.zeros(3 * rows.n_g, dtype=np.int64)
    for start in range(0, len(rows.a), CHUNK_ROWS):  # temporaries of a few hundred kB: in cache, reused
        part = slice(start, start + CHUNK_ROWS)
        ca, cb, o = pmap[rows.a[part]], pmap[rows.b[part]], rows.outcome[part]
        key = (ca * width + cb) * slots + omap[o]
        wu = u[key]
        gid = rows.gid[part].astype(np.int64)
        held = ~np.isnan(wu)
        if not held.all():
            ca, cb, o, key, wu, gid = ca[held], cb[held], o[held], key[held], wu[held], gid[held]
        base = gid * n_cols
        np.add.at(scores, base + ca, wu)
        np.add.at(scores, base + cb, -wu)
        if ue is not None:
            np.add.at(scores, base + (n_cols - 1), ue[key])
        gid *= 3
        gid += kmap[o]
        counts += np.bincount(gid, minlength=3 * rows.n_g)
    s = scores.reshape(rows.n_g, n_cols)
    return csr_matrix(s.T @ s), *_unit_sums(counts.reshape(rows.n_g, 3), None)


def _stream(rel: Any) -> Any:
    """The Arrow batches of a DuckDB relation, :data:`BATCH_ROWS` rows at a time."""
    # to_arrow_reader where DuckDB has it (2.0 deprecates fetch_arrow_reader), fetch_arrow_reader before
    reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader
    return reader(BATCH_ROWS)


#: Each row's cluster and sign, ``3 * gid + 1 + sign`` (sign: +1 won by player_a, -1 lost, 0 neither)
_KIND = "c.gid * 3 + CASE c.outcome WHEN 1 THEN 2 WHEN 0 THEN 0 ELSE 1 END"


def _dense_batches(con: Any, coded: str, n_cols: int, weighted: bool, extra: bool, u: np.ndarray,
                   ue: np.ndarray | None, outcome: str) -> Any:
    """The coded rows, each with its cell's unit score looked up in the dense table (no join in
    DuckDB): ``(kind, S index of player_a, of player_b, w * u, weight or None, S index of the last
    column or None, w * ue or None)``, ``kind`` as :data:`_KIND`. A row whose (players, outcome) is
    no collapsed cell adds nothing (the join's semantics)."""
    n_players = n_cols - 1 if extra else n_cols
    slots = len(u) // (n_players * n_players)
    row = f"c.gid * {n_cols}"
    rel = con.sql(f"SELECT {_KIND}, {row} + c.ca, {row} + c.cb, (c.ca * {n_players} + c.cb) * {slots} + {outcome}"
                  + (", coalesce(c.weight, 0)" if weighted else "") + (f", {row} + {n_cols - 1}" if extra else "")
                  + f" FROM ({coded}) c")
    for batch in _stream(rel):
        cols = [_numpy(batch.column(k)) for k in range(batch.num_columns)]
        key = cols[3]
        wu, we = u[key], (ue[key] if ue is not None else None)
        if np.isnan(wu).any():  # pragma: no cover - the cells were counted from these very rows
            keep = ~np.isnan(wu)
            cols, wu, we = [c[keep] for c in cols], wu[keep], (we[keep] if we is not None else None)
        weight = cols[4] if weighted else None
        if weight is not None:
            wu = wu * weight
            we = we * weight if we is not None else None
        yield cols[0], cols[1], cols[2], wu, weight, (cols[-1] if extra else None), we


def _joined_batches(con: Any, join: str, n_cols: int, weighted: bool, extra: bool) -> Any:
    """The coded rows joined by DuckDB to their cells' unit scores, as :func:`_dense_batches`'s tuples."""
    row = f"c.gid * {n_cols}"
    rel = con.sql(f"SELECT {_KIND}, {row} + c.ca, {row} + c.cb, coalesce(c.weight * u.u, 0)"  # a missing weight adds nothing
                  + (", coalesce(c.weight, 0)" if weighted else "")
                  + (f", {row} + {n_cols - 1}, coalesce(c.weight * u.ue, 0)" if extra else "") + f" {join}")
    for batch in _stream(rel):
        cols = [_numpy(batch.column(k)) for k in range(batch.num_columns)]
        weight = cols[4] if weighted else None
        last, we = (cols[-2], cols[-1]) if extra else (None, None)
        yield cols[0], cols[1], cols[2], cols[3], weight, last, we


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
