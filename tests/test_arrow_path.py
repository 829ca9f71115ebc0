"""Parquet files counted on their dictionary codes (``evalkit.engine._arrow``): the cells are DuckDB's,
byte for byte, on files from three writers (pyarrow, pandas, DuckDB's own), with several row groups
whose dictionaries differ, non-ASCII names, missing values and unknown labels; files the path does
not take go to DuckDB, with the same result. The reference is DuckDB's query on the same file
(``evalkit.engine._duckdb.duckdb_file_cells``: ``GROUP BY`` in SQL), run here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from evalkit.engine import _arrow  # noqa: E402
from evalkit.engine import aggregate as agg  # noqa: E402
from evalkit.engine._arrow import parquet_dictionary_cells  # noqa: E402
from evalkit.engine._duckdb import configure, connect, duckdb_file_cells  # noqa: E402
from evalkit.resources import data_file  # noqa: E402

OPTS = {"columns": None, "outcome_map": None, "self_comparisons": "error"}
NAMES = ["gpt-4o", "Claude 3.5", "Llama-3 70B", "Qwen2 72B", "Mistral Large", "ÉLAN-7B", "文心一言", "🦙 alpaca",
         "a", "B", "z"]


def _arena(n: int, seed: int, *, names=NAMES, labels=("model_a", "model_b", "tie", "tie (bothbad)")) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(names), n)
    b = (a + rng.integers(1, len(names), n)) % len(names)
    return {"model_a": [names[k] for k in a], "model_b": [names[k] for k in b],
            "winner": [labels[k] for k in rng.integers(0, len(labels), n)]}


def _pyarrow_file(path: Path, n: int = 5000, *, row_group: int = 700, seed: int = 0, **kw) -> Path:
    """Several row groups, each with its own dictionary (its names in order of appearance)."""
    pq.write_table(pa.table(_arena(n, seed, **kw)), path, row_group_size=row_group)
    return path


def _same_cells(path: Path, **opts) -> None:
    got = parquet_dictionary_cells(path, fmt=None, cluster=None, opts={**OPTS, **opts})
    assert got is not None, "the dictionary path did not take the file"
    con = connect()
    configure(con)
    ref = duckdb_file_cells(con, path, fmt=None, cluster=None, opts={**OPTS, **opts})
    con.close()
    assert ref is not None
    assert got[1:3] == ref[1:3]  # format, rows per record
    cells, want = got[0], ref[0]
    assert list(cells) == list(want)
    for k in want:
        assert cells[k].dtype == want[k].dtype, k
        if cells[k].dtype.kind == "f":
            np.testing.assert_array_equal(cells[k], want[k], err_msg=k)  # NaN where missing, in both
        else:
            assert cells[k].tolist() == want[k].tolist(), k


def test_pyarrow_file_with_row_groups_of_their_own_dictionaries(tmp_path):
    _same_cells(_pyarrow_file(tmp_path / "a.parquet"))


def test_duckdb_written_file(tmp_path):
    """DuckDB's own Parquet writer (another implementation of the format and its dictionaries)."""
    import duckdb

    src = _pyarrow_file(tmp_path / "src.parquet", n=4000, seed=3)
    out = tmp_path / "duck.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_parquet('{src}')) TO '{out}' (FORMAT parquet, ROW_GROUP_SIZE 1024)")
    _same_cells(out)


def test_pandas_categorical_and_large_string_columns(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_arena(3000, 5))
    cat = tmp_path / "categorical.parquet"
    frame.astype("category").to_parquet(cat, row_group_size=1000)
    assert pa.types.is_dictionary(pq.ParquetFile(cat).schema_arrow.field("model_a").type)
    _same_cells(cat)
    large = tmp_path / "large.parquet"
    table = pa.table({k: pa.array(v, pa.large_string()) for k, v in _arena(3000, 6).items()})
    pq.write_table(table, large, row_group_size=800)
    _same_cells(large)


def test_real_llmfao_judgments_written_by_two_writers(tmp_path):
    """LLMFAO's GPT-4 judgments (left_right format: ``left, right, winner``; 70 models, real names)."""
    import duckdb

    src = data_file("llmfao/gpt4-comparisons.csv")
    by_duckdb = tmp_path / "llmfao-duckdb.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{src}')) TO '{by_duckdb}' (FORMAT parquet, ROW_GROUP_SIZE 1000)")
    _same_cells(by_duckdb)
    by_pyarrow = tmp_path / "llmfao-pyarrow.parquet"
    import pyarrow.csv as pcsv

    pq.write_table(pcsv.read_csv(src), by_pyarrow, row_group_size=900)
    _same_cells(by_pyarrow)


