"""``--cluster`` in SQL (evalkit.engine._clustered): the fit on cells collapsed over the cluster and
the cluster-robust meat S^T S from DuckDB's (cluster, player) sums equal the per-cluster-cells path
(pandas engine) and statsmodels' cluster-robust GLM covariance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dask_cluster import dask_client  # noqa: F401 (fixture)

from evalkit.engine._clustered import SqlClusterCounts
from evalkit.engine.aggregate import aggregate_comparisons
from evalkit.ratings.bt import fit_bt
from evalkit.ratings.counts import aggregate
from evalkit.ratings.leaderboard import leaderboard_columns
from evalkit.stats.judge_warnings import count_warnings


def _arena(path, *, n=3000, models=8, items=300, seed=1, left_bias=0.0, tie_share=0.1):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    p = 1 / (1 + np.exp(-(0.3 * (a - b) + left_bias)))
    u = rng.random(n)
    winner = np.where(u < tie_share, "tie", np.where(rng.random(n) < p, "model_a", "model_b"))
    frame = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b], "winner": winner,
                          "question_id": rng.integers(0, items, n)})
    frame.to_parquet(path)
    return frame


def _canonical(path, *, n=2000, models=6, items=150, seed=2):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    frame = pd.DataFrame({"player_a": [f"p{k}" for k in a], "player_b": [f"p{k}" for k in b],
                          "outcome": rng.choice([0.0, 0.25, 0.5, 1.0], n), "weight": rng.uniform(0.5, 2.0, n),
                          "item": [f"q{k}" for k in rng.integers(0, items, n)]})
    frame.to_parquet(path)
    return frame


@pytest.mark.parametrize("ties", ["half", "davidson", "drop"])
def test_sql_cluster_sandwich_equals_the_per_cluster_cells(tmp_path, ties):
    path = tmp_path / "arena.parquet"
    _arena(path)
    sql, _ = aggregate_comparisons(path, cluster="item")
    cells, _ = aggregate_comparisons(path, cluster="item", engine="pandas")
    assert isinstance(sql, SqlClusterCounts) and sql.n_clusters == cells.n_clusters == 300
    assert len(sql) < len(cells)  # collapsed over the items: the fit's cells only
    new = leaderboard_columns(sql, cluster="item", ties=ties).to_frame()
    old = leaderboard_columns(cells, cluster="item", ties=ties).to_frame()
    assert sql.collapsed  # the Wald path never fetched the per-cluster cells
    for col in ("elo", "ci_low", "ci_high"):
        np.testing.assert_allclose(new[col].to_numpy(float), old[col].to_numpy(float), rtol=0, atol=1e-10)


@pytest.mark.parametrize("outcomes", [16, 2])
def test_sql_cluster_meat_weights_and_continuous_outcomes(tmp_path, monkeypatch, outcomes):
    # four outcome values: each row's unit score from NumPy's dense table (16), or DuckDB's join (2)
    import evalkit.engine._clustered as clustered

    monkeypatch.setattr(clustered, "DENSE_OUTCOMES", outcomes)
    path = tmp_path / "canonical.parquet"
    frame = _canonical(path)
    sql, _ = aggregate_comparisons(path, cluster="item")
    cells, _ = aggregate_comparisons(path, cluster="item", engine="pandas")
    fit = fit_bt(aggregate(cells))
    new = fit.covariance("sandwich", frame=sql, cluster="item")
    old = fit.covariance("sandwich", frame=cells.cells, cluster="item")
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-13 * np.abs(old).max())
    # the census's sums per item over the decisive votes (outcome 0 or 1), weighted, by pandas from the rows
    dec = frame[frame["outcome"].isin([0.0, 1.0])]
    w = dec["weight"]
    s0, s1 = w.groupby(dec["item"]).sum(), (w * dec["outcome"]).groupby(dec["item"]).sum()
    assert sql.unit_sums() == (len(s0), pytest.approx(s0.max(), rel=1e-14),
                               pytest.approx(float(((s1 - s0 / 2) ** 2).sum()), rel=1e-13))


def test_sql_cluster_sandwich_against_statsmodels(tmp_path):
    """No ties: BT is a logistic regression on x = e_a - e_b (player 0 the reference); statsmodels'
    GLM(Binomial).fit(cov_type="cluster") has the same CR1 factor G/(G-1) (N-1)/(N-K)."""
    sm = pytest.importorskip("statsmodels.api")
    path = tmp_path / "arena.parquet"
    frame = _arena(path, models=5, items=120, tie_share=0.0)
    sql, _ = aggregate_comparisons(path, cluster="item")
    fit = fit_bt(aggregate(sql), ties="drop")
    cov = fit.covariance("sandwich", frame=sql, cluster="item")
    dec = frame[frame["winner"] != "tie"]
    players = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    x = np.zeros((len(dec), len(players)))
    x[np.arange(len(dec)), [players.index(p) for p in dec["model_a"]]] += 1
    x[np.arange(len(dec)), [players.index(p) for p in dec["model_b"]]] -= 1
    y = (dec["winner"] == "model_a").to_numpy(float)
    res = sm.GLM(y, x[:, 1:], family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(dec["question_id"])[0]}, tol=1e-14)
    # Var(theta_k - theta_0) from evalkit's centred covariance
    diff = np.diag(cov)[1:] + cov[0, 0] - 2 * cov[1:, 0]
    np.testing.assert_allclose(res.params, fit.theta[1:] - fit.theta[0], rtol=1e-8)
    np.testing.assert_allclose(diff, np.diag(res.cov_params()), rtol=1e-8)


def test_sql_position_test_and_bootstrap_match_the_cells(tmp_path):
    path = tmp_path / "arena.parquet"
    frame = _arena(path, n=4000, items=40, left_bias=0.4)  # ~100 votes per item; a left-position bias
    sql, _ = aggregate_comparisons(path, cluster="item")
    cells, _ = aggregate_comparisons(path, cluster="item", engine="pandas")
    warned = count_warnings(sql, "arena", judge="j")
    assert warned and "CR1 t-test clustered by item p = " in warned[0]
    assert sql.collapsed  # the clusters' sums came from DuckDB
    assert warned == count_warnings(cells, "arena", judge="j")
    # the score-form CR1 t-test by hand (scipy's t): e_g = sum over item g's decisive votes of (y - 1/2),
    # se = sqrt(G / (G - 1) sum e_g^2) / N, t = (share - 1/2) / se on G - 1 degrees of freedom
    from scipy import stats

    dec = frame[frame["winner"] != "tie"]
    y = (dec["winner"] == "model_a").to_numpy(float)
    e = pd.Series(y - 0.5).groupby(dec["question_id"].to_numpy()).sum().to_numpy()
    g, n = len(e), len(y)
    t = (y.mean() - 0.5) / (np.sqrt(g / (g - 1) * np.sum(e * e)) / n)
    assert f"p = {2 * stats.t.sf(abs(t), g - 1):.2g})" in warned[0] and g == 40
    # the cluster bootstrap resamples per-cluster pair counts: the counts fetch them, same numbers
    boot = leaderboard_columns(sql, cluster="item", interval="bootstrap", n_resamples=30, rng=3).to_frame()
    assert not sql.collapsed
    ref = leaderboard_columns(cells, cluster="item", interval="bootstrap", n_resamples=30, rng=3).to_frame()
    np.testing.assert_allclose(boot["ci_low"].to_numpy(float), ref["ci_low"].to_numpy(float), rtol=0, atol=1e-9)


_CAPPED = """
import os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
from evalkit.engine._duckdb import connect, parquet_columns
from evalkit.engine.aggregate import aggregate_comparisons
from evalkit.ratings.leaderboard import leaderboard_columns

