"""The session table: reading CSV / JSONL / Parquet / DataFrame and validation messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.io.traces import TRACE_COLUMNS, read_traces, validate_traces


def _frame():
    return pd.DataFrame({
        "agent": ["a", "a", "a", "b"],
        "problem": [1, 1, 1, 1],
        "run": [0, 0, 1, 0],
        "tokens": [10, 30, 5, 7],
        "best": [0.1, 0.4, 0.2, 0.3],
    })


MAPPING = {"system": "agent", "task": "problem", "session": "run", "budget": "tokens", "score": "best"}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_read_traces_formats_agree(tmp_path, fmt):
    df = _frame()
    path = tmp_path / f"t.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path)
    got = read_traces(path, columns=MAPPING)
    ref = read_traces(df, columns=MAPPING)
    pd.testing.assert_frame_equal(got[list(TRACE_COLUMNS)], ref[list(TRACE_COLUMNS)])
    assert got["source"].iat[0] == f"t.{fmt}"
    # line numbers point into the file: CSV data starts at line 2 (after the header)
    first = 2 if fmt == "csv" else 1
    assert sorted(got["line"].tolist()) == [first, first + 1, first + 2, first + 3]


def test_ids_are_strings_and_budget_float():
    got = read_traces(_frame(), columns=MAPPING)
    assert got["task"].tolist() == ["1", "1", "1", "1"]
    assert got["session"].tolist() == ["0", "0", "1", "0"]
    assert got["budget"].dtype == float


def test_decreasing_budget_is_reported_with_line(tmp_path):
    df = _frame()
    df.loc[1, "tokens"] = 3  # session (a, 1, 0) goes 10 -> 3
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"cumulative.*in 1 row \(first at line 3\).*goes down to 3"):
        read_traces(path, columns=MAPPING)
    ok = read_traces(path, columns=MAPPING, order="sort")
    assert ok.loc[ok.session == "0"].loc[ok.system == "a", "budget"].tolist() == [3.0, 10.0]


def test_missing_scores_raise_or_drop_with_count():
    df = _frame()
    df.loc[[0, 2], "best"] = np.nan
    with pytest.raises(ValueError, match=r"'score' column is missing in 2 rows"):
        read_traces(df, columns=MAPPING)
    with pytest.warns(UserWarning, match=r"Dropped 2 unscored.*1 session\(s\) are left without any submission \(a/1/1\)"):
        got = read_traces(df, columns=MAPPING, missing_score="drop")
    assert len(got) == 2


def test_bad_values_name_the_column():
    df = _frame().rename(columns=dict(zip(MAPPING.values(), MAPPING.keys(), strict=True)))
    bad = df.assign(score=["x", 0.4, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"'score' column must be a finite number\. Got 'x'"):
        validate_traces(bad)
    with pytest.raises(ValueError, match="'budget' column must be a finite cumulative budget"):
        validate_traces(df.assign(budget=[-1, 2, 3, 4]))
    with pytest.raises(ValueError, match=r"lacks the required column\(s\) \['score'\]"):
        validate_traces(df.drop(columns="score"))
    with pytest.raises(ValueError, match="unknown canonical name"):
        read_traces(_frame(), columns={"model": "agent"})


def test_task_defaults_to_single_task():
    df = pd.DataFrame({"system": ["a"], "session": [1], "budget": [1.0], "score": [0.5]})
    assert validate_traces(df)["task"].tolist() == ["all"]
