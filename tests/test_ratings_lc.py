"""AlpacaEval length-controlled win rate (issue 12) against the published AlpacaEval 2 leaderboard."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from evalkit.ratings.lc import (
    alpaca_eval_lc_frame,
    instruction_difficulty,
    length_controlled_win_rate,
)

PREFS = "data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo__vs_gpt4_1106_preview__preferences.csv.gz"
BOARD = "tests/data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


@pytest.fixture(scope="module")
def frame():
    return alpaca_eval_lc_frame(PREFS)[0]


def test_lc_win_rate_tracks_the_published_leaderboard(frame):
    lc = length_controlled_win_rate(frame, baseline="gpt4_1106_preview").set_index("model")
    board = pd.read_csv(BOARD, index_col=0)
    both = lc.join(board[["length_controlled_winrate"]], how="inner")
    assert len(both) == 56  # 'example' and 'text_davinci_003' are not on the published board
    rho = stats.spearmanr(both["lc_win_rate"], both["length_controlled_winrate"]).statistic
    diff = (both["lc_win_rate"] - both["length_controlled_winrate"]).abs()
    # scripts/lc_vs_alpaca_eval.py: rho 0.978, mean |diff| 1.30 points; the 4 models off by > 3 points are the
    # short-output ones (gpt4_gamed +14.5: its unregularised length slope is -18 where AlpacaEval's regularised fit
    # has -3), see README "Style and length control"
    assert rho >= 0.95
    assert diff.mean() < 1.5
    assert set(diff[diff > 3].index) == {"gpt4_gamed", "gpt35_turbo_instruct", "minotaur-13b", "text_davinci_001"}
    assert lc.loc["gpt4_1106_preview", "lc_win_rate"] == 50.0


def test_instruction_difficulty_equals_statsmodels_two_way_glm(frame):
    # a small slice: 4 models x 40 instructions, the same two-way logistic model fitted by statsmodels
    sub = frame[frame["model"].isin(sorted(set(frame["model"]))[:4])
                & frame["instruction"].isin(sorted(set(frame["instruction"]))[:40])].reset_index(drop=True)
    got = instruction_difficulty(sub)
    d = sub["len_baseline"] - sub["len_model"]
    tanh_len = np.tanh(d / d.groupby(sub["model"]).transform("std"))
    xm = pd.get_dummies(sub["model"]).to_numpy(float)
    xi = -pd.get_dummies(sub["instruction"]).to_numpy(float)[:, 1:]
    ref = sm.GLM(sub["preference"].to_numpy(), np.column_stack([xm, xi, tanh_len]),
                 family=sm.families.Binomial()).fit(tol=1e-12)
    ref_d = np.r_[0.0, ref.params[4:4 + 39]]
    np.testing.assert_allclose(got.to_numpy(), ref_d - ref_d.mean(), atol=1e-6)


def test_lc_input_errors():
    bad = pd.DataFrame({"model": ["m"], "instruction": ["1"], "preference": [1.5], "len_model": [1.0],
                        "len_baseline": [2.0]})
    with pytest.raises(ValueError, match="probability in \\[0, 1\\]; got 1.5 in 1 rows"):
        length_controlled_win_rate(bad)
