"""Judge diagnostics on the bundled LLMFAO judgments (numbers quoted in the README).

Run: PYTHONPATH=. python scripts/judge_llmfao.py
"""

import time

import pandas as pd

from evalkit.io import read_comparisons
from evalkit.ratings import leaderboard
from evalkit.ratings.position import fit_position_bt, position_effect
from evalkit.stats.judges import (
    agreement_table,
    judge_panels,
    position_adjusted_ratings,
    position_bias_table,
    self_preference_table,
)

FILES = [f"data/llmfao/{j}-comparisons.csv" for j in ("gpt3", "gpt4", "crowd")]


def main() -> None:
    pd.set_option("display.width", 200)
    t0 = time.perf_counter()
    frame, _ = read_comparisons(FILES)
    panels = judge_panels(frame)
    pos = position_bias_table(frame, panels)
    print(pos[["judge", "left", "right", "ties", "left_share", "pvalue", "adj_odds_left", "adj_odds_low",
               "adj_odds_high"]].to_string(index=False))
    print(pos["raters"].tolist())
    adj = position_adjusted_ratings(frame, panels)
    print(adj.loc[adj["rank_change"].abs().sort_values(ascending=False).index[:3]].round(1).to_string(index=False))
    sp = self_preference_table(frame, panels)
    print(sp[["judge", "model", "match", "judge_win_rate", "elo_all", "rank_all", "elo_without", "rank_without",
              "n_models_all"]].round(3).to_string(index=False))
    print(agreement_table(frame, panels).round(3).to_string(index=False))
    crowd, _ = read_comparisons(FILES[2])
    print(agreement_table(crowd, judge_panels(crowd)).round(3).to_string(index=False))
    for name, fr in (("crowd", crowd), ("gpt3", read_comparisons(FILES[0])[0])):
        plain = leaderboard(fr).set_index("model")
        adj = fit_position_bt(fr)
        print(f"{name}: position effect {position_effect(adj).describe()}")
        moved = position_adjusted_ratings(fr, judge_panels(fr), plain=plain.reset_index())
        top = moved.loc[moved["rank_change"].abs().idxmax()]
        print(f"{name}: largest rank change with position adjustment: {top['model']} {top['rank']} -> "
              f"{top['rank_adjusted']}")
        lb = leaderboard(fr, interval="bootstrap", cluster="item", n_resamples=1000, rng=0)
        width = (lb["rank_high"] - lb["rank_low"] + 1)
        print(f"{name}: {len(lb)} models; sandwich tie groups {plain['tie_group'].max()}, simultaneous rank interval "
              f"width median {int((plain['rank_high'] - plain['rank_low'] + 1).median())}; item-bootstrap "
              f"(1000) tie groups {lb['tie_group'].max()}, median width {int(width.median())}; FastChat ranks "
              f"distinct: {plain['rank_fastchat'].nunique()}")
        print(plain.loc[plain.index[:5], ["rank", "elo", "rank_fastchat", "rank_low", "rank_high", "tie_group"]])
    print(f"took {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
