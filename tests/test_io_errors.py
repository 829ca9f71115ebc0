"""Every bad input gets a clear ValueError (file, line/row, column, found, allowed) or a counted drop."""

from __future__ import annotations

import json
import re

import pytest
from dask_cluster import dask_client  # noqa: F401 (fixture)

from evalkit.engine.aggregate import aggregate_comparisons
from evalkit.io import read_comparisons


@pytest.fixture(params=["pandas-reader", "duckdb", "dask"])
def read(request):
    """The same errors from the pandas reader and from aggregation on DuckDB and on Dask."""
    if request.param == "pandas-reader":
        return read_comparisons
    if request.param == "dask":
        client = request.getfixturevalue("dask_client")
        return lambda src, **kw: aggregate_comparisons(src, engine="dask", scheduler=client, **kw)
    return lambda src, **kw: aggregate_comparisons(src, engine="duckdb", **kw)


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_malformed_json_line(tmp_path, read):
    good = json.dumps({"model_a": "x", "model_b": "y", "winner": "model_a"})
    path = write(tmp_path, "battles.jsonl", f"{good}\n{good}\n{{\"model_a\": \"x\", \n{good}\n")
    with pytest.raises(ValueError, match=r"battles\.jsonl: line 3 is not valid JSON") as exc:
        read(path)
    assert "Each line of a JSON Lines file must be one JSON object" in str(exc.value)


def test_json_line_that_is_not_an_object(tmp_path, read):
    good = json.dumps({"model_a": "x", "model_b": "y", "winner": "model_a"})
    path = write(tmp_path, "b.jsonl", f"{good}\n[1, 2]\n")
    with pytest.raises(ValueError, match=r"b\.jsonl: line 2 is a JSON list, not an object"):
        read(path)


@pytest.mark.parametrize("line", ["[1, 2]", "5", '"x"', "null"])
def test_dask_reads_a_json_line_that_is_not_an_object_as_a_data_error(line):
    # pandas 2.0 raises AttributeError ('list' object has no attribute 'keys'), later pandas TypeError:
    # on the workers too, it must be an error of the data (the pandas reader then locates the line),
    # never a failure of the cluster
    import io

    from evalkit.engine._dask import _DATA_ERRORS, read_json_part

    good = json.dumps({"model_a": "x", "model_b": "y", "winner": "model_a"})
    with pytest.raises(_DATA_ERRORS):
        read_json_part(io.StringIO(f"{good}\n{line}\n"), orient="records", lines=True)


def test_malformed_json_list(tmp_path, read):
    path = write(tmp_path, "a.json", '[{"generator_1": "x",}]')
    with pytest.raises(ValueError, match=r"a\.json is not valid JSON: .* at line 1, column"):
        read(path)


def test_missing_column_for_a_named_format(tmp_path, read):
    path = write(tmp_path, "battles.csv", "model_a,model_b,result\nx,y,model_a\n")
    with pytest.raises(ValueError) as exc:
        read(path, format="arena")
    msg = str(exc.value)
    assert "battles.csv lacks the column(s) ['winner']" in msg
    assert "required: ['model_a', 'model_b', 'winner']" in msg
    assert "it has ['model_a', 'model_b', 'result']" in msg


def test_missing_column_in_column_map(tmp_path, read):
    path = write(tmp_path, "t.csv", "a,b,w\nx,y,1\n")
    with pytest.raises(ValueError, match=r"t\.csv lacks the column\(s\) \['score'\]"):
        read(path, columns={"player_a": "a", "player_b": "b", "outcome": "score"})


def test_unknown_winner_label_is_an_error_not_a_tie(tmp_path, read):
    path = write(tmp_path, "lr.csv", "left,right,winner\na,b,left\nb,c,draw\nc,a,draw\na,c,right\n")
    with pytest.raises(ValueError) as exc:
        read(path)
    msg = str(exc.value)
    assert "The 'winner' column of" in msg and "lr.csv" in msg
    assert "must be one of {'left', 'right', 'tie'}" in msg
    assert "Got 'draw' in 2 rows (first at line 3) instead." in msg


def test_unknown_arena_label(tmp_path, read):
    rows = [{"model_a": "x", "model_b": "y", "winner": "model_a"},
            {"model_a": "x", "model_b": "y", "winner": "A"}]
    path = write(tmp_path, "arena.json", json.dumps(rows))
    with pytest.raises(ValueError, match=re.escape(
            "Got 'A' in 1 row (first at line 2) instead.")):
        read(path)


def test_missing_winner_is_an_error(tmp_path, read):
    path = write(tmp_path, "lr.csv", "left,right,winner\na,b,left\nb,c,\n")
    with pytest.raises(ValueError, match=r"'winner' column .* Got nan in 1 row \(first at line 3\)"):
        read(path)