import pyarrow, scipy.linalg, scipy.sparse, scipy.special  # their thread pools (OpenBLAS's) start on import
import pyarrow.parquet  # pyarrow 14 starts the AWS SDK's event-loop thread when it imports pyarrow.fs

connect().close()  # DuckDB 1.1 keeps one thread of its own after its first database
threads = lambda: len(os.listdir("/proc/self/task"))
base = threads()
con = connect()
started = threads() - base
con.close()
parquet_columns(sys.argv[1])
counts, _ = aggregate_comparisons(sys.argv[1], cluster="item")
print(started, threads() - base, repr(leaderboard_columns(counts, cluster="item").to_frame()["ci_low"].tolist()))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
def test_under_an_address_cap_no_idle_duckdb_threads_and_the_same_numbers(tmp_path):
    """Under ``ulimit -v`` the cluster-robust terms run in this process: DuckDB's asynchronous I/O threads
    are not started (each thread's malloc arena reserves 64 MB of address space: 1.4 GB of a 2 GB cap
    went to idle threads, and 1e7 rows with 50,000 items ran out of memory), and reading a Parquet
    schema leaves no database (and threads) behind. Same numbers as without the cap."""
    import subprocess
    import sys

    import duckdb

    path = tmp_path / "arena.parquet"
    _arena(path, n=1000, items=50)
    out = subprocess.run([sys.executable, "-c", _CAPPED, str(path)], capture_output=True, text=True, check=True)
    started, left, lows = out.stdout.split(maxsplit=2)
    # DuckDB's worker threads (its `threads` setting, the cores; DuckDB 1.1 starts one more than 2.0) and no
    # asynchronous I/O threads (eight more in DuckDB 2.0); none left at the end
    con = duckdb.connect()
    threads = con.sql("SELECT current_setting('threads')").fetchall()[0][0]
    con.close()
    assert int(started) <= threads and int(left) == 0
    here = leaderboard_columns(aggregate_comparisons(path, cluster="item")[0], cluster="item").to_frame()
    assert eval(lows) == here["ci_low"].tolist()  # the repr of a list of floats: exact


