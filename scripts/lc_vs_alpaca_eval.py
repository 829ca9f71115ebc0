"""evalkit's AlpacaEval length-controlled win rate vs the published AlpacaEval 2 leaderboard.

Run: PYTHONPATH=. python scripts/lc_vs_alpaca_eval.py
Prints the Spearman correlation and the mean absolute difference over the models in both, and
every model off by more than 3 points with its raw win rate and length coefficient.
"""

import time

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.ratings.lc import alpaca_eval_lc_frame, length_controlled_win_rate

PREFS = "data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo__vs_gpt4_1106_preview__preferences.csv.gz"
BOARD = "tests/data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


def main() -> None:
    t0 = time.perf_counter()
    frame, dropped = alpaca_eval_lc_frame(PREFS)
    lc = length_controlled_win_rate(frame, baseline="gpt4_1106_preview").set_index("model")
    took = time.perf_counter() - t0
    board = pd.read_csv(BOARD, index_col=0)
    both = lc.join(board[["length_controlled_winrate", "win_rate", "avg_length"]], how="inner")
    diff = both["lc_win_rate"] - both["length_controlled_winrate"]
    rho = stats.spearmanr(both["lc_win_rate"], both["length_controlled_winrate"]).statistic
    print(f"{len(frame)} rows ({dropped} without a preference dropped), {len(lc)} models, {len(both)} on the "
          f"published leaderboard; fit in {took:.2f} s")
    print(f"Spearman rho = {rho:.4f}; mean |LC difference| = {np.mean(np.abs(diff)):.2f} points; "
          f"max = {np.max(np.abs(diff)):.2f}")
    off = both[np.abs(diff) > 3].assign(diff=diff)
    cols = ["lc_win_rate", "length_controlled_winrate", "diff", "win_rate", "coef_length", "avg_length"]
    print(f"models off by more than 3 points ({len(off)}):")
    print(off[cols].round(2).to_string())


if __name__ == "__main__":
    main()
