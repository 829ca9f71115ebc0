"""Cluster-robust terms in SQL: counts for the fit without the cluster, scores per cluster by DuckDB.

With ``cluster=`` and many clusters (50,000 items at 1e7 rows) the cells ``(player_a,
player_b, outcome, cluster)`` are about as many as the rows; fetching them into Python took
6.8 GB. Yet neither the fit nor a cluster-robust sandwich needs them:

- the fit reads the cells collapsed over the cluster, ``(player_a, player_b, outcome)``, the
  same query as without a cluster;
- the sandwich's meat is ``S^T S``, where ``S[g, p]`` is the sum of the score contributions
  of cluster ``g`` to player ``p``'s coordinate (``w * u`` to ``player_a``'s, ``-w * u`` to
  ``player_b``'s, ``u`` depending only on the pair and the outcome at the fitted strengths).
  :meth:`SqlClusterCounts.cluster_scores` sends the ``u`` of each collapsed cell to DuckDB,
  which joins them to the file's cells, sums per ``(cluster, player)`` and returns only those
  non-zeros: data of size ``clusters x players touched``, not rows;
- ``G`` (the number of clusters) and whether a cluster is missing come from one more
  ``count(DISTINCT ...)``.

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
from evalkit.io.fastpath import CellSpec, _outcome_sql, _q, cell_sql

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


def cluster_census(con: Any, spec: CellSpec, relation: str) -> tuple[int, bool]:
    """``(G, some cluster missing)`` of the file: one ``count(DISTINCT)`` over the cluster column."""
    from evalkit.engine._duckdb import run

    assert spec.cluster is not None
    col = _q(spec.cluster)
    ((g, missing),) = run(con, f"SELECT count(DISTINCT CAST({col} AS VARCHAR)) FILTER (WHERE {_not_self(spec)}), "
                               f"coalesce(bool_or({col} IS NULL), false) FROM {relation}", "all")
    return int(g), bool(missing)


def rows_sql(spec: CellSpec, relation: str) -> str:
    """The file's comparisons one per row (``player_a, player_b, outcome, g, weight``; ``g`` the
    cluster as text), as :func:`~evalkit.io.fastpath.cell_sql` reads them, without grouping: the
    queries below group them once, on their own keys."""
    assert spec.cluster is not None
    ids = (f"CAST({_q(spec.player_a)} AS VARCHAR) AS player_a, CAST({_q(spec.player_b)} AS VARCHAR) AS player_b, "
           f"CAST({_q(spec.cluster)} AS VARCHAR) AS g")
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
                 relation: str, path: Path, opts: dict[str, Any], fmt: str) -> None:
        super().__init__({**cells, cluster: np.zeros(len(cells["n"]), dtype=object)}, cluster)
        assert self._arrays is not None
        del self._arrays[cluster]  # the placeholder only satisfied the check of the columns
        self._g, self._spec, self._relation, self._path = n_clusters, spec, relation, path
        self._opts, self._fmt = opts, fmt
        self._expanded = False

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
        cell (one comparison of unit weight). ``S`` is summed by DuckDB; only its non-zeros reach
        Python (:func:`isolated`)."""
        if not self.collapsed:
            raise RuntimeError("cluster_meat needs the collapsed cells; these were expanded.")
        _, a, b = self.codes()
        # a dict of numpy arrays: DuckDB scans it as it is (no pandas, no pyarrow to map in)
        table = {"player_a": self.column("player_a").astype(object), "player_b": self.column("player_b").astype(object),
                 "outcome": self.column("outcome").astype(float), "ci": a.astype(np.int32), "cj": b.astype(np.int32),
                 "u": np.asarray(u, dtype=float)}
        if u_extra is not None:
            table["ue"] = np.asarray(u_extra, dtype=float)
        return isolated("meat", spec=self._spec, relation=self._relation, n_clusters=self._g, table=table,
                        n_cols=n_cols)

    def unit_sums(self) -> tuple[int, float, float]:
        """Decisive votes (outcome 0 or 1) grouped into comparison units (cluster x unordered pair):
        ``(units, largest weight of a unit, sum over units of (sum w y - sum w / 2)^2)`` with
        ``y = outcome == 1``: what the clustered position-bias test needs
        (:func:`evalkit.stats.judge_warnings.clustered_share_test`), from DuckDB."""
        return isolated("units", spec=self._spec, relation=self._relation)


def _meat(spec: CellSpec, relation: str, n_clusters: int, table: dict[str, np.ndarray], n_cols: int) -> csr_matrix:
    """:meth:`SqlClusterCounts.cluster_meat` in this process."""
    from scipy.sparse import coo_matrix

    from evalkit.engine._duckdb import run

    assert spec.cluster is not None
    cols, vals = ["u.ci", "u.cj"], ["c.weight * u.u", "-(c.weight * u.u)"]
    if "ue" in table:
        cols.append(f"CAST({n_cols - 1} AS INTEGER)")
        vals.append("c.weight * u.ue")
    ids = (f"SELECT g, CAST(row_number() OVER () - 1 AS INTEGER) AS gid FROM "
           f"(SELECT DISTINCT CAST({_q(spec.cluster)} AS VARCHAR) AS g FROM {relation} WHERE {_not_self(spec)})")
    # each row joins its cell's unit score (self-comparisons have none: dropped), then one GROUP BY
    sql = (f"SELECT gid, p, sum(v) AS v FROM (SELECT ids.gid, unnest([{', '.join(cols)}]) AS p, "
           f"unnest([{', '.join(vals)}]) AS v FROM ({rows_sql(spec, relation)}) c "
           "JOIN scores_u u ON c.player_a = u.player_a AND c.player_b = u.player_b AND c.outcome = u.outcome "
           f"JOIN ({ids}) ids ON c.g = ids.g) GROUP BY gid, p")
    con = _connect()
    try:
        con.register("scores_u", table)
        got = run(con, sql, "numpy")
    finally:
        con.close()
    v, gid, p = got.pop("v"), got.pop("gid"), got.pop("p")
    return gram(coo_matrix((v, (gid, p)), shape=(n_clusters, n_cols)).tocsr())


def _units(spec: CellSpec, relation: str) -> tuple[int, float, float]:
    """:meth:`SqlClusterCounts.unit_sums` in this process."""
    from evalkit.engine._duckdb import run

    sql = ("SELECT count(*), coalesce(max(s0), 0), coalesce(sum((s1 - 0.5 * s0) * (s1 - 0.5 * s0)), 0) FROM "
           "(SELECT sum(CASE WHEN outcome = 1 THEN weight ELSE 0 END) AS s1, sum(weight) AS s0 "
           f"FROM ({rows_sql(spec, relation)}) WHERE outcome IN (0, 1) AND player_a <> player_b "
           "GROUP BY g, least(player_a, player_b), greatest(player_a, player_b))")
    con = _connect()
    try:
        ((units, largest, e0sq),) = run(con, sql, "all")
    finally:
        con.close()
    return int(units), float(largest), float(e0sq)


_TASKS: dict[str, Callable[..., Any]] = {"meat": _meat, "units": _units}


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
