"""Welch and paired t-tests pinned to scipy / statsmodels, and the seed-002 numbers."""

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import paired_ttest, welch_ttest, welch_ttest_from_stats

X = np.array([3.1, 2.4, 5.6, 4.4, 3.9, 4.1, 2.2])
Y = np.array([1.2, 2.9, 1.8, 2.4, 2.0, 3.3, 1.1, 1.5, 2.2, 2.6])
A = np.array([0.61, 0.44, 0.72, 0.55, 0.39, 0.80, 0.47, 0.66, 0.52, 0.58])
B = np.array([0.52, 0.47, 0.60, 0.49, 0.41, 0.71, 0.40, 0.60, 0.55, 0.50])


def test_welch_matches_scipy_and_is_not_student():
    r = welch_ttest(X, Y)
    # scipy.stats.ttest_ind(X, Y, equal_var=False) -> t 3.100676727497896, p 0.012608999110765346, df 9.059899128204238
    assert r.statistic == pytest.approx(3.100676727497896, rel=1e-12)
    assert r.pvalue == pytest.approx(0.012608999110765346, rel=1e-10)
    assert r.df == pytest.approx(9.059899128204238, rel=1e-12)
    # ... .confidence_interval() -> (0.4261176233453785, 2.716739519511763)
    assert r.confidence_interval() == pytest.approx((0.4261176233453785, 2.716739519511763), rel=1e-10)
    # the library trap: scipy.stats.ttest_ind(X, Y) (Student, pooled) -> p 0.0040636604469408664
    assert r.pvalue != pytest.approx(0.0040636604469408664, rel=1e-3)
    assert "Welch" in r.method


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_welch_one_sided_matches_scipy(alternative):
    ref = stats.ttest_ind(X, Y, equal_var=False, alternative=alternative)
    r = welch_ttest(X, Y, alternative=alternative)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert r.confidence_interval(0.9) == pytest.approx(tuple(ref.confidence_interval(0.9)), rel=1e-10)


def test_cohens_d_and_hedges_g_closed_form():
    r = welch_ttest(X, Y)
    n1, n2 = X.size, Y.size
    sp = np.sqrt(((n1 - 1) * X.var(ddof=1) + (n2 - 1) * Y.var(ddof=1)) / (n1 + n2 - 2))
    d = (X.mean() - Y.mean()) / sp
    assert r.effect_size == pytest.approx(d, rel=1e-12)
    # Hedges (1981) approximation J ~ 1 - 3 / (4 df - 1) agrees with the exact J to < 1e-3 here
    df = n1 + n2 - 2
    assert r.details["hedges_g"] == pytest.approx(d * (1 - 3 / (4 * df - 1)), rel=1e-3)


def test_seed002_welch_from_summary_sd_and_sem():
    r = welch_ttest_from_stats(1.58, 0.38, 5, 2.40, 0.28, 5, dispersion="sd")
    # scipy.stats.ttest_ind_from_stats(1.58, .38, 5, 2.40, .28, 5, equal_var=False)
    #   -> t = -3.8845548788532076, p = 0.00546625978102973 (seed 002: p = 0.0053)
    assert r.statistic == pytest.approx(-3.8845548788532076, rel=1e-12)
    assert r.pvalue == pytest.approx(0.00546625978102973, rel=1e-10)
    assert round(r.statistic, 3) == -3.885
    # Welch-Satterthwaite df by hand: (a+b)^2 / (a^2/4 + b^2/4), a = .38^2/5, b = .28^2/5 -> 7.3546
    a, b = 0.38**2 / 5, 0.28**2 / 5
    assert r.df == pytest.approx((a + b) ** 2 / (a**2 / 4 + b**2 / 4), rel=1e-12)
    assert round(r.df, 3) == 7.355
    sem = welch_ttest_from_stats(1.58, 0.38, 5, 2.40, 0.28, 5, dispersion="sem")
    # scipy.stats.ttest_ind_from_stats(1.58, .38*5**.5, 5, 2.40, .28*5**.5, 5, equal_var=False).pvalue
    assert sem.pvalue == pytest.approx(0.12385115725565538, rel=1e-10)
    assert "standard error" in sem.handling and "standard deviation" in r.handling


