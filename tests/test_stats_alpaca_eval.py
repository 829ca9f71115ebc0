"""Paired comparisons between AlpacaEval 1 models on shared instructions (real data, end to end)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalkit.io import read_comparisons
from evalkit.stats import compare_systems, item_scores, mean_se, paired_scores

ROOT = Path(__file__).resolve().parents[1]
AE1 = ROOT / "data" / "alpaca_eval" / "alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz"
LEADERBOARD = Path(__file__).parent / "data" / "alpaca_eval" / "alpaca_eval_gpt4_leaderboard.csv"
MODELS = ["gpt4", "claude-2", "ghost-7b-alpha", "phi-2", "falcon-7b-instruct", "falcon-40b-instruct"]


@pytest.fixture(scope="module")
def scores():
    frame = read_comparisons(AE1).frame
    s = item_scores(frame)
    return s[s["system"].isin(MODELS)].reset_index(drop=True)


@pytest.fixture(scope="module")
def raw():
    """Independent path: pandas on the CSV, AlpacaEval's own definition x = preference - 1, 0 -> draw."""
    d = pd.read_csv(AE1)
    d = d[d["model_dir"].isin(MODELS)].dropna(subset=["preference"])
    d["x"] = d["preference"].replace(0.0, 1.5) - 1.0
    return d.pivot(index="instruction_id", columns="model_dir", values="x")


def test_per_model_scores_reproduce_the_published_leaderboard(scores):
    board = pd.read_csv(LEADERBOARD, index_col=0)
    for model in MODELS[:4]:
        m = mean_se(scores.loc[scores["system"] == model, "score"])
        # published: win_rate = 100 * mean(x), standard_error = 100 * sem(x), n_total
        assert 100 * m.estimate == pytest.approx(board.loc[model, "win_rate"], abs=1e-9)
        assert 100 * m.se == pytest.approx(board.loc[model, "standard_error"], abs=1e-9)
        assert m.n == board.loc[model, "n_total"]


def test_paired_comparison_on_shared_instructions_matches_scipy(scores, raw):
    c = compare_systems(scores, pairs=[("ghost-7b-alpha", "phi-2"), ("gpt4", "claude-2")])
    row = c.table.set_index(["a", "b"]).loc[("ghost-7b-alpha", "phi-2")]
    both = raw[["ghost-7b-alpha", "phi-2"]].dropna()
    # unmatched items reported: ghost-7b-alpha has 10 NaN preferences, phi-2 has 6 (pandas count above)
    assert row["n_items"] == len(both) == 805 - 16
    assert (row["only_a"], row["only_b"]) == (6, 10)
    ref = stats.ttest_rel(both["ghost-7b-alpha"], both["phi-2"])
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(ref.confidence_interval()), rel=1e-9)
    assert row["correlation"] == pytest.approx(
        stats.pearsonr(both["ghost-7b-alpha"], both["phi-2"]).statistic, rel=1e-9)
    assert "ghost-7b-alpha vs phi-2" in c.unmatched_report
    p = paired_scores(scores, "ghost-7b-alpha", "phi-2")
    assert len(p.only_a) == 6 and len(p.only_b) == 10


def test_duplicate_submission_is_reported_not_tested_and_holm_matches_statsmodels(scores):
    c = compare_systems(scores, pairs="all", test="wilcoxon")
    t = c.table
    dup = t[(t["a"].isin(["falcon-7b-instruct", "falcon-40b-instruct"]))
            & (t["b"].isin(["falcon-7b-instruct", "falcon-40b-instruct"]))]
    assert len(dup) == 1 and dup["pvalue"].isna().all() and "not tested" in dup["note"].iloc[0]
    tested = t.dropna(subset=["pvalue"])
    assert len(tested) == 15 - 1
    # statsmodels multipletests(p, method='holm') over the 14 tested pairs
    assert tested["pvalue_adjusted"].to_numpy() == pytest.approx(
        multipletests(tested["pvalue"].to_numpy(), method="holm")[1], rel=1e-12)
    assert c.multiplicity.method == "holm" and "14 paired comparisons" in c.multiplicity.family
    wx = t.set_index(["a", "b"]).loc[("gpt4", "claude-2")]
    assert "Wilcoxon" in wx["test"]
    assert np.isfinite(wx["effect_size"])
