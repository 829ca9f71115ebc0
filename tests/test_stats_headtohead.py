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


def test_cluster_robust_head_to_head_equals_statsmodels_cluster_ols():
    # LLMFAO crowd: ~4 workers vote on each (prompt, pair); cluster by prompt (issue 12)
    import statsmodels.api as sm

    from evalkit.io import read_comparisons
    from evalkit.stats.headtohead import cluster_sign_pvalue

    frame, _ = read_comparisons("tests/data/llmfao/crowd-comparisons.csv")
    table, mult = head_to_head(frame, pairs=[("Claude v2", "Weaver 12k"), ("Dolly v2 (7B)", "Weaver 12k")],
                               cluster="item")
    assert "cluster-robust" in mult.description
    for _, row in table.iterrows():
        ab = (frame["player_a"] == row["a"]) & (frame["player_b"] == row["b"])
        ba = (frame["player_a"] == row["b"]) & (frame["player_b"] == row["a"])
        sub = frame[ab | ba]
        y = np.where(ab[ab | ba], sub["outcome"], 1 - sub["outcome"])
        keep = y != 0.5
        # statsmodels: OLS of (y - 1/2) on a constant, CR1 cluster covariance by prompt, t with G - 1 df
        ref = sm.OLS(y[keep] - 0.5, np.ones(keep.sum())).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(sub["item"][keep])[0]}, use_t=True)
        assert abs(row["pvalue"] - ref.pvalues[0]) < 1e-10
        assert row["n_clusters"] == sub["item"][keep].nunique()
    with pytest.raises(ValueError, match=">= 2 clusters"):
        cluster_sign_pvalue(np.array([1.0, 0.0]), np.array(["x", "x"]))