def test_missing_cluster_is_the_readers_located_error(tmp_path):
    path = tmp_path / "arena.parquet"
    frame = _arena(path, n=200, items=20)
    frame["question_id"] = frame["question_id"].astype("Int64")
    frame.loc[7, "question_id"] = pd.NA
    frame.to_parquet(path)
    with pytest.raises(ValueError, match="(?i)missing|cluster|question_id"):
        aggregate_comparisons(path, cluster="item")


@pytest.mark.parametrize("ids", ["int", "text"])
@pytest.mark.parametrize("summed", ["rows kept by the count", "dense, scores looked up", "dense, scores joined",
                                    "sparse"])
def test_sql_cluster_meat_on_every_id_type_and_both_summations(tmp_path, monkeypatch, ids, summed):
    """Integer and text ids are joined as stored; S is summed densely (np.add.at over the rows'
    codes kept by the dictionary count, or over batches DuckDB streams, each row's unit score
    looked up in NumPy's dense table or joined by DuckDB) or sparsely (DuckDB's GROUP BY): each
    equals the per-cluster cells."""
    import evalkit.engine._arrow as arrow
    import evalkit.engine._clustered as clustered

    dense = summed != "sparse"
    monkeypatch.setattr(clustered, "DENSE_U", 0 if summed == "dense, scores joined" else 1 << 22)
    monkeypatch.setattr(arrow, "ROWS_BUDGET", 1 << 28 if summed == "rows kept by the count" else 0)
    used: list[str] = []

    def spy(name):
        real = getattr(clustered, name)
        return lambda *a: used.append(name) or real(*a)

    for name in ("_dense_batches", "_joined_batches"):
        monkeypatch.setattr(clustered, name, spy(name))

    path = tmp_path / "arena.parquet"
    frame = _arena(path, n=2500, items=90, seed=7)
    q = frame["question_id"]
    frame["question_id"] = q if ids == "int" else "q" + q.astype(str)
    frame.to_parquet(path)
    monkeypatch.setattr(clustered, "DENSE_SCORES", 10**9 if dense else 0)
    monkeypatch.setattr(clustered, "BATCH_ROWS", 97)  # S, G and the unit sums summed over many batches
    sql, _ = aggregate_comparisons(path, cluster="item")
    cells, _ = aggregate_comparisons(path, cluster="item", engine="pandas")
    fit = fit_bt(aggregate(cells), ties="davidson")
    new = fit.covariance("sandwich", frame=sql, cluster="item")
    old = fit.covariance("sandwich", frame=cells.cells, cluster="item")
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-13 * np.abs(old).max())
    # the position test's sums per cluster (decisive votes: y = left wins), by pandas from the rows
    dec = frame[frame["winner"] != "tie"]
    e = (dec["winner"] == "model_a").astype(float).sub(0.5).groupby(dec["question_id"]).sum()
    votes = dec.groupby("question_id").size()
    assert sql.unit_sums() == (len(votes), float(votes.max()), pytest.approx(float((e * e).sum()), rel=1e-13))
    assert count_warnings(sql, "arena", judge="j") == count_warnings(cells, "arena", judge="j")
    assert (sql._rows is not None) == (summed == "rows kept by the count")
    assert used == {"rows kept by the count": [], "dense, scores looked up": ["_dense_batches"], "dense, scores joined": ["_joined_batches"],
                    "sparse": []}[summed]


