"""Head-to-head sign tests on real LLMFAO crowd votes, pinned to scipy.stats.binomtest on a direct count."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from evalkit.io import read_comparisons
from evalkit.stats import head_to_head

CROWD = Path(__file__).parent / "data" / "llmfao" / "crowd-comparisons.csv"
A, B = "Chronos Hermes (13B)", "Weaver 12k"


@pytest.fixture(scope="module")
def crowd():
    return pd.read_csv(CROWD)


def test_head_to_head_counts_and_pvalue_match_direct_count(crowd):
    frame = read_comparisons(CROWD).frame
    table, mult = head_to_head(frame, pairs=[(A, B), ("Claude v2", B)])
    pair = crowd[((crowd["left"] == A) & (crowd["right"] == B)) | ((crowd["left"] == B) & (crowd["right"] == A))]
    won_by = np.where(pair["winner"] == "left", pair["left"], np.where(pair["winner"] == "right", pair["right"], "tie"))
    wa, wb, ties = (won_by == A).sum(), (won_by == B).sum(), (won_by == "tie").sum()
    row = table.iloc[0]
    assert (row["wins_a"], row["wins_b"], row["ties"]) == (wa, wb, ties)
    # scipy.stats.binomtest(wins_a, wins_a + wins_b).pvalue (ties dropped)
    assert row["pvalue"] == pytest.approx(stats.binomtest(wa, wa + wb).pvalue, rel=1e-12)
    # win rate with ties as half and its Wilson interval: proportion_confint(wa + ties/2, n, method='wilson')
    n = wa + wb + ties
    assert row["win_rate"] == pytest.approx((wa + ties / 2) / n)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        proportion_confint(wa + ties / 2, n, method="wilson"), rel=1e-10)
    assert table["pvalue_adjusted"].to_numpy() == pytest.approx(
        multipletests(table["pvalue"].to_numpy(), method="holm")[1], rel=1e-12)
    assert mult.method == "holm"


def test_head_to_head_reports_pairs_that_never_met():
    f = pd.DataFrame({"player_a": ["a", "a", "a", "b"], "player_b": ["b", "b", "b", "c"],
                      "outcome": [1.0, 1.0, 0.0, 1.0]})
    table, mult = head_to_head(f, pairs=[("a", "b"), ("a", "c"), ("b", "c")], adjust="bh")
    assert table.loc[1, "note"] == "never met directly"
    assert table.loc[2, "note"].startswith("not tested")  # one decisive game: nothing to test
    assert mult.names == ("a vs b",)
    with pytest.raises(ValueError, match="Unknown players"):
        head_to_head(f, pairs=[("a", "z")])
