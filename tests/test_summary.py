"""Per-model summary: counts against direct pandas counts, standard errors against scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.cli import main
from evalkit.io import read_comparisons
from evalkit.summary import alpaca_eval_summary, infer_baseline, summarize

ROOT = Path(__file__).resolve().parents[1]
CROWD = ROOT / "tests/data/llmfao/crowd-comparisons.csv"
AE1_CSV = ROOT / "data/alpaca_eval/alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz"


def scores_of(frame: pd.DataFrame, model: str) -> np.ndarray:
    a = frame.loc[frame["player_a"] == model, "outcome"].to_numpy()
    b = 1.0 - frame.loc[frame["player_b"] == model, "outcome"].to_numpy()
    return np.concatenate([a, b])


def test_summary_matches_scipy_on_llmfao_crowd():
    frame, _ = read_comparisons(CROWD)
    table = summarize(frame).set_index("model")
    for model in ["GPT 4", "Alpaca (7B)", "LLaMA-2-Chat (70B)"]:
        s = scores_of(frame, model)
        row = table.loc[model]
        assert row["n"] == s.size
        assert row["wins"] == (s == 1).sum() and row["losses"] == (s == 0).sum()
        assert row["ties"] == (s == 0.5).sum()
        assert row["win_rate"] == pytest.approx(s.mean(), abs=1e-12)
        assert row["standard_error"] == pytest.approx(stats.sem(s, ddof=1), abs=1e-12)  # scipy.stats.sem
    assert table["win_rate"].is_monotonic_decreasing
    # every game counted twice (once per side)
    assert table["n"].sum() == 2 * len(frame)


def test_weights_are_frequency_weights():
    df = pd.DataFrame({"player_a": ["a", "a", "b", "c"], "player_b": ["b", "c", "c", "a"],
                       "outcome": [1.0, 0.5, 0.0, 0.25], "weight": [3.0, 1.0, 2.0, 1.0]})
    expanded = df.loc[df.index.repeat(df["weight"].astype(int))].assign(weight=1.0)
    weighted = summarize(df).set_index("model")
    plain = summarize(expanded).set_index("model")
    pd.testing.assert_frame_equal(weighted, plain.loc[weighted.index])
    s = scores_of(expanded, "a")
    assert weighted.loc["a", "standard_error"] == pytest.approx(stats.sem(s), abs=1e-12)


def test_single_game_has_no_standard_error():
    table = summarize(pd.DataFrame({"player_a": ["a"], "player_b": ["b"], "outcome": [1.0]}))
    assert table["standard_error"].isna().all()
    assert table.set_index("model").loc["a", "wins"] == 1


def test_alpaca_eval_summary_either_side_and_errors():
    df = pd.DataFrame({"player_a": ["m", "m", "base", "m2"], "player_b": ["base", "base", "m", "m"],
                       "outcome": [1.0, 0.5, 1.0, 0.0]})
    out = alpaca_eval_summary(df, baseline="base")
    # m: x = [1, 0.5, 0] (the third game has the baseline as player_a); the m2-vs-m game is ignored
    assert out.loc["m", "n_total"] == 3 and out.loc["m", "win_rate"] == pytest.approx(50.0)
    assert out.loc["m", "standard_error"] == pytest.approx(100 * stats.sem([1.0, 0.5, 0.0]))
    assert list(out.index) == ["m"]
    with pytest.raises(ValueError, match="Cannot infer the baseline: 'player_b' holds 2 models"):
        infer_baseline(df)
    with pytest.raises(ValueError, match="plays no game"):
        alpaca_eval_summary(df, baseline="nobody")
    # frequency weights: every weight 2 is every game twice
    twice = alpaca_eval_summary(pd.concat([df, df], ignore_index=True), baseline="base")
    pd.testing.assert_frame_equal(alpaca_eval_summary(df.assign(weight=2.0), baseline="base"), twice)
    assert twice.loc["m", "standard_error"] == pytest.approx(100 * stats.sem([1.0, 0.5, 0.0] * 2))


def test_cli_summary_writes_csv_and_markdown(tmp_path, capsys):
    out_csv = tmp_path / "s.csv"
    assert main(["summary", str(CROWD), "--out", str(out_csv)]) == 0
    printed = capsys.readouterr()
    assert "read 8931 rows" in printed.err and "| model | n | wins |" in printed.out
    written = pd.read_csv(out_csv)
    raw = pd.read_csv(CROWD)
    gpt4 = written.set_index("model").loc["GPT 4"]
    mask_l, mask_r = raw["left"] == "GPT 4", raw["right"] == "GPT 4"
    assert gpt4["n"] == mask_l.sum() + mask_r.sum()
    assert gpt4["wins"] == ((mask_l & (raw["winner"] == "left")) | (mask_r & (raw["winner"] == "right"))).sum()
    out_md = tmp_path / "s.md"
    assert main(["summary", str(AE1_CSV), "--out", str(out_md)]) == 0
    text = out_md.read_text()
    assert text.startswith("| model | win_rate | standard_error | n_wins |")
    assert "| falcon-7b-instruct |" in text
    err = capsys.readouterr().err
    assert "dropped 61" in err and "another annotator found" in err


def test_cli_errors_exit_2(tmp_path, capsys):
    assert main(["summary", str(tmp_path / "missing.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["summary", str(CROWD), "--out", str(tmp_path / "s.txt")]) == 2
    assert "--out must end in .csv or .md" in capsys.readouterr().err