@pytest.mark.parametrize(("ids", "direct"), [("int", True), ("negative", True), ("above-int64", True),
                                              ("sparse-int", False), ("text", False)])
def test_integer_ids_index_s_directly_or_by_their_table(tmp_path, ids, direct):
    """Nearly dense integer ids (however offset, UBIGINT above 2^63 too) are their own row of S, less
    the smallest (no table of ids, no join); sparse integers and text go through the table of the
    distinct ids. Either way: the per-cluster cells' sandwich and the position test's sums per
    cluster, against a GROUP BY of the ids as text run here on the file."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "arena.parquet"
    frame = _arena(path, n=2500, items=90, seed=11, left_bias=0.3)
    q = frame["question_id"].to_numpy()
    col = {"int": pa.array(q), "negative": pa.array(q - 50), "sparse-int": pa.array(q * 10**12 + 5),
           "above-int64": pa.array(q.astype(np.uint64) + np.uint64(2**63), pa.uint64()),
           "text": pa.array(["q" + str(v) for v in q])}[ids]
    table = pa.Table.from_pandas(frame.drop(columns="question_id"), preserve_index=False)
    pq.write_table(table.append_column("question_id", col), path)
    sql, _ = aggregate_comparisons(path, cluster="item")
    assert (sql._span is not None) == direct
    cells, _ = aggregate_comparisons(path, cluster="item", engine="pandas")
    fit = fit_bt(aggregate(cells), ties="davidson")
    new = fit.covariance("sandwich", frame=sql, cluster="item")
    old = fit.covariance("sandwich", frame=cells.cells, cluster="item")
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-13 * np.abs(old).max())
    # the decisive votes summed per cluster, on the ids as text
    ref = duckdb.sql(
        "SELECT count(*), max(s0), sum((s1 - 0.5 * s0) * (s1 - 0.5 * s0)) FROM (SELECT "
        "sum(CASE WHEN winner = 'model_a' THEN 1 ELSE 0 END) AS s1, count(*) AS s0 "
        f"FROM read_parquet('{path}') WHERE winner IN ('model_a', 'model_b') AND model_a <> model_b "
        "GROUP BY CAST(question_id AS VARCHAR))").fetchall()[0]
    assert sql.unit_sums() == (ref[0], float(ref[1]), pytest.approx(float(ref[2]), rel=1e-15))
    assert count_warnings(sql, "arena", judge="j") == count_warnings(cells, "arena", judge="j")


@pytest.mark.parametrize("first", ["meat", "census", "cells"])
def test_clusters_and_unit_sums_from_the_meats_pass_or_their_own(tmp_path, monkeypatch, first):
    """G and the position test's sums come from the meat's pass (no read of their own), from the
    per-cluster cells once fetched (the cluster bootstrap), or, asked for first, from one GROUP BY: each
    equals the pandas engine's, and a cluster holding only self-comparisons (dropped) is no cluster."""
    import evalkit.engine._clustered as clustered

    monkeypatch.setattr(clustered, "BATCH_ROWS", 101)  # summed over many batches
    path = tmp_path / "arena.parquet"
    frame = _arena(path, n=1500, items=60, left_bias=0.3)
    frame.loc[frame["question_id"] == 7, "model_b"] = frame.loc[frame["question_id"] == 7, "model_a"]
    frame.loc[:40, "model_b"] = frame.loc[:40, "model_a"]  # a few more self-comparisons elsewhere
    frame.to_parquet(path)
    sql, _ = aggregate_comparisons(path, cluster="item", self_comparisons="drop")
    cells, _ = aggregate_comparisons(path, cluster="item", engine="pandas", self_comparisons="drop")
    if first == "meat":
        leaderboard_columns(sql, cluster="item")
        assert sql._units is not None  # kept from the meat's pass
    elif first == "cells":
        sql.expand()
    assert sql.n_clusters == cells.n_clusters == frame.loc[frame["model_a"] != frame["model_b"], "question_id"].nunique()
    assert 7 not in set(cells.column("item").astype(int).tolist())
    kept = frame[(frame["model_a"] != frame["model_b"]) & (frame["winner"] != "tie")]
    e = (kept["winner"] == "model_a").astype(float).sub(0.5).groupby(kept["question_id"]).sum()
    votes = kept.groupby("question_id").size()
    assert sql.unit_sums() == (len(votes), float(votes.max()), pytest.approx(float((e * e).sum()), rel=1e-13))
    assert count_warnings(sql, "arena", judge="j") == count_warnings(cells, "arena", judge="j")