def test_unknown_label_in_outcome_map(tmp_path, read):
    path = write(tmp_path, "v.csv", "a,b,v\nx,y,A\nx,y,C\n")
    with pytest.raises(ValueError, match=r"The 'v' column of .*v\.csv must be one of \{'A', 'B'\}\. Got 'C'"):
        read(path, columns={"player_a": "a", "player_b": "b", "outcome": "v"},
                         outcome_map={"A": 1.0, "B": 0.0})


def test_nan_preference_is_a_counted_drop(tmp_path):
    rows = [{"generator_1": "base", "generator_2": "m", "preference": p, "instruction": f"i{k}"}
            for k, p in enumerate([2, 1, None, 1.5, float("nan"), 0])]
    path = write(tmp_path, "annotations.json", json.dumps(rows))
    frame, report = read_comparisons(path)
    assert report.rows_read == 6 and report.rows_kept == 4
    assert list(report.dropped.values()) == [2]
    assert "NaN/None" in next(iter(report.dropped))
    assert frame["outcome"].tolist() == [1.0, 0.0, 0.5, 0.5]
    assert frame["line"].tolist() == [1, 2, 4, 6]


def test_preference_out_of_range(tmp_path, read):
    rows = [{"generator_1": "base", "generator_2": "m", "preference": p} for p in (2, 3, "x")]
    path = write(tmp_path, "annotations.json", json.dumps(rows))
    with pytest.raises(ValueError) as exc:
        read(path)
    msg = str(exc.value)
    assert "The 'preference' column of" in msg and "annotations.json" in msg
    assert "must be 1 (baseline wins), 2 (model wins), 1.5 or 0 (draw)" in msg
    assert "Got 3, 'x' in 2 rows (first at line 2) instead." in msg


def test_missing_outcome_in_column_map(tmp_path, read):
    path = write(tmp_path, "s.csv", "a,b,s\nx,y,1\nx,y,\ny,x,0\n")
    cols = {"player_a": "a", "player_b": "b", "outcome": "s"}
    with pytest.raises(ValueError, match=r"'s' column of .*s\.csv \(the outcome\) has a missing value in 1 row \(first at line 3\)"):
        read(path, columns=cols)
    frame, report = read_comparisons(path, columns=cols, missing_outcome="drop")
    assert report.n_dropped == 1 and frame["line"].tolist() == [2, 4]


def test_model_compared_with_itself(tmp_path, read):
    path = write(tmp_path, "lr.csv", "left,right,winner\na,b,left\nb,b,tie\n")
    with pytest.raises(ValueError) as exc:
        read(path)
    msg = str(exc.value)
    assert "cannot be compared with itself" in msg and "lr.csv" in msg
    assert "'b'" in msg and "in 1 row (first at line 3)" in msg
    frame, report = read_comparisons(path, self_comparisons="drop")
    assert len(frame) == 1 and report.n_dropped == 1
    assert "compared with itself" in next(iter(report.dropped))


def test_outcome_outside_unit_interval(tmp_path, read):
    path = write(tmp_path, "c.csv", "player_a,player_b,outcome\nx,y,1\nx,y,1.5\n")
    with pytest.raises(ValueError, match=r"'outcome' column in .*c\.csv must be .* Got '?1\.5'? in 1 row \(first at line 3\)"):
        read(path)


@pytest.mark.parametrize(
    ("name", "text", "what"),
    [
        ("empty.csv", "", "the file has no content"),
        ("blank.jsonl", "\n  \n", "the file has no content"),
        ("header.csv", "left,right,winner\n", "a header (left, right, winner) but no rows"),
        ("list.json", "[]", "the JSON holds no records"),
    ],
)
def test_empty_file(tmp_path, name, text, what, read):
    path = write(tmp_path, name, text)
    with pytest.raises(ValueError, match=re.escape(f"{path} is empty: {what}")):
        read(path)


def test_file_in_none_of_the_known_formats(tmp_path, read):
    path = write(tmp_path, "x.csv", "foo,bar\n1,2\n")
    with pytest.raises(ValueError) as exc:
        read(path)
    msg = str(exc.value)
    assert "x.csv is in none of the known formats: its columns are ['foo', 'bar']" in msg
    assert "arena (model_a, model_b, winner)" in msg and "left_right (left, right, winner)" in msg
    assert "columns=" in msg


def test_binary_garbage_is_not_a_known_format(tmp_path, read):
    path = tmp_path / "x.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match=r"x\.bin"):
        read(path)


def test_bad_arguments(tmp_path, read):
    path = write(tmp_path, "lr.csv", "left,right,winner\na,b,left\n")
    with pytest.raises(ValueError, match=r"format must be one of \["):
        read(path, format="elo")
    with pytest.raises(ValueError, match=r"does not exist"):
        read(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match=r"keys must be canonical column names"):
        read(path, columns={"winner": "winner"})
    with pytest.raises(ValueError, match=r"self_comparisons must be 'error' or 'drop'"):
        read(path, self_comparisons="ignore")


