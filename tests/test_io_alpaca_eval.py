"""AlpacaEval readers reproduce the published leaderboards (tatsu-lab/alpaca_eval cd543a1).

The reference numbers are AlpacaEval's own leaderboard CSVs (tests/data/alpaca_eval/), not
anything computed by evalkit. AlpacaEval's definitions (src/alpaca_eval/metrics/helpers.py,
``describe_head2head``): x = preference - 1 after 0 -> 1.5, NaN dropped, win_rate =
100 * mean(x), standard_error = 100 * sem(x) (pandas, ddof 1), n_wins = #(x > 0.5),
n_wins_base = #(x < 0.5), n_draws = #(preference in {0, 1.5}), n_total = #non-NaN.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.io import read_comparisons
from evalkit.summary import alpaca_eval_summary

ROOT = Path(__file__).resolve().parents[1]
AE1_CSV = ROOT / "data/alpaca_eval/alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz"
AE2_CSV = ROOT / "data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo__vs_gpt4_1106_preview__preferences.csv.gz"
TD = ROOT / "tests/data/alpaca_eval"
AE1_LB = TD / "alpaca_eval_gpt4_leaderboard.csv"
AE2_LB = TD / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
COLS = ["win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total"]


@pytest.fixture(scope="module")
def derived() -> pd.DataFrame:
    return pd.read_csv(AE1_CSV)


def _check_against_leaderboard(summary: pd.DataFrame, leaderboard: Path, models) -> None:
    lb = pd.read_csv(leaderboard, index_col=0)
    models = sorted(models)
    in_lb = [m for m in models if m in lb.index]
    # mistral-orpo-beta has annotations in results/ but no row in the published AlpacaEval 1
    # leaderboard (checked: it is absent from alpaca_eval_gpt4_leaderboard.csv).
    assert sorted(set(models) - set(in_lb)) == ["mistral-orpo-beta"]
    got = summary.loc[in_lb, COLS]
    want = lb.loc[in_lb, COLS]
    np.testing.assert_allclose(got["win_rate"], want["win_rate"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got["standard_error"], want["standard_error"], rtol=0, atol=1e-6)
    for col in ("n_total", "n_wins", "n_wins_base", "n_draws"):
        np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy(), err_msg=col)


def test_derived_csv_reproduces_every_alpaca_eval_1_model(derived):
    frame, report = read_comparisons(AE1_CSV)
    assert report.format == "alpaca_eval_csv"
    summary = alpaca_eval_summary(frame)
    models = derived["model_dir"].unique()
    assert set(summary.index) == set(models)
    _check_against_leaderboard(summary, AE1_LB, models)
    # quirks handled and reported
    assert report.rows_read == len(derived) == 42665
    assert dict(report.dropped) == {
        "preference is NaN/None (the annotator gave no valid answer; AlpacaEval drops these)": 61
    }
    assert int(derived["preference"].isna().sum()) == 61
    notes = " | ".join(report.notes)
    assert "another annotator found: 'alpaca_eval_gpt4_0613' judged deita-7b-v1.0" in notes
    assert "falcon-7b-instruct looks like a copy of falcon-40b-instruct" in notes
    assert "model 'falcon-7b-instruct': generator_2 says 'falcon-40b-instruct'" in notes


def test_column_mapped_csv_reproduces_every_alpaca_eval_1_model(derived):
    frame, report = read_comparisons(
        AE1_CSV,
        columns={"player_a": "model_dir", "item": "instruction_id", "judge": "annotator",
                 "outcome": "preference"},
        constants={"player_b": "text_davinci_003"},
        outcome_map=lambda p: p.replace(0, 1.5) - 1,
        missing_outcome="drop",
    )
    assert report.format == "columns"
    assert report.n_dropped == 61 and report.rows_kept == 42665 - 61
    _check_against_leaderboard(alpaca_eval_summary(frame), AE1_LB, derived["model_dir"].unique())


def _write_raw_tree(derived: pd.DataFrame, root: Path) -> None:
    """results/<model_dir>/<annotator>/annotations.json in AlpacaEval's raw format."""
    for (model_dir, annotator), rows in derived.groupby(["model_dir", "annotator"]):
        pref = rows["preference"].to_numpy()
        records = [
            {
                "instruction": f"instruction {iid}",
                "output_1": "baseline output",
                "generator_1": "text_davinci_003",
                "output_2": "model output",
                "generator_2": gen,
                "annotator": annotator,
                # AlpacaEval writes draws as 0 or 1.5 and missing annotations as NaN or null;
                # keep the integer codes as ints like the upstream files
                "preference": (None if k % 2 else float("nan")) if np.isnan(p)
                else (int(p) if p in (0.0, 1.0, 2.0) else float(p)),
            }
            for k, (iid, gen, p) in enumerate(zip(rows["instruction_id"], rows["generator_2"], pref, strict=True))
        ]
        out = root / "results" / model_dir / annotator
        out.mkdir(parents=True)
        (out / "annotations.json").write_text(json.dumps(records, indent=1))


