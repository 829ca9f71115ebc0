"""Engines agree: the same cells from pandas, DuckDB and Dask, whatever the format; weights are frequency weights."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from dask_cluster import dask_client  # noqa: F401 (fixture)
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.engine import aggregate_comparisons
from evalkit.io.counts import ComparisonCounts
from evalkit.ratings import leaderboard

PLAYERS = ["alpha", "beta", "gamma", "delta", "7"]


def frames(draw, fmt: str) -> pd.DataFrame:
    n = draw(st.integers(3, 40))
    a = draw(st.lists(st.sampled_from(PLAYERS), min_size=n, max_size=n))
    shift = draw(st.lists(st.integers(1, len(PLAYERS) - 1), min_size=n, max_size=n))
    b = [PLAYERS[(PLAYERS.index(x) + s) % len(PLAYERS)] for x, s in zip(a, shift, strict=True)]
    item = draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=n, max_size=n))
    if fmt == "arena":
        w = draw(st.lists(st.sampled_from(["model_a", "model_b", "tie", "tie (bothbad)"]), min_size=n, max_size=n))
        return pd.DataFrame({"model_a": a, "model_b": b, "winner": w, "question_id": item})
    if fmt == "left_right":
        w = draw(st.lists(st.sampled_from(["left", "right", "tie"]), min_size=n, max_size=n))
        return pd.DataFrame({"left": a, "right": b, "winner": w, "prompt": item})
    if fmt == "counts":
        c = [draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)) for _ in range(3)]
        return pd.DataFrame({"player_a": a, "player_b": b, "wins_a": c[0], "wins_b": c[1], "ties": c[2],
                             "item": item})
    o = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.8]), min_size=n, max_size=n))
    w = draw(st.lists(st.sampled_from([1.0, 2.0, 0.5, 3.0]), min_size=n, max_size=n))
    return pd.DataFrame({"player_a": a, "player_b": b, "outcome": o, "weight": w, "item": item})


def write(frame: pd.DataFrame, path, container: str):
    if container == "csv":
        frame.to_csv(path, index=False)
    elif container == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict(orient="records")))
    else:
        frame.to_parquet(path, index=False)


@settings(max_examples=25)
@given(data=st.data(), fmt=st.sampled_from(["arena", "left_right", "canonical", "counts"]),
       container=st.sampled_from(["csv", "jsonl", "parquet"]), cluster=st.sampled_from([None, "item"]))
def test_every_format_gives_the_same_cells_on_pandas_and_duckdb(tmp_path_factory, data, fmt, container, cluster):
    frame = frames(data.draw, fmt)
    path = tmp_path_factory.mktemp("p") / f"votes.{container}"
    write(frame, path, container)
    ref, rep = aggregate_comparisons(path, engine="pandas", cluster=cluster)
    got, rep2 = aggregate_comparisons(path, engine="duckdb", cluster=cluster)
    assert got.equals(ref)
    assert (rep2.rows_read, rep2.rows_kept, rep2.format) == (rep.rows_read, rep.rows_kept, rep.format)


@pytest.mark.parametrize("container", ["csv", "parquet", "jsonl"])
def test_dask_cells_and_ratings_equal_duckdb(tmp_path, container, dask_client):  # noqa: F811
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    frame = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                          "winner": rng.choice(["model_a", "model_b", "tie"], n, p=[0.45, 0.45, 0.1]),
                          "question_id": rng.integers(0, 40, n)})
    if container == "parquet":  # partitioned: a folder of three files
        folder = tmp_path / "battles"
        folder.mkdir()
        for k, lo in enumerate(range(0, n, n // 3)):
            part = frame.iloc[lo:lo + n // 3]
            part.to_parquet(folder / f"part-{k}.parquet", index=False)
        path = folder
    else:
        path = tmp_path / f"battles.{container}"
        write(frame, path, container)
    for cluster in (None, "item"):
        duck, rep = aggregate_comparisons(path, engine="duckdb", cluster=cluster)
        dask, rep2 = aggregate_comparisons(path, engine="dask", scheduler=dask_client, cluster=cluster)
        assert dask.equals(duck) and duck.n_rows == n
        assert (rep2.rows_read, rep2.rows_kept) == (rep.rows_read, rep.rows_kept)
        one = leaderboard(duck, cluster=cluster)
        two = leaderboard(dask, cluster=cluster)
        pd.testing.assert_frame_equal(one, two)


@pytest.mark.parametrize("glob", [False, True])
def test_dask_reads_fsspec_urls(tmp_path, glob, dask_client):  # noqa: F811
    """A URL (here fsspec's ``file://``, the same code path as ``s3://`` or ``gs://``: no local
    checks, the workers open it through fsspec) gives DuckDB's cells of the same files."""
    rng = np.random.default_rng(1)
    n = 1200
    a = rng.integers(0, 5, n)
    frame = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in (a + 1 + rng.integers(0, 4, n)) % 5],
                          "winner": rng.choice(["model_a", "model_b", "tie"], n)})
    for k in range(2):
        frame.iloc[k * n // 2:(k + 1) * n // 2].to_parquet(tmp_path / f"part-{k}.parquet", index=False)
    url = f"file://{tmp_path}/part-*.parquet" if glob else f"file://{tmp_path}/part-0.parquet"
    local = sorted(tmp_path.glob("part-*.parquet")) if glob else tmp_path / "part-0.parquet"
    dask, rep = aggregate_comparisons(url, engine="dask", scheduler=dask_client)
    duck, rep2 = aggregate_comparisons(local, engine="duckdb")
    assert dask.equals(duck) and rep.rows_read == rep2.rows_read == (n if glob else n // 2)


def _cli_dask(path, client, capsys) -> tuple[int, str]:
    from evalkit.cli import main

    code = main(["rate", str(path), "--engine", "dask", "--scheduler", client.scheduler.address])
    return code, capsys.readouterr().err.strip()


def _no_client_read(*_args, **_kwargs):
    raise AssertionError("the client read the file itself (a silent fallback)")


def test_dask_workers_without_evalkit_fail_in_one_line(tmp_path, monkeypatch, capsys, dask_client):  # noqa: F811
    """Workers that cannot import evalkit: the pre-flight probe (run on the real worker processes) makes
    it a one-line error and exit 2, before any task is sent; the client reads nothing itself."""
    import evalkit.engine._dask as dask_engine
    import evalkit.engine.aggregate as agg

    path = tmp_path / "v.csv"
    path.write_text("left,right,winner\na,b,left\nb,a,left\n")
    monkeypatch.setattr(dask_engine, "_PROBE", "import evalkit_not_installed_here")
    monkeypatch.setattr(agg, "_pandas", _no_client_read)
    code, err = _cli_dask(path, dask_client, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "2 of 2 Dask workers cannot run evalkit" in err and "ModuleNotFoundError" in err
    assert "evalkit_not_installed_here" in err and "Traceback" not in err


def test_a_failing_dask_worker_is_an_error_not_a_fallback(tmp_path, monkeypatch, capsys, dask_client):  # noqa: F811
    """A failure of the cluster while the cells are computed (here a lost connection) is re-raised as one
    line with exit 2: the client never reads the whole file itself."""
    import evalkit.engine._dask as dask_engine
    import evalkit.engine.aggregate as agg

    def lost(*_args, **_kwargs):
        raise OSError("Timed out trying to connect to tcp://127.0.0.1:1 after 30 s")

    path = tmp_path / "v.csv"
    path.write_text("left,right,winner\na,b,left\nb,a,left\n")
    monkeypatch.setattr(dask_engine, "_dask_cells", lost)
    monkeypatch.setattr(agg, "_pandas", _no_client_read)
    code, err = _cli_dask(path, dask_client, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "The Dask cluster failed on" in err and "OSError: Timed out" in err and "nothing was read" in err


def test_dask_without_a_scheduler_says_how(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALKIT_DASK_SCHEDULER", raising=False)
    path = tmp_path / "v.csv"
    path.write_text("left,right,winner\na,b,left\nb,a,left\n")
    with pytest.raises(ValueError, match=r"--scheduler tcp://HOST:PORT or set EVALKIT_DASK_SCHEDULER"):
        aggregate_comparisons(path, engine="dask")
    with pytest.raises(ValueError, match=r"engine must be one of \['duckdb', 'pandas', 'dask'\]"):
        aggregate_comparisons(path, engine="spark")


def weighted_data(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 400
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    p = 1 / (1 + np.exp(-(a - b) / 3))
    outcome = np.where(rng.random(n) < p, 1.0, 0.0)
    outcome[rng.random(n) < 0.1] = 0.5
    outcome[rng.random(n) < 0.1] = 0.7  # some continuous outcomes
    return pd.DataFrame({"player_a": [f"p{k}" for k in a], "player_b": [f"p{k}" for k in b],
                         "outcome": outcome, "item": [f"q{k}" for k in rng.integers(0, 30, n)]})


_WALD = [("sandwich", None), ("hessian", None), ("sandwich", "item")]
_BOOT = [("bootstrap", None), ("bootstrap", "item")]


# Davidson bootstrap replicates are refitted one by one (slow), so the bootstrap cases run with
# ties as half a win only; the Wald cases run under both tie models.
@pytest.mark.parametrize(
    ("interval", "cluster", "ties"),
    [(i, c, t) for t in ("half", "davidson") for i, c in _WALD] + [(i, c, "half") for i, c in _BOOT],
)
def test_weight_two_equals_every_row_twice(interval, cluster, ties):
    """Frequency weights: weight 2 everywhere is the same data as every row duplicated, in every interval."""
    base = weighted_data()
    doubled = leaderboard(base.assign(weight=2.0), interval=interval, cluster=cluster, ties=ties,
                          n_resamples=200, rng=3)
    twice = leaderboard(pd.concat([base, base], ignore_index=True), interval=interval, cluster=cluster,
                        ties=ties, n_resamples=200, rng=3)
    pd.testing.assert_frame_equal(doubled, twice, check_exact=False, rtol=1e-9, atol=1e-9)
    once = leaderboard(base, interval=interval, cluster=cluster, ties=ties, n_resamples=200, rng=3)
    if interval != "bootstrap":
        # twice the rows: Wald intervals narrower by sqrt(2); clustered, the copies share their
        # cluster (perfectly dependent), so the cluster-robust meat does not move and only CR1's
        # (N - 1) / (N - K) factor does (statsmodels' cov_cluster uses the same factor), with
        # K = 4 free strengths of 5 players, plus Davidson's tie parameter
        ratio = (once["ci_high"] - once["ci_low"]) / (twice["ci_high"] - twice["ci_low"])
        n, k = len(base), 4 + (ties == "davidson")
        cr1 = np.sqrt(((n - 1) / (n - k)) / ((2 * n - 1) / (2 * n - k)))
        np.testing.assert_allclose(ratio, cr1 if cluster else np.sqrt(2), rtol=1e-6)


def test_non_integer_weights_keep_the_total_weight_in_a_replicate():
    from evalkit.ratings import bootstrap_bt
    from evalkit.ratings._resample import resampling_units as _units
    from evalkit.ratings.counts import as_cells

    base = weighted_data().assign(weight=0.5)  # total weight 200 = 200 draws of weight 1 each
    boot = bootstrap_bt(base, n_resamples=50, rng=0)
    cells = as_cells(base)
    _, draw = _units(cells.cells, boot.fit, None)
    assert draw.n == 200 and draw.scale == 1.0
    _, draw = _units(as_cells(base.assign(weight=0.3)).cells, boot.fit, None)
    assert draw.n == 120 and draw.scale == pytest.approx(1.0)
    _, draw = _units(as_cells(base.assign(weight=0.301)).cells, boot.fit, None)
    assert draw.n == 120 and draw.scale == pytest.approx(120.4 / 120)


def test_pre_aggregated_counts_equal_the_rows():
    rows = weighted_data()
    rows = rows[rows["outcome"] != 0.7]
    tally = (rows.assign(wins_a=rows["outcome"] == 1.0, wins_b=rows["outcome"] == 0.0,
                         ties=rows["outcome"] == 0.5)
             .groupby(["player_a", "player_b"], as_index=False)[["wins_a", "wins_b", "ties"]].sum())
    counts, report = aggregate_comparisons(tally, format="counts")
    assert isinstance(counts, ComparisonCounts) and report.format == "counts"
    pd.testing.assert_frame_equal(leaderboard(counts), leaderboard(rows), check_exact=False, rtol=1e-10)


def test_information_is_sparse_for_many_players():
    from scipy.sparse import issparse

    from evalkit.ratings import PairCounts, fit_bt
    from evalkit.ratings._linalg import laplacian

    rng = np.random.default_rng(0)
    n, k = 2500, 40_000
    i = rng.integers(0, n, k)
    j = (i + rng.integers(1, n, k)) % n
    ring = np.arange(n)  # a cycle in both directions keeps the ratings finite
    c = PairCounts.from_arrays([f"m{x}" for x in range(n)], np.r_[i, ring], np.r_[j, (ring + 1) % n],
                               np.r_[rng.integers(0, 3, k), np.ones(n)], np.r_[rng.integers(0, 3, k), np.ones(n)])
    fit = fit_bt(c)
    assert fit.converged and issparse(fit.information)
    p = 1 / (1 + np.exp(-(fit.theta[c.i] - fit.theta[c.j])))
    np.testing.assert_allclose(fit.information.toarray(), laplacian(c.i, c.j, c.total * p * (1 - p), n),
                               atol=1e-12)


def _many_player_frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n, k = 60, 6000
    a = rng.integers(0, n, k)
    b = (a + rng.integers(1, n, k)) % n
    p = 1 / (1 + np.exp(-(a - b) / 20))
    u = rng.random(k)
    return pd.DataFrame({"player_a": [f"m{x}" for x in a], "player_b": [f"m{x}" for x in b],
                         "outcome": np.where(u < 0.1, 0.5, np.where(u < 0.1 + 0.9 * p, 1.0, 0.0)),
                         "item": [f"q{x}" for x in rng.integers(0, 80, k)]})


def _many_player_tables(se, cluster, anchor, ties, monkeypatch):
    """``(dense, sparse)`` leaderboards of the same frame: the dense pseudo-inverse, and the fit with a
    sparse information (the many-player path forced on 60 players)."""
    import evalkit.ratings._linalg as linalg
    from evalkit.ratings import elo_table, fit_bt
    from evalkit.ratings.counts import aggregate, as_cells

    cells = as_cells(_many_player_frame(), cluster=cluster)
    dense = elo_table(fit_bt(aggregate(cells), ties=ties), se=se, frame=cells.cells, cluster=cluster, anchor=anchor)
    monkeypatch.setattr(linalg, "SPARSE_MIN_PLAYERS", 10)
    fit = fit_bt(aggregate(cells), ties=ties)
    from scipy.sparse import issparse

    assert issparse(fit.information)
    return dense, elo_table(fit, se=se, frame=cells.cells, cluster=cluster, anchor=anchor)


@pytest.mark.parametrize("ties", ["half", "davidson"])
@pytest.mark.parametrize("meat_fill", [0.05, 2.0])  # the meat multiplied dense (default here) / sparse
@pytest.mark.parametrize("anchor", [None, "m7"])
@pytest.mark.parametrize(("se", "cluster"), [("hessian", None), ("sandwich", None), ("sandwich", "item")])
def test_many_player_intervals_equal_the_dense_covariance(se, cluster, anchor, meat_fill, ties, monkeypatch):
    """The one-factorisation path (sparse information) gives the dense pseudo-inverse's intervals,
    for Davidson's ties too (the information bordered by log(nu))."""
    import evalkit.ratings._large as large

    monkeypatch.setattr(large, "_DENSE_MEAT_FILL", meat_fill)
    dense, sparse = _many_player_tables(se, cluster, anchor, ties, monkeypatch)
    np.testing.assert_allclose(sparse["elo"], dense["elo"], rtol=1e-9, atol=1e-7)
    np.testing.assert_allclose(sparse["se"], dense["se"], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("ties", ["half", "davidson"])
@pytest.mark.parametrize("anchor", [None, "m7"])
@pytest.mark.parametrize(("se", "cluster"), [("hessian", None), ("sandwich", None), ("sandwich", "item")])
def test_iterative_intervals_agree_with_the_dense_covariance(se, cluster, anchor, ties, monkeypatch):
    """The iterative path (block CG + Hutchinson with a control variate, 10,000 players) on 60 players:
    within its stated Monte Carlo error of the dense pseudo-inverse's standard errors."""
    import evalkit.ratings._iterative as iterative

    monkeypatch.setattr(iterative, "ITERATIVE_MIN_PLAYERS", 10)
    dense, sparse = _many_player_tables(se, cluster, anchor, ties, monkeypatch)
    assert "Hutchinson" in sparse.attrs["variances"]
    ref = dense["se"].to_numpy()
    rel = np.abs(sparse["se"].to_numpy()[ref > 0] / ref[ref > 0] - 1)  # the anchor's own SE is 0
    assert rel.max() < 0.01  # stated: Monte Carlo SE <= 2.5e-3 of each standard error


def test_moments_are_the_row_sums_of_w_o_and_w_o_squared():
    rows = weighted_data().assign(weight=lambda f: 1.0 + (f.index % 3))
    counts, _ = aggregate_comparisons(rows)
    got = counts.moments().set_index(["player_a", "player_b"])
    ref = rows.assign(sum_wo=rows["weight"] * rows["outcome"], sum_woo=rows["weight"] * rows["outcome"] ** 2)
    ref = ref.groupby(["player_a", "player_b"])[["weight", "sum_wo", "sum_woo"]].sum()
    pd.testing.assert_frame_equal(got, ref.loc[got.index], check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("error", ["InterruptException", "RuntimeError"])
def test_duckdb_interrupt_is_a_keyboard_interrupt(error, tmp_path):
    """A Ctrl-C that DuckDB turns into an error (it is a duckdb.Error subclass) must not read as a
    failed query (a silent fallback to the pandas reader) nor as an internal error."""
    import duckdb

    from evalkit.engine import aggregate as agg

    class Interrupted:
        def sql(self, _sql):
            exc = duckdb.InterruptException("INTERRUPT Error") if error == "InterruptException" else RuntimeError(
                "Query interrupted")
            raise exc

    path = tmp_path / "votes.csv"
    path.write_text("model_a,model_b,winner\na,b,model_a\n")
    with pytest.raises(KeyboardInterrupt):
        agg._duckdb_file(Interrupted(), path, fmt=None, cluster=None,
                         opts={"columns": None, "outcome_map": None, "self_comparisons": "error"})


def test_duckdb_out_of_memory_is_one_line_not_a_fallback(tmp_path, monkeypatch, capsys):
    """DuckDB out of memory (e.g. under ``ulimit -v``): exit 2 with one line naming the file; the pandas
    reader, which would need more memory, is not tried, and there is no 'internal error'."""
    import duckdb

    import evalkit.engine._duckdb as duck
    import evalkit.engine.aggregate as agg
    from evalkit.cli import main

    real = duck.run

    def oom(con, sql, fetch):
        if fetch == "numpy":
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate block of 262144 bytes")
        return real(con, sql, fetch)

    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\na,b,model_a\nb,a,model_a\n")
    monkeypatch.setattr(duck, "run", oom)
    monkeypatch.setattr(agg, "_pandas", _no_client_read)
    code = main(["rate", str(path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "out of memory" in err and "v.csv" in err and "internal error" not in err


def test_spill_directory_exists_only_while_duckdb_spills(tmp_path):
    """configure() names a private spill directory but does not create it: DuckDB makes it when an operator
    spills and removes it when the connection closes, so a process that ends by os._exit (a process pool's or
    Dask's workers) leaves nothing behind (it left one empty directory per connection in /tmp before). The
    query runs over 2 s, where DuckDB's progress bar (off: it wrote to stdout, a pipe too) would show."""
    import subprocess
    import sys

    code = ("import os, duckdb\nfrom evalkit.engine._duckdb import configure\ncon = duckdb.connect()\n"
            "configure(con)\nprint(con.execute(\"SELECT current_setting('temp_directory')\").fetchone()[0])\n"
            "assert con.execute(\"SELECT current_setting('enable_progress_bar')\").fetchone()[0] is False\n"
            "con.execute(\"SET memory_limit = '300MB'\")\ncon.execute('SET threads = 1')\n"
            "con.sql('SELECT count(*) FROM (SELECT i, sum(i) FROM range(40000000) t(i) GROUP BY i)').fetchall()\n"
            "print(os.path.isdir(current := con.execute(\"SELECT current_setting('temp_directory')\").fetchone()[0]))\n"
            "con.close()\nprint(os.path.isdir(current))\n"
            "con = duckdb.connect()\nconfigure(con)\n"
            "print(con.execute(\"SELECT current_setting('temp_directory')\").fetchone()[0])\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    spilled, during, after, unused = out
    assert os.path.basename(spilled).startswith("evalkit-duckdb-")
    assert during == "True" and after == "False"  # made by the spill, removed by close()
    assert not os.path.exists(unused)  # never spilled, ended without atexit: nothing left