def test_from_stats_equals_from_samples():
    r1 = welch_ttest(X, Y)
    r2 = welch_ttest_from_stats(X.mean(), X.std(ddof=1), X.size, Y.mean(), Y.std(ddof=1), Y.size, dispersion="sd")
    assert r2.pvalue == pytest.approx(r1.pvalue, rel=1e-12)


def test_from_stats_requires_dispersion_kind():
    with pytest.raises(TypeError):
        welch_ttest_from_stats(1.58, 0.38, 5, 2.40, 0.28, 5)  # no silent default
    with pytest.raises(ValueError, match="'sd'.*'sem'"):
        welch_ttest_from_stats(1.58, 0.38, 5, 2.40, 0.28, 5, dispersion="se")


def test_paired_t_matches_scipy_ttest_rel():
    r = paired_ttest(A, B)
    # scipy.stats.ttest_rel(A, B) -> t 2.81394475534118, p 0.02024620312061244, CI (0.009608430294619476, 0.08839156970538053)
    assert r.statistic == pytest.approx(2.81394475534118, rel=1e-12)
    assert r.pvalue == pytest.approx(0.02024620312061244, rel=1e-10)
    assert r.confidence_interval() == pytest.approx((0.009608430294619476, 0.08839156970538053), rel=1e-10)
    assert r.df == 9
    g = paired_ttest(A, B, alternative="greater")
    # scipy.stats.ttest_rel(A, B, alternative='greater') -> p 0.01012310156030622, CI low 0.0170794963974817
    assert g.pvalue == pytest.approx(0.01012310156030622, rel=1e-10)
    lo, hi = g.confidence_interval()
    assert lo == pytest.approx(0.0170794963974817, rel=1e-10) and hi == np.inf
    d = A - B
    assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1))


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least 2"):
        welch_ttest([1.0], [2.0, 3.0])
    with pytest.raises(ValueError, match="zero variance"):
        welch_ttest([1.0, 1.0, 1.0], [2.0, 2.0])
    with pytest.raises(ValueError, match="zero variance"):
        paired_ttest([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        paired_ttest([1.0, 2.0, 3.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="confidence_level"):
        welch_ttest(X, Y, confidence_level=1.0)
    with pytest.raises(ValueError, match="confidence_level"):
        welch_ttest(X, Y).confidence_interval(0)
    with pytest.raises(ValueError, match="alternative"):
        welch_ttest(X, Y, alternative="two_sided")
    with pytest.raises(ValueError, match="NaN"):
        welch_ttest([1.0, np.nan, 2.0], Y)
    with pytest.raises(ValueError, match="n1"):
        welch_ttest_from_stats(1, 1, 1, 2, 1, 5, dispersion="sd")


def test_result_is_frozen():
    r = welch_ttest(X, Y)
    with pytest.raises(AttributeError):
        r.pvalue = 0.5
    with pytest.raises(TypeError):
        r.details["x"] = 1
    d = r.to_dict()
    assert d["ci_low"] < d["ci_high"] and d["method"] == r.method


def test_welch_with_a_tiny_variance_keeps_its_df():
    # scipy.stats.ttest_ind([0, 0], [0, 3.66e-129], equal_var=False) -> t -1.0, df 1.0, p 0.5
    # (squaring the variance terms directly underflows to df = nan and a clamped p = 1.0)
    r = welch_ttest([0.0, 0.0], [0.0, 3.66e-129])
    assert r.df == pytest.approx(1.0) and r.pvalue == pytest.approx(0.5) and r.statistic == pytest.approx(-1.0)
