"""Unit-of-analysis comparison on the bundled seed-002 example; agreement, kappa, Spearman,
position bias (real LLMFAO judge data)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from evalkit.stats import (
    cohen_kappa,
    compare_units,
    paired_scores,
    percent_agreement,
    position_bias_test,
    spearman,
)

ROOT = Path(__file__).resolve().parents[1]
SEED002 = ROOT / "data" / "seed002" / "scores.csv"
LLMFAO = Path(__file__).parent / "data" / "llmfao"


@pytest.fixture(scope="module")
def seed002():
    return pd.read_csv(SEED002)


def test_seed002_bundle_matches_the_paper_summaries(seed002):
    trial = seed002.groupby(["system", "trial"])["score"].mean()
    # paper: MLR-Bench totals 1.58 +- 0.38 (base) and 2.40 +- 0.28 (two rounds), sample SD, n = 5
    for system, mean, sd in (("base", 1.58, 0.38), ("mass_round2", 2.40, 0.28)):
        assert trial[system].mean() == pytest.approx(mean, abs=1e-3)
        assert trial[system].std(ddof=1) == pytest.approx(sd, abs=1e-3)


def test_compare_units_reproduces_both_seed002_answers(seed002):
    u = compare_units(seed002, "mass_round2", "base")
    trial = seed002.groupby(["system", "trial"])["score"].mean()
    # scipy.stats.ttest_ind(trial means round2, trial means base, equal_var=False)
    ref = stats.ttest_ind(trial["mass_round2"], trial["base"], equal_var=False)
    assert u.trial_level.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert round(u.trial_level.pvalue, 4) in (0.0053, 0.0054, 0.0055)  # paper: 0.0053 (summary rounding)
    # scipy.stats.binomtest(8, 11).pvalue -> 0.2265625 (paper: 0.2266)
    assert (u.task_sign.wins, u.task_sign.losses, u.task_sign.ties) == (8, 3, 1)
    assert u.task_sign.pvalue == 0.2265625
    task = seed002.groupby(["system", "task"])["score"].mean().unstack(0)
    assert u.task_paired_t.pvalue == pytest.approx(
        stats.ttest_rel(task["mass_round2"], task["base"]).pvalue, rel=1e-10)
    assert not u.agree
    assert "Here the two units disagree" in u.explanation
    assert "needs 10 wins" in u.explanation  # sign_test_min_wins(11)
    frame = u.to_frame()
    assert list(frame["unit"]) == ["trial", "task", "task"]
    assert list(frame["significant"]) == [True, False, False]
    assert u.n_tasks == 12 and u.n_trials_a == u.n_trials_b == 5


def test_compare_units_reports_unmatched_tasks_and_bad_input(seed002):
    dropped = seed002[~((seed002["system"] == "base") & (seed002["task"] == "finance_1"))]
    u = compare_units(dropped, "mass_round2", "base")
    assert u.unmatched_tasks == ("finance_1",) and u.n_tasks == 11
    assert "finance_1" in u.explanation
    # the trial-level test uses the same 11 shared tasks: trial means over them, Welch as in scipy
    shared = dropped[dropped["task"] != "finance_1"]
    means = shared.groupby(["system", "trial"])["score"].mean()
    # scipy.stats.ttest_ind(mass_round2 trial means, base trial means, equal_var=False)
    ref = stats.ttest_ind(means["mass_round2"], means["base"], equal_var=False)
    assert u.trial_level.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    with pytest.raises(ValueError, match="Missing column"):
        compare_units(seed002.rename(columns={"trial": "run"}), "mass_round2", "base")
    bad = seed002.copy()
    bad.loc[3, "score"] = np.nan
    with pytest.raises(ValueError, match="missing scores"):
        compare_units(bad, "mass_round2", "base")


def test_paired_scores_reports_unmatched_and_duplicates():
    f = pd.DataFrame({"system": ["a", "a", "a", "b", "b", "b"], "item": [1, 2, 3, 2, 3, 4],
                      "score": [0.1, 0.2, np.nan, 0.3, 0.4, 0.5]})
    p = paired_scores(f, "a", "b")
    assert list(p.frame["item"]) == ["2"]
    assert p.only_a == ("1", "3") and p.only_b == ("3", "4")
    assert "1 shared items paired" in p.report
    dup = pd.concat([f, f.iloc[:1]])
    with pytest.raises(ValueError, match="repeat a \\(system, item\\) pair"):
        paired_scores(dup, "a", "b")
    with pytest.raises(ValueError, match="not in column"):
        paired_scores(f, "a", "c")


RATER_A = ["yes", "yes", "no", "no", "maybe", "yes", "no", "yes", "maybe", "no", "yes", "no", "no", "yes"]
RATER_B = ["yes", "no", "no", "no", "maybe", "yes", "yes", "yes", "no", "no", "yes", "maybe", "no", "yes"]


def test_cohen_kappa_matches_statsmodels():
    r = cohen_kappa(RATER_A, RATER_B)
    ref = cohens_kappa(pd.crosstab(pd.Series(RATER_A), pd.Series(RATER_B)).to_numpy())
    assert r.estimate == pytest.approx(ref.kappa, rel=1e-12)
    assert r.details["se"] == pytest.approx(ref.std_kappa, rel=1e-12)
    assert r.statistic == pytest.approx(ref.z_value, rel=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue_two_sided, rel=1e-10)
    assert r.confidence_interval() == pytest.approx((ref.kappa_low, ref.kappa_upp), rel=1e-10)
    pa = percent_agreement(RATER_A, RATER_B)
    assert pa.estimate == pytest.approx(10 / 14)
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(RATER_A, RATER_B[:-1])


def test_spearman_matches_scipy():
    x = np.array([0.3, 0.5, 0.2, 0.9, 0.7, 0.4, 0.8, 0.1, 0.6, 0.65])
    y = np.array([0.2, 0.6, 0.3, 0.7, 0.9, 0.35, 0.6, 0.05, 0.5, 0.8])
    r = spearman(x, y)
    ref = stats.spearmanr(x, y)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    lo, hi = r.confidence_interval()
    assert lo < r.statistic < hi <= 1
    with pytest.raises(ValueError, match="constant"):
        spearman(x, np.ones_like(x))


def test_position_bias_on_real_llmfao_judges():
    gpt35 = pd.read_csv(LLMFAO / "gpt3-comparisons.csv")
    r = position_bias_test(gpt35["winner"])
    counts = gpt35["winner"].value_counts()
    # independent count and scipy.stats.binomtest(left, left + right)
    assert (r.wins, r.losses, r.ties) == (counts["left"], counts["right"], counts.get("tie", 0))
    assert r.pvalue == pytest.approx(stats.binomtest(counts["left"], counts["left"] + counts["right"]).pvalue)
    assert 0.6 < r.estimate < 0.72  # "prefers the left answer about 2:1"
    assert r.pvalue < 1e-10
    with pytest.raises(ValueError, match="winners must be one of"):
        position_bias_test(["left", "right", "model_a"])


# --- Fleiss' kappa and Krippendorff's alpha (issue 12) ---

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 coders x 12 units, NaN = missing.
_KRIPP = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


@pytest.mark.parametrize("level, expected", [
    # krippendorff.alpha(reliability_data=_KRIPP, level_of_measurement=level) with the PyPI package krippendorff 0.9.0
    # (the paper prints 0.743, 0.815, 0.849, 0.797)
    ("nominal", 0.743421052631579), ("ordinal", 0.8153875037548814), ("interval", 0.8491071428571428),
    ("ratio", 0.7974027747116121),
])
def test_krippendorff_alpha_worked_example(level, expected):
    from evalkit.stats.agreement import krippendorff_alpha

    assert abs(krippendorff_alpha(_KRIPP, level=level) - expected) < 1e-12


def test_fleiss_kappa_equals_statsmodels():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    from evalkit.stats.agreement import fleiss_kappa

    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 40)
    labels = np.where(rng.random((40, 5)) < 0.7, truth[:, None], rng.integers(0, 3, (40, 5)))
    table = np.stack([(labels == c).sum(axis=1) for c in range(3)], axis=1)
    assert abs(fleiss_kappa(table) - sm_fleiss(table, method="fleiss")) < 1e-12
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa(np.array([[2, 0], [1, 2]]))