def test_missing_values_and_unknown_labels_give_the_same_cells_and_the_same_error(tmp_path, monkeypatch):
    data = _arena(2000, 7)
    data["model_b"][10] = None
    data["winner"][20] = "both good"  # not an Arena label
    data["winner"][30] = None
    path = tmp_path / "holes.parquet"
    pq.write_table(pa.table(data), path, row_group_size=500)
    _same_cells(path)
    with pytest.raises(ValueError) as fast:
        agg.aggregate_comparisons(path)
    monkeypatch.setattr(agg, "_dictionary_file", lambda *a, **k: None)
    with pytest.raises(ValueError) as slow:
        agg.aggregate_comparisons(path)
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("dense", [True, False])
def test_counts_and_report_equal_duckdbs_through_the_public_reader(tmp_path, monkeypatch, dense):
    """``aggregate_comparisons``: the same counts and report with the dictionary path as without it,
    counted densely or (above ``DENSE_CELLS``) in sorted arrays; self-comparisons dropped alike."""
    if not dense:
        monkeypatch.setattr(_arrow, "DENSE_CELLS", 16)
    data = _arena(6000, 9)
    data["model_b"][:5] = data["model_a"][:5]  # self-comparisons
    path = tmp_path / "arena.parquet"
    pq.write_table(pa.table(data), path, row_group_size=1000)
    calls = []
    real = agg._dictionary_file
    monkeypatch.setattr(agg, "_dictionary_file", lambda *a, **k: calls.append(1) or real(*a, **k))
    counts, report = agg.aggregate_comparisons(path, self_comparisons="drop")
    assert calls and counts is not None
    monkeypatch.setattr(agg, "_dictionary_file", lambda *a, **k: None)
    ref_counts, ref_report = agg.aggregate_comparisons(path, self_comparisons="drop")
    assert report.to_text() == ref_report.to_text() and report.dropped == ref_report.dropped
    for k in ("player_a", "player_b", "outcome", "weight", "n"):
        assert counts.column(k).tolist() == ref_counts.column(k).tolist(), k


def test_files_the_path_does_not_take(tmp_path, monkeypatch):
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table(_arena(500, 1)), plain, use_dictionary=False)
    weighted = tmp_path / "weighted.parquet"
    table = pa.table({"left": ["a", "b"] * 50, "right": ["b", "c"] * 50, "winner": ["left", "right"] * 50,
                      "weight": [1.0, 2.0] * 50})
    pq.write_table(table, weighted)
    numeric = tmp_path / "numeric.parquet"
    pq.write_table(pa.table({"player_a": ["a", "b"] * 10, "player_b": ["b", "c"] * 10, "outcome": [1.0, 0.0] * 10}),
                   numeric)
    csv = tmp_path / "arena.csv"
    csv.write_text("model_a,model_b,winner\na,b,model_a\n")
    for path in (plain, weighted, numeric, csv):
        assert parquet_dictionary_cells(path, fmt=None, cluster=None, opts=OPTS) is None, path.name
    clustered = _pyarrow_file(tmp_path / "c.parquet")
    assert parquet_dictionary_cells(clustered, fmt=None, cluster="item", opts=OPTS) is None
    monkeypatch.setattr(_arrow, "MAX_DISTINCT", 4)  # more names in a batch than the path takes
    assert parquet_dictionary_cells(clustered, fmt=None, cluster=None, opts=OPTS) is None
    counts, _ = agg.aggregate_comparisons(clustered)  # DuckDB then reads it
    assert len(counts.players) == len(NAMES)


