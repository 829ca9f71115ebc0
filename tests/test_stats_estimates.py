"""Proportions, means (CLT, CR1 clustered, paired), multiplicity and power pinned to statsmodels/scipy."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower
from statsmodels.stats.proportion import proportion_confint

from evalkit.stats import (
    adjust_pvalues,
    clopper_pearson_interval,
    mean_se,
    minimum_detectable_effect,
    paired_difference,
    pass_rate,
    sign_test_min_wins,
    ttest_power,
    ttest_sample_size,
    wilson_interval,
    win_rate,
    win_rate_from_outcomes,
)


def test_seed002_win_rate_ties_half_and_dropped():
    half = win_rate(352, 306, 2)
    drop = win_rate(352, 306, 2, ties_as="drop")
    # (352 + 1) / 660 = 0.534848..., 352 / 658 = 0.534954...; both print as 53.5 %
    assert half.estimate == pytest.approx(353 / 660) and drop.estimate == pytest.approx(352 / 658)
    assert f"{100 * half.estimate:.1f}" == f"{100 * drop.estimate:.1f}" == "53.5"
    # statsmodels proportion_confint(353, 660, method='wilson') -> (0.49670356656301473, 0.5725900868971326)
    assert half.confidence_interval() == pytest.approx((0.49670356656301473, 0.5725900868971326), rel=1e-10)
    assert drop.confidence_interval() == pytest.approx(proportion_confint(352, 658, method="wilson"), rel=1e-10)
    assert "2 ties counted as half" in half.handling and "2 ties dropped" in drop.handling
    o = np.array([1.0] * 352 + [0.0] * 306 + [0.5] * 2)
    assert win_rate_from_outcomes(o).estimate == half.estimate


def test_wilson_and_clopper_pearson_match_statsmodels_and_avoid_wald_trap():
    # statsmodels proportion_confint(11, 11) (default Wald) -> (1.0, 1.0): the trap
    assert proportion_confint(11, 11) == (1.0, 1.0)
    # proportion_confint(11, 11, method='wilson') -> (0.7411670330319682, 1.0)
    assert wilson_interval(11, 11).confidence_interval() == pytest.approx((0.7411670330319682, 1.0), rel=1e-10)
    # proportion_confint(11, 11, method='beta') -> (0.7150858470818455, 1.0)
    assert clopper_pearson_interval(11, 11).confidence_interval() == pytest.approx((0.7150858470818455, 1.0), rel=1e-10)
    # proportion_confint(7, 23, method='beta') -> (0.13210287969809986, 0.5291916660085068)
    assert clopper_pearson_interval(7, 23).confidence_interval() == pytest.approx(
        (0.13210287969809986, 0.5291916660085068), rel=1e-9)
    # proportion_confint(7, 23, alpha=0.1, method='wilson')
    assert wilson_interval(7, 23).confidence_interval(0.9) == pytest.approx(
        proportion_confint(7, 23, alpha=0.1, method="wilson"), rel=1e-10)
    p = pass_rate([1, 0, 1, 1, 0, 1, 1], method="clopper-pearson")
    assert p.estimate == pytest.approx(5 / 7)
    assert p.confidence_interval() == pytest.approx(proportion_confint(5, 7, method="beta"), rel=1e-9)


def test_proportion_bad_inputs():
    with pytest.raises(ValueError, match=r"\[0, n\]"):
        wilson_interval(12, 11)
    with pytest.raises(ValueError, match="positive integer"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="integer count"):
        clopper_pearson_interval(2.5, 10)
    with pytest.raises(ValueError, match="0/1"):
        pass_rate([1, 0, 2])
    with pytest.raises(ValueError, match="confidence_level"):
        wilson_interval(3, 10, confidence_level=95)


SCORES = np.array([0.9, 0.7, 0.8, 0.2, 0.4, 0.3, 0.95, 0.85, 0.5, 0.55, 0.6, 0.1, 0.15])
CLUSTERS = np.array(["t1", "t1", "t1", "t2", "t2", "t2", "t3", "t3", "t4", "t4", "t4", "t5", "t5"])


def test_mean_clt_se_and_t_interval():
    m = mean_se(SCORES)
    assert m.se == pytest.approx(stats.sem(SCORES), rel=1e-12)
    # t(n-1) interval, not 1.96: scipy.stats.t.interval(0.95, 12, loc=mean, scale=sem)
    assert m.confidence_interval() == pytest.approx(
        stats.t.interval(0.95, 12, loc=SCORES.mean(), scale=stats.sem(SCORES)), rel=1e-12)


def test_mean_cluster_se_matches_statsmodels_cr1():
    m = mean_se(SCORES, clusters=CLUSTERS)
    groups = np.unique(CLUSTERS, return_inverse=True)[1]
    ref = sm.OLS(SCORES, np.ones_like(SCORES)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert m.se == pytest.approx(float(ref.bse[0]), rel=1e-10)
    assert m.df == 4  # G - 1
    assert m.confidence_interval() == pytest.approx(tuple(ref.conf_int()[0]), rel=1e-10)
    assert m.details["n_clusters"] == 5 and m.details["design_effect"] > 1


def test_paired_difference_se_and_correlation():
    x = SCORES
    y = SCORES - np.array([0.05, 0.1, -0.02, 0.08, 0.0, 0.04, 0.06, 0.09, -0.03, 0.07, 0.02, 0.05, 0.01])
    r = paired_difference(x, y)
    ref = stats.ttest_rel(x, y)
    assert r.estimate == pytest.approx(np.mean(x - y))
    assert r.confidence_interval() == pytest.approx(tuple(ref.confidence_interval()), rel=1e-10)
    assert r.details["correlation"] == pytest.approx(stats.pearsonr(x, y).statistic, rel=1e-12)
    assert r.details["variance_reduction"] > 0.9  # highly correlated models: pairing removes most variance
    rc = paired_difference(x, y, clusters=CLUSTERS)
    groups = np.unique(CLUSTERS, return_inverse=True)[1]
    ref_c = sm.OLS(x - y, np.ones_like(x)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert rc.se == pytest.approx(float(ref_c.bse[0]), rel=1e-10)


def test_means_bad_inputs():
    with pytest.raises(ValueError, match="at least 2"):
        mean_se([1.0])
    with pytest.raises(ValueError, match="zero variance"):
        mean_se([2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="one label per observation"):
        mean_se(SCORES, clusters=CLUSTERS[:-1])
    with pytest.raises(ValueError, match="at least 2 clusters"):
        mean_se([1.0, 2.0], clusters=["a", "a"])
    with pytest.raises(ValueError, match="same length"):
        paired_difference([1.0, 2.0, 3.0], [1.0, 2.0])


P = [0.01, 0.04, 0.03, 0.005, 0.20, 0.049]


def test_holm_is_holm_not_holm_sidak():
    r = adjust_pvalues(P, family="six pairwise comparisons")
    # statsmodels multipletests(P, method='holm')[1] -> [0.05, 0.12, 0.12, 0.03, 0.2, 0.12]
    assert r.adjusted == pytest.approx((0.05, 0.12, 0.12, 0.03, 0.2, 0.12), rel=1e-12)
    # the trap: multipletests(P)[1] (default 'hs', Holm-Sidak) -> first entry 0.04900995...
    assert multipletests(P)[1][0] == pytest.approx(0.04900995, rel=1e-6)
    assert r.adjusted[0] != pytest.approx(0.04900995, rel=1e-3)
    assert r.reject == tuple(multipletests(P, method="holm")[0])
    assert "Holm" in r.description and "six pairwise comparisons" in r.description


def test_bh_and_bonferroni_match_statsmodels():
    bh = adjust_pvalues(dict(zip("abcdef", P, strict=True)), method="bh")
    # multipletests(P, method='fdr_bh')[1] -> [0.03, 0.0588, 0.0588, 0.03, 0.2, 0.0588]
    assert bh.adjusted == pytest.approx((0.03, 0.0588, 0.0588, 0.03, 0.2, 0.0588), rel=1e-12)
    assert bh.names == tuple("abcdef")
    bon = adjust_pvalues(P, method="bonferroni")
    assert bon.adjusted == pytest.approx(tuple(multipletests(P, method="bonferroni")[1]), rel=1e-12)
    rng = np.random.default_rng(0)
    q = rng.uniform(0, 0.2, 40)
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        assert adjust_pvalues(q, method=ours).adjusted == pytest.approx(tuple(multipletests(q, method=theirs)[1]))
    frame = bh.to_frame()
    assert list(frame.columns) == ["test", "pvalue", "pvalue_adjusted", "reject", "method", "family"]


def test_pvalues_outside_unit_interval_are_errors():
    with pytest.raises(ValueError, match=r"\[0, 1\]; got 1.2 at position 1"):
        adjust_pvalues([0.1, 1.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_pvalues([0.1, -0.01])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_pvalues([0.1, np.nan])
    with pytest.raises(ValueError, match="method"):
        adjust_pvalues([0.1], method="hs")


def test_power_matches_statsmodels():
    # statsmodels TTestPower().power(0.5, 20, 0.05) -> 0.5645044184390203
    assert ttest_power(0.5, 20) == pytest.approx(0.5645044184390203, rel=1e-9)
    # TTestIndPower().power(0.5, 20, 0.05) -> 0.3379390289250411
    assert ttest_power(0.5, 20, design="unpaired") == pytest.approx(0.3379390289250411, rel=1e-9)
    # TTestIndPower().power(0.5, 20, 0.05, ratio=2) -> 0.43476751151223864
    assert ttest_power(0.5, 20, design="unpaired", ratio=2) == pytest.approx(0.43476751151223864, rel=1e-9)
    # TTestPower().power(0.5, 20, 0.05, alternative='larger') -> 0.6951493382443411
    assert ttest_power(0.5, 20, alternative="greater") == pytest.approx(0.6951493382443411, rel=1e-9)
    # TTestPower().solve_power(nobs=12, power=0.8, alpha=0.05) -> 0.8886543444414026
    assert minimum_detectable_effect(12) == pytest.approx(0.8886543444414026, rel=1e-6)
    # TTestIndPower().solve_power(effect_size=0.5, power=0.8, alpha=0.05) -> 63.76561058891169
    assert ttest_sample_size(0.5, design="unpaired") == pytest.approx(63.76561058891169, rel=1e-6)
    assert minimum_detectable_effect(5, design="unpaired") == pytest.approx(
        TTestIndPower().solve_power(nobs1=5, power=0.8, alpha=0.05), rel=1e-6)
    assert ttest_sample_size(0.3) == pytest.approx(TTestPower().solve_power(effect_size=0.3, power=0.8, alpha=0.05), rel=1e-6)


def test_sign_test_min_wins_from_the_notes_and_binomtest():
    # significance.md: 10 of 11 or 12, 15 of 20, 21 of 30
    assert [sign_test_min_wins(n) for n in (11, 12, 20, 30)] == [10, 10, 15, 21]
    for n in (6, 11, 12, 20, 30, 57):
        k = sign_test_min_wins(n)
        assert stats.binomtest(k, n).pvalue < 0.05 <= stats.binomtest(k - 1, n).pvalue
    assert sign_test_min_wins(5) is None  # binomtest(5, 5).pvalue = 0.0625
    assert sign_test_min_wins(5, alternative="greater") == 5  # binomtest(5, 5, alternative='greater') = 0.03125


def test_power_bad_inputs():
    with pytest.raises(ValueError, match="alpha"):
        ttest_power(0.5, 20, alpha=1.5)
    with pytest.raises(ValueError, match="design"):
        ttest_power(0.5, 20, design="crossed")
    with pytest.raises(ValueError, match="nobs"):
        ttest_power(0.5, 1)
    with pytest.raises(ValueError, match="non-zero"):
        ttest_sample_size(0.0)
