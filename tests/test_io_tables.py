"""left/right/winner tables (LLMFAO, evalica), canonical tables and the column-mapped reader.

Every count is checked against a direct pandas count on the raw CSV.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.io import CANONICAL_COLUMNS, read_comparisons
from evalkit.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
LLMFAO = ROOT / "tests/data/llmfao"
EVALICA = ROOT / "tests/data/evalica"
LLMFAO_FILES = ["crowd-comparisons.csv", "gpt4-comparisons.csv", "gpt3-comparisons.csv",
                "gpt4-crowd-comparisons.csv", "gpt3-crowd-comparisons.csv"]


def direct_counts(raw: pd.DataFrame) -> pd.DataFrame:
    """wins/losses/ties/n per model straight from left/right/winner (pandas only)."""
    sides = []
    for me, win in (("left", "left"), ("right", "right")):
        lose = "right" if win == "left" else "left"
        sides.append(pd.DataFrame({
            "model": raw[me].astype(str),
            "wins": (raw["winner"] == win).astype(int),
            "losses": (raw["winner"] == lose).astype(int),
            "ties": (raw["winner"] == "tie").astype(int),
        }))
    counts = pd.concat(sides).groupby("model").sum()
    counts["n"] = counts.sum(axis=1)
    return counts


@pytest.mark.parametrize("name", LLMFAO_FILES)
def test_llmfao_counts_match_direct_pandas_count(name):
    raw = pd.read_csv(LLMFAO / name)
    frame, report = read_comparisons(LLMFAO / name)
    assert report.format == "left_right"
    assert report.rows_read == report.rows_kept == len(raw) and report.n_dropped == 0
    np.testing.assert_array_equal(frame["player_a"], raw["left"].astype(str))
    np.testing.assert_array_equal(frame["player_b"], raw["right"].astype(str))
    np.testing.assert_array_equal(frame["item"], raw["prompt"].astype(str))
    np.testing.assert_array_equal(frame["line"], np.arange(2, len(raw) + 2))
    if "worker" in raw.columns:
        np.testing.assert_array_equal(frame["judge"], raw["worker"].astype(str))
    got = summarize(frame).set_index("model")
    want = direct_counts(raw)
    assert set(got.index) == set(want.index)
    for col in ("n", "wins", "losses", "ties"):
        np.testing.assert_array_equal(got.loc[want.index, col], want[col], err_msg=col)


def test_llmfao_crowd_has_59_models_and_many_ties():
    # data README: 8,931 human crowd votes, 59 models, 124 workers, many ties
    frame, _ = read_comparisons(LLMFAO / "crowd-comparisons.csv")
    assert len(frame) == 8931
    assert len(set(frame["player_a"]) | set(frame["player_b"])) == 59
    assert frame["judge"].nunique() == 124
    assert (frame["outcome"] == 0.5).sum() == 3471


def test_several_files_read_into_one_frame():
    paths = [LLMFAO / "crowd-comparisons.csv", LLMFAO / "gpt4-comparisons.csv",
             EVALICA / "food.csv"]
    frame, report = read_comparisons(paths)
    sizes = [len(pd.read_csv(p)) for p in paths]
    assert report.rows_read == len(frame) == sum(sizes)
    assert frame["source"].value_counts().loc[[str(p) for p in paths]].tolist() == sizes
    assert list(frame.columns[:4]) == list(CANONICAL_COLUMNS[:4])


def test_judge_fill_for_files_without_judge():
    frame, _ = read_comparisons(LLMFAO / "gpt4-comparisons.csv", judge="gpt-4")
    assert set(frame["judge"]) == {"gpt-4"}


@pytest.mark.parametrize("name", ["simple.csv", "food.csv"])
def test_evalica_inputs(name):
    raw = pd.read_csv(EVALICA / name, dtype=str)
    frame, report = read_comparisons(EVALICA / name)
    assert report.format == "left_right" and len(frame) == len(raw)
    want = raw["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5})
    np.testing.assert_array_equal(frame["outcome"], want)
    got = summarize(frame).set_index("model")
    direct = direct_counts(raw)
    for col in ("n", "wins", "losses", "ties"):
        np.testing.assert_array_equal(got.loc[direct.index, col], direct[col])


def test_dataframe_source_and_canonical_format():
    df = pd.DataFrame({"player_a": ["x", "y"], "player_b": ["y", "z"], "outcome": [1.0, 0.25],
                       "item": [7, 8]})
    frame, report = read_comparisons(df)
    assert report.format == "canonical" and report.source == "<DataFrame>"
    assert frame["item"].tolist() == ["7", "8"] and frame["line"].tolist() == [1, 2]
    assert frame["outcome"].tolist() == [1.0, 0.25]


def test_column_mapped_with_label_map(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("a,b,verdict,w\nm1,m2,A,2\nm2,m3,B,1\nm1,m3,=,1\n")
    frame, report = read_comparisons(
        path, columns={"player_a": "a", "player_b": "b", "outcome": "verdict", "weight": "w"},
        outcome_map={"A": 1.0, "B": 0.0, "=": 0.5},
    )
    assert report.format == "columns"
    assert frame["outcome"].tolist() == [1.0, 0.0, 0.5]
    assert frame["weight"].tolist() == [2.0, 1.0, 1.0]


def test_directory_source(tmp_path):
    for i in range(2):
        (tmp_path / f"part{i}.csv").write_text("left,right,winner\na,b,left\nb,c,tie\n")
    (tmp_path / "notes.txt").write_text("ignored: not a data suffix")
    frame, report = read_comparisons(tmp_path)
    assert len(frame) == 4 and report.source.count("part") == 2