def test_the_path_imports_neither_duckdb_nor_pandas(tmp_path):
    path = _pyarrow_file(tmp_path / "a.parquet")
    code = ("import sys; from evalkit.engine.aggregate import aggregate_comparisons; "
            f"c, r = aggregate_comparisons({str(path)!r}); "
            "print(r.rows_kept, 'duckdb' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["5000", "False", "False"]


def test_chunks_declared_beyond_the_read_limits_go_to_duckdb(tmp_path):
    """A column chunk that decompresses past ``max_ratio`` (a Parquet bomb) or ``max_bytes`` is not
    decoded here: DuckDB's capped scan reads the file, with the same counts."""
    from evalkit.io._limits import read_limits

    path = tmp_path / "repetitive.parquet"
    pq.write_table(pa.table(_arena(200_000, 2, names=["m" * 200 + str(k) for k in range(3)])), path,
                   compression="zstd", row_group_size=200_000)
    assert parquet_dictionary_cells(path, fmt=None, cluster=None, opts=OPTS) is not None
    with read_limits({"max_ratio": 1.0, "ratio_grace": 1}):
        assert parquet_dictionary_cells(path, fmt=None, cluster=None, opts=OPTS) is None
    with read_limits({"max_bytes": 100}):
        assert parquet_dictionary_cells(path, fmt=None, cluster=None, opts=OPTS) is None
        counts, _ = agg.aggregate_comparisons(path)  # DuckDB's scan is not bound by max_bytes
    assert int(counts.column("n").sum()) == 200_000


def test_cluster_cells_counted_on_codes_and_the_clustered_fit_unchanged(tmp_path, monkeypatch):
    """With ``cluster="item"`` the cells over all items come from the dictionary codes, and so does each
    row's (players, outcome, item), kept for the cluster-robust meat; the cluster's census comes from
    the file's statistics: DuckDB is not used. The counts and the CR1 leaderboard equal those with
    DuckDB checking the cluster, counting the cells and streaming the meat's rows."""
    from evalkit.ratings.leaderboard import leaderboard_columns

    data = _arena(6000, 11)
    data["question_id"] = np.random.default_rng(4).integers(0, 40, 6000)
    path = tmp_path / "items.parquet"
    pq.write_table(pa.table(data), path, row_group_size=1500)
    counts, report = agg.aggregate_comparisons(path, cluster="item")
    fast = leaderboard_columns(counts, cluster="item")
    assert counts._rows is not None and len(counts._rows.a) == 6000 and counts._span == (0, 39)
    monkeypatch.setattr(_arrow, "dictionary_rows", lambda *a: None)
    ref_counts, ref_report = agg.aggregate_comparisons(path, cluster="item")
    assert ref_counts._rows is None
    slow = leaderboard_columns(ref_counts, cluster="item")
    assert report.to_text() == ref_report.to_text()
    for k in ("player_a", "player_b", "outcome", "weight", "n"):
        assert counts.column(k).tolist() == ref_counts.column(k).tolist(), k
    for k in ("model", "elo", "rank_low", "rank_high"):
        assert fast.columns[k].tolist() == slow.columns[k].tolist(), k
    for k in ("ci_low", "ci_high"):  # DuckDB streams the meat's rows in no set order: equal to rounding
        np.testing.assert_allclose(fast.columns[k], slow.columns[k], rtol=1e-12, err_msg=k)
    assert fast.attrs["n_clusters"] == slow.attrs["n_clusters"] == 40


def test_clustered_rate_imports_no_duckdb(tmp_path):
    path = tmp_path / "items.parquet"
    data = _arena(5000, 3)
    data["question_id"] = [f"q{k % 70}" for k in range(5000)]
    pq.write_table(pa.table(data), path, row_group_size=2000)
    code = ("import sys; from evalkit.engine.aggregate import aggregate_comparisons; "
            "from evalkit.ratings.leaderboard import leaderboard_columns; "
            f"c, r = aggregate_comparisons({str(path)!r}, cluster='item'); t = leaderboard_columns(c, cluster='item'); "
            "print(r.rows_kept, t.attrs['n_clusters'], 'duckdb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["5000", "70", "False"]


@pytest.mark.parametrize("stats", ["lying", "absent", "a missing cluster"])
def test_cluster_statistics_that_lie_or_are_absent_go_to_duckdb(tmp_path, stats):
    """The census trusts the statistics only so far: a span that does not hold a batch's values is a
    located error (DuckDB, which trusts them, would count the column wrongly: see test_cluster_sql); a
    file without statistics, or with a missing cluster, is DuckDB's (and the pandas reader's located
    error) from the start."""
    from evalkit.ratings.leaderboard import leaderboard_columns

    data = _arena(3000, 5)
    data["question_id"] = np.random.default_rng(6).integers(0, 30, 3000)
    path = tmp_path / "items.parquet"
    table = pa.table(data)
    if stats == "a missing cluster":
        table = table.set_column(3, "question_id", pa.array([None] + data["question_id"][1:].tolist(), pa.int64()))
    pq.write_table(table, path, row_group_size=1000, write_statistics=stats != "absent")
    pf = pq.ParquetFile(path)
    if stats == "lying":  # a span of 0..9 (the values reach 29): DuckDB would trust it, so the file is refused
        assert _arrow._Rows.start(pf, ("question_id", (0, 9)), ["model_a", "model_b", "winner"]) is not None
        first = int(np.flatnonzero(data["question_id"] > 9)[0])
        with pytest.raises(_arrow.StatisticsError, match=rf"row {first}: column 'question_id': found a value "
                                                         rf"{data['question_id'][first]} outside the range 0 to 9"):
            _arrow.dictionary_rows(path, _spec(path), ("question_id", (0, 9)))
        return
    assert _arrow._census(pf, "question_id") is None if stats == "absent" else _arrow._census(pf, "question_id")[0]
    assert _arrow.parquet_dictionary_clustered(path, fmt=None, cluster="item", opts=OPTS) is None
    if stats == "absent":
        counts, _ = agg.aggregate_comparisons(path, cluster="item")
        assert counts._rows is not None  # DuckDB's census, then the rows' codes all the same
        assert leaderboard_columns(counts, cluster="item").attrs["n_clusters"] == 30
    else:
        with pytest.raises(ValueError, match="(?i)cluster"):
            agg.aggregate_comparisons(path, cluster="item")


def _spec(path):
    from evalkit.io.fastpath import cell_spec

    return cell_spec("arena", pq.read_schema(path).names)