def test_all_rows_dropped(tmp_path, read):
    rows = [{"generator_1": "base", "generator_2": "m", "preference": None}]
    path = write(tmp_path, "annotations.json", json.dumps(rows))
    with pytest.raises(ValueError, match=r"All 1 rows of .*annotations\.json were dropped"):
        read(path)


def test_alpaca_csv_without_baseline(tmp_path, read):
    path = write(tmp_path, "prefs.csv", "model_dir,instruction_id,preference\nm,0,2\n")
    with pytest.raises(ValueError, match=r"does not name its AlpacaEval baseline.*baseline="):
        read(path)
    frame, _ = read_comparisons(path, baseline="ref")
    assert frame["player_b"].tolist() == ["ref"] and frame["outcome"].tolist() == [1.0]


def test_missing_player_names_the_column_and_line(tmp_path, read):
    rows = [{"model_a": "x", "model_b": "y", "winner": "model_a"},
            {"model_a": None, "model_b": None, "winner": "tie"}]
    path = write(tmp_path, "arena.json", json.dumps(rows))
    with pytest.raises(ValueError, match=r"The 'player_a' column in .*arena\.json must name a player\. Got a missing value in 1 row \(first at line 2\)"):
        read(path)


def test_missing_outcome_drop_applies_to_canonical_tables(tmp_path, read):
    path = tmp_path / "canon.csv"
    path.write_text("player_a,player_b,outcome\nA,B,1\nB,C,\nA,C,0.5\nC,A,\n")
    with pytest.raises(ValueError, match="missing"):
        read(path)
    frame, report = read_comparisons(path, missing_outcome="drop")
    assert len(frame) == 2 and report.n_dropped == 2 and report.rows_read == 4


def test_a_parquet_name_on_other_content_is_named_as_such(tmp_path, read):
    path = tmp_path / "votes.parquet"
    path.write_text("left,right,winner\nA,B,left\n")
    with pytest.raises(ValueError, match="named like a Parquet file but is not one"):
        read(path)


def test_duplicated_column_name_is_an_error(tmp_path, read):
    path = write(tmp_path, "votes.csv", "left,right,winner,winner\na,b,left,right\n")
    with pytest.raises(ValueError, match=re.escape(
            f"The header of {path} names the column 'winner' twice (columns 3 and 4). "
            "Column names must be unique")):
        read(path)


def test_duplicated_column_name_in_parquet(tmp_path, read):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "votes.parquet"
    table = pa.table([["a"], ["b"], ["left"], ["right"]], names=["left", "right", "winner", "winner"])
    pq.write_table(table, path)
    with pytest.raises(ValueError, match="names the column 'winner' twice"):
        read(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("player_a,player_b,outcome,weight\nx,y,1,1\nx,y,0,inf\ny,x,1,2\n",
         "The 'weight' column in {path} must be finite and >= 0. Got 'inf' in 1 row (first at line 3) instead."),
        ("player_a,player_b,outcome\nx,y,1\nx,y,-inf\n",
         "The 'outcome' column in {path} must be player_a's score in [0, 1] (1 win, 0.5 tie, 0 loss). "
         "Got -inf in 1 row (first at line 3) instead."),
    ],
    ids=["inf-weight", "inf-outcome"],
)
def test_inf_is_an_error(tmp_path, read, text, message):
    path = write(tmp_path, "w.csv", text)
    with pytest.raises(ValueError, match=re.escape(message.format(path=path))):
        read(path)


def test_decode_error_names_line_and_remedy(tmp_path, read):
    path = tmp_path / "latin.csv"
    path.write_bytes("left,right,winner\na,b,left\ncaf\u00e9,b,right\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.csv is not valid utf-8 text: byte b'\\xe9' at line 3 .* "
                       r"Pass encoding='\.\.\.'"):
        read(path)
    counts_or_frame, report = read(path, encoding="latin-1")
    assert report.rows_kept == 2


def test_utf16_with_bom_is_detected(tmp_path, read):
    path = tmp_path / "u16.csv"
    path.write_bytes("left,right,winner\na,b,left\nb,a,tie\n".encode("utf-16"))
    _, report = read(path)
    assert report.rows_read == 2 and report.format == "left_right"


def test_wrong_compression(tmp_path, read):
    path = tmp_path / "votes.csv.gz"
    path.write_bytes(b"\x1f\x8b" + b"not really gzip at all" * 10)
    with pytest.raises(ValueError, match=r"votes\.csv\.gz looks gzip-compressed but could not be decompressed"):
        read(path)