def test_a_cluster_the_file_cannot_have_is_refused_before_any_row_is_read(tmp_path, monkeypatch, capsys,
                                                                          dask_client):  # noqa: F811
    # An Arena file's question_id is read as 'item'; before, --cluster question_id read the whole file
    # with the pandas reader (36 s, 6.9 GB at 1e7 rows) and only then said the column was not there.
    import evalkit.io.read as read
    from evalkit.cli import main

    arena, canon = tmp_path / "arena.parquet", tmp_path / "canon.csv"
    _arena(arena, n=200)
    _canonical(tmp_path / "c.parquet", n=200)
    pd.read_parquet(tmp_path / "c.parquet").drop(columns="item").to_csv(canon, index=False)

    def never(*a, **k):
        raise AssertionError("the pandas reader read the rows")

    monkeypatch.setattr(read, "read_comparisons", never)
    for engine, kw in (("duckdb", {}), ("dask", {"scheduler": dask_client})):
        with pytest.raises(ValueError, match=r"Its column 'question_id' is read as 'item': pass --cluster item\."):
            aggregate_comparisons(arena, cluster="question_id", engine=engine, **kw)
    with pytest.raises(ValueError, match=r"no cluster column 'prompt'.*clusters 'item' \(its column 'question_id'\)\.$"):
        aggregate_comparisons(arena, cluster="prompt")
    with pytest.raises(ValueError, match=r"canon\.csv has no cluster column 'item': read in the canonical format, "
                                         r"its comparisons keep no cluster column but 'source'\.$"):
        aggregate_comparisons(canon, cluster="item")
    with pytest.raises(ValueError, match=r"In Python, keep_columns=\['weight'\] keeps a column of the file as it is"):
        aggregate_comparisons(canon, cluster="weight")
    assert main(["rate", str(arena), "--cluster", "question_id"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith("pass --cluster item.")


def test_clusters_the_converters_keep_still_reach_the_pandas_reader(tmp_path):
    # an Arena 'turn', a kept column and the source are clusters of the pandas reader: not refused
    frame = _arena(tmp_path / "a.parquet", n=400, items=40)
    frame.assign(turn=np.arange(400) % 2).to_parquet(tmp_path / "t.parquet")
    counts, _ = aggregate_comparisons(tmp_path / "t.parquet", cluster="turn")
    assert counts.n_clusters == 2
    canon = _canonical(tmp_path / "c.parquet", n=300, items=30).assign(session=lambda f: f["item"].str[:2])
    canon.to_parquet(tmp_path / "s.parquet")
    counts, _ = aggregate_comparisons(tmp_path / "s.parquet", cluster="session", keep_columns=["session"])
    assert counts.n_clusters == canon["session"].nunique()
    counts, _ = aggregate_comparisons(tmp_path / "s.parquet", cluster="source")
    assert counts.n_clusters == 1


def _lie_in_the_footer(path, column_max: int, claimed: int) -> None:
    """Rewrite the Parquet footer's largest value of the int64 cluster column (statistics ``max`` and
    the legacy ``max_value``) to ``claimed``, as a hostile or buggy writer would; the pages are untouched."""
    import struct

    raw = bytearray(path.read_bytes())
    size = struct.unpack("<i", raw[-8:-4])[0]
    start = len(raw) - 8 - size
    old, new = struct.pack("<q", column_max), struct.pack("<q", claimed)
    footer = bytes(raw[start:-8])
    assert footer.count(old) == 2  # both statistics fields, and nothing else (the ids are 1,000,000 and up)
    raw[start:-8] = footer.replace(old, new)
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("encoding", ["dictionary", "plain"])
@pytest.mark.parametrize("interval", ["sandwich", "bootstrap"])
def test_statistics_that_lie_about_the_cluster_are_a_located_error(tmp_path, capsys, encoding, interval):
    """DuckDB trusts Parquet statistics: on a footer claiming the ids end at 1,000,010 when they reach
    1,000,029 its min/max give the false range, its DISTINCT misses ids and a GROUP BY on the column
    fails inside DuckDB ("Perfect hash aggregate"); before, evalkit crashed with an IndexError
    (exit 3). Now: one line naming the file, the column, what was found and the allowed range, with the
    flag that reads it right (--engine pandas reads the values, and gives the untouched file's numbers)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evalkit.cli import main

    frame = _arena(tmp_path / "a.parquet", n=3000, models=5, items=30)
    frame["question_id"] += 1_000_000
    honest, lying = tmp_path / "honest.parquet", tmp_path / "lying.parquet"
    dictionary = ["model_a", "model_b", "winner"] if encoding == "dictionary" else False
    for path in (honest, lying):
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, use_dictionary=dictionary)
    _lie_in_the_footer(lying, 1_000_029, 1_000_010)
    # DuckDB 1.1 (the lower bound) reads the true range for min/max, then sizes a GROUP BY on the column by the
    # statistics: a segmentation fault. The census's range is checked against the footer first.
    from evalkit.engine._arrow import StatisticsError, check_statistics

    check_statistics(lying, "question_id", (1_000_000, 1_000_010))  # what DuckDB 2 reports: the footer's own
    with pytest.raises(StatisticsError, match="found a value 1000029 outside the range 1000000 to 1000010"):
        check_statistics(lying, "question_id", (1_000_000, 1_000_029))
    args = ["--cluster", "item"] + (["--n-resamples", "40", "--rng", "1"] if interval == "bootstrap" else [])
    assert main(["rate", str(lying), *args]) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("read 3000 rows")]
    assert len(err) == 1 and "lying.parquet" in err[0] and "column 'question_id': found" in err[0], err
    assert "outside the range 1000000 to 1000010" in err[0] and "--engine pandas" in err[0]
    assert main(["rate", str(honest), *args]) == 0
    want = capsys.readouterr().out.replace("honest.parquet", "X")
    assert main(["rate", str(lying), *args, "--engine", "pandas"]) == 0
    assert capsys.readouterr().out.replace("lying.parquet", "X") == want


def test_the_cluster_imports_thread_is_joined_before_the_fit(tmp_path, monkeypatch):
    """rate --cluster imports scipy.sparse in a thread while the rows are counted. The fit looks
    scipy.sparse up in sys.modules, where a half-imported module raised AttributeError (exit 3) on a
    small file, whose count ended first. The thread below finishes only when joined: the fit must
    come after it."""
    import importlib
    import threading

    from evalkit.cli import main

    rate = importlib.import_module("evalkit.cli.rate")
    lb = importlib.import_module("evalkit.ratings.leaderboard")  # evalkit.ratings.leaderboard is also a function

    events: list[str] = []
    release = threading.Event()

    class Warming(threading.Thread):
        def join(self, timeout=None):
            release.set()
            super().join(timeout)

    def warm(modules):
        thread = Warming(target=lambda: (release.wait(60), events.append("imported")), daemon=True)
        thread.start()
        return thread

    real = lb.leaderboard_columns

    def fit(*a, **k):
        events.append("fit")
        return real(*a, **k)

    monkeypatch.setattr(rate, "_warm", warm)
    monkeypatch.setattr(lb, "leaderboard_columns", fit)
    _arena(tmp_path / "a.parquet", n=300, items=20)
    assert main(["rate", str(tmp_path / "a.parquet"), "--cluster", "item"]) == 0
    release.set()
    assert events[:2] == ["imported", "fit"]