@pytest.fixture(scope="module")
def raw_tree(derived, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("alpaca_eval")
    _write_raw_tree(derived, root)
    return root / "results"


def test_raw_annotations_tree_reproduces_every_alpaca_eval_1_model(derived, raw_tree):
    frame, report = read_comparisons(raw_tree, model_name_from="directory")
    assert report.format == "alpaca_eval"
    assert report.rows_read == 42665 and report.n_dropped == 61
    summary = alpaca_eval_summary(frame, baseline="text_davinci_003")
    _check_against_leaderboard(summary, AE1_LB, derived["model_dir"].unique())
    notes = " | ".join(report.notes)
    assert "generator_2 says 'falcon-40b-instruct' in 805 rows, but the directory names the model 'falcon-7b-instruct'" in notes
    assert "another annotator found: 'alpaca_eval_gpt4_0613' judged deita-7b-v1.0" in notes
    assert "falcon-7b-instruct looks like a copy of falcon-40b-instruct" in notes
    # every row points back to its file and record
    first = frame.iloc[0]
    assert first["source"].endswith("annotations.json") and first["line"] == 1


def test_raw_tree_named_by_generator_2_reports_the_duplicate(raw_tree):
    frame, report = read_comparisons(raw_tree)  # default: the player is generator_2
    notes = " | ".join(report.notes)
    assert "805 rows repeat a (model, baseline, item) already read, for falcon-40b-instruct" in notes
    assert (frame["player_a"] == "falcon-40b-instruct").sum() == 2 * 805


@pytest.mark.parametrize(
    ("path", "leaderboard"),
    [
        (TD / "alpaca-7b__alpaca_eval_gpt4__annotations.json.gz", AE1_LB),
        (TD / "alpaca-7b__weighted_alpaca_eval_gpt4_turbo__annotations.json.gz", AE2_LB),
    ],
)
def test_real_raw_files_reproduce_alpaca_7b(path, leaderboard):
    frame, report = read_comparisons(path)
    assert report.format == "alpaca_eval" and report.rows_read == 805
    summary = alpaca_eval_summary(frame)
    want = pd.read_csv(leaderboard, index_col=0).loc["alpaca-7b"]
    got = summary.loc["alpaca-7b"]
    for col in ("win_rate", "standard_error"):
        assert abs(got[col] - want[col]) < 1e-6, col
    for col in ("n_total", "n_wins", "n_wins_base", "n_draws"):
        assert got[col] == want[col], col
    if "weighted" in path.name:
        assert abs(got["discrete_win_rate"] - want["discrete_win_rate"]) < 1e-6
        assert frame["outcome"].nunique() > 3  # continuous preferences kept continuous


def test_alpaca_eval_2_csv_reproduces_leaderboard_and_reports_quirks():
    frame, report = read_comparisons(AE2_CSV)
    summary = alpaca_eval_summary(frame)
    lb = pd.read_csv(AE2_LB, index_col=0)
    # text_davinci_003 has AlpacaEval 2 annotations but no published AlpacaEval 2 row
    assert sorted(set(summary.index) - set(lb.index)) == ["text_davinci_003"]
    common = sorted(set(summary.index) & set(lb.index))
    for col in ("win_rate", "standard_error", "discrete_win_rate"):
        np.testing.assert_allclose(summary.loc[common, col], lb.loc[common, col], rtol=0, atol=1e-6)
    for col in ("n_total", "n_wins", "n_wins_base", "n_draws"):
        np.testing.assert_array_equal(summary.loc[common, col], lb.loc[common, col])
    # the baseline against itself is dropped and counted; missing instructions are reported
    assert report.dropped["the baseline judged against itself (AlpacaEval's reference entry)"] == 805
    notes = " | ".join(report.notes)
    assert "6 models lack some of the 805 items" in notes and "alpaca-7b_verbose (3 missing)" in notes
    assert "model 'NullModel': generator_2 says 'example'" in notes
