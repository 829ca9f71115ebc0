"""Sign test, Wilcoxon, McNemar, permutation test and paired bootstrap pinned to scipy/statsmodels."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.descriptivestats import sign_test as sm_sign_test

from evalkit.stats import (
    mcnemar_test,
    paired_bootstrap,
    permutation_test,
    sign_test,
    sign_test_from_counts,
    wilcoxon_test,
)

# Seed 002: twelve task means, round-2 model beats base on 8, loses 3, ties 1.
D12 = np.array([0.4, 0.9, 0.1, 1.2, 0.3, -0.2, 0.6, 0.0, -0.5, 0.8, 0.2, -0.1])
A = np.array([0.61, 0.44, 0.72, 0.55, 0.39, 0.80, 0.47, 0.66, 0.52, 0.58])
B = np.array([0.52, 0.47, 0.60, 0.49, 0.41, 0.71, 0.40, 0.60, 0.55, 0.50])
DZ = np.array([0.5, -0.2, 0.0, 1.1, 0.3, 0.0, 0.7, -0.4, 0.9, 0.2, 0.6, 0.0])


def test_seed002_sign_test_and_tie_policies():
    r = sign_test(D12)
    # scipy.stats.binomtest(8, 11).pvalue -> 0.2265625 (seed 002: p = 0.2266)
    assert r.pvalue == 0.2265625
    assert (r.wins, r.losses, r.ties, r.n, r.statistic) == (8, 3, 1, 11, 8)
    assert "1 tied pairs dropped" in r.handling
    # tie as a loss: scipy.stats.binomtest(8, 12).pvalue -> 0.3876953125
    assert sign_test(D12, ties="loss").pvalue == 0.3876953125
    # tie as a win: scipy.stats.binomtest(9, 12).pvalue -> 0.14599609375
    assert sign_test(D12, ties="win").pvalue == pytest.approx(0.14599609375, rel=1e-12)
    # scipy.stats.binomtest(8, 11).proportion_ci(method='exact') -> (0.3902574404275788, 0.9397822658272428)
    assert r.confidence_interval() == pytest.approx((0.3902574404275788, 0.9397822658272428), rel=1e-10)


def test_sign_test_equals_statsmodels_but_reports_counts():
    # statsmodels sign_test(D12) -> (M = (8 - 3)/2 = 2.5, p) and drops the zero silently
    m, p = sm_sign_test(D12)
    r = sign_test(D12)
    assert m == (r.wins - r.losses) / 2
    assert r.pvalue == pytest.approx(p, rel=1e-12)


def test_sign_test_one_sided():
    # scipy.stats.binomtest(8, 11, alternative='greater').pvalue -> 0.11328125
    assert sign_test(D12, alternative="greater").pvalue == pytest.approx(0.11328125, rel=1e-12)
    assert sign_test_from_counts(8, 3, 1, alternative="less").pvalue == pytest.approx(
        stats.binomtest(8, 11, alternative="less").pvalue, rel=1e-12)


def test_sign_test_bad_inputs():
    with pytest.raises(ValueError, match="All 4 pairs are ties"):
        sign_test([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="ties"):
        sign_test(D12, ties="half")
    with pytest.raises(ValueError, match="same length"):
        sign_test([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 2"):
        sign_test([1.0])
    with pytest.raises(ValueError, match="non-negative integer"):
        sign_test_from_counts(2.5, 3)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_matches_scipy_and_names_zero_method(zero_method):
    r = wilcoxon_test(DZ, zero_method=zero_method)
    ref = stats.wilcoxon(DZ, zero_method=zero_method)
    assert r.statistic == ref.statistic and r.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert zero_method in r.handling and "3 zero differences" in r.handling


def test_wilcoxon_pinned_values_and_effect_size():
    r = wilcoxon_test(A, B)
    # scipy.stats.wilcoxon(A - B) -> statistic 6.0, pvalue 0.025390625 (exact)
    assert r.statistic == 6.0 and r.pvalue == 0.025390625
    # rank-biserial = (W+ - W-)/(n(n+1)/2): W- = 6, W+ = 55 - 6 = 49 -> 43/55
    assert r.effect_size == pytest.approx(43 / 55)
    d = A - B
    i, j = np.triu_indices(d.size)
    assert r.estimate == pytest.approx(np.median((d[i] + d[j]) / 2))


def test_wilcoxon_interval_inverts_the_scipy_test():
    # Hodges-Lehmann interval: shifts inside it are not rejected by scipy's exact test at 5 %,
    # shifts just outside are.
    d = A - B
    lo, hi = wilcoxon_test(d).confidence_interval(0.95)
    assert lo < np.median(d) < hi
    for mu in np.linspace(lo + 1e-6, hi - 1e-6, 7):
        assert stats.wilcoxon(d - mu, method="exact").pvalue > 0.05
    for mu in (lo - 1e-3, hi + 1e-3):
        assert stats.wilcoxon(d - mu, method="exact").pvalue <= 0.05


def test_wilcoxon_all_zero_is_an_error():
    with pytest.raises(ValueError, match="All 3 paired differences are zero"):
        wilcoxon_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])


def test_mcnemar_matches_statsmodels():
    # 66 items: both pass 30, only x passes 12, only y passes 4, both fail 20
    x = np.array([1] * 30 + [1] * 12 + [0] * 4 + [0] * 20)
    y = np.array([1] * 30 + [0] * 12 + [1] * 4 + [0] * 20)
    r = mcnemar_test(x, y)
    # statsmodels mcnemar([[30, 12], [4, 20]], exact=True).pvalue -> 0.076812744140625
    assert r.pvalue == pytest.approx(0.076812744140625, rel=1e-12)
    assert r.estimate == pytest.approx((12 - 4) / 66) and r.effect_size == 3.0
    c = mcnemar_test(x, y, exact=False)
    # statsmodels mcnemar([[30, 12], [4, 20]], exact=False, correction=True) -> statistic 3.0625, p 0.08011831372763421
    assert c.statistic == pytest.approx(3.0625) and c.pvalue == pytest.approx(0.08011831372763421, rel=1e-10)
    ref = mcnemar([[30, 12], [4, 20]], exact=False, correction=False)
    assert mcnemar_test(x, y, exact=False, correction=False).pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    # one-sided exact: scipy.stats.binomtest(12, 16, alternative='greater').pvalue = 0.0384063720703125
    assert mcnemar_test(x, y, alternative="greater").pvalue == pytest.approx(0.0384063720703125, rel=1e-12)
    with pytest.raises(ValueError, match="two-sided"):
        mcnemar_test(x, y, exact=False, alternative="greater")
    with pytest.raises(ValueError, match="No discordant pairs"):
        mcnemar_test([1, 0, 1], [1, 0, 1])
    with pytest.raises(ValueError, match="pass/fail"):
        mcnemar_test([1, 0, 2], [1, 0, 1])


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_permutation_matches_scipy(alternative):
    ref = stats.permutation_test((A, B), lambda a, b: np.mean(a - b), permutation_type="samples",
                                 alternative=alternative, n_resamples=np.inf)
    r = permutation_test(A, B, alternative=alternative)
    assert r.details["exact"]
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_monte_carlo_permutation_close_to_exact_and_reproducible():
    d = np.concatenate([A - B, (A - B)[:5]])  # 15 pairs -> 2**15 > 9999: Monte Carlo by default
    exact = permutation_test(d, n_resamples=2**15)
    mc1 = permutation_test(d, n_resamples=4000, rng=7)
    mc2 = permutation_test(d, n_resamples=4000, rng=7)
    assert exact.details["exact"] and not mc1.details["exact"]
    assert mc1.pvalue == mc2.pvalue
    assert abs(mc1.pvalue - exact.pvalue) < 4 * np.sqrt(exact.pvalue / 4000) + 1 / 4000


def test_paired_bootstrap_t_matches_scipy_resamples():
    rng = np.random.default_rng(3)
    x = rng.normal(0.6, 0.2, 40)
    y = x - rng.normal(0.05, 0.1, 40)
    d = x - y
    r = paired_bootstrap(x, y, n_resamples=5000, rng=11)
    # scipy.stats.bootstrap draws the same index stream (rng.integers(0, n, (B, n))): its distribution of
    # t* = (mean* - mean) / (sd* / sqrt(n)) gives the bootstrap-t interval and p-value independently
    se = d.std(ddof=1) / np.sqrt(d.size)

    def tstat(s, axis=-1):
        return (s.mean(axis=axis) - d.mean()) / (s.std(axis=axis, ddof=1) / np.sqrt(s.shape[axis]))

    ref = stats.bootstrap((d,), tstat, n_resamples=5000, method="percentile", rng=np.random.default_rng(11),
                          vectorized=True)
    tstar = ref.bootstrap_distribution
    q_lo, q_hi = np.quantile(tstar, [0.025, 0.975])
    lo, hi = r.confidence_interval()
    assert lo == pytest.approx(d.mean() - q_hi * se, rel=1e-12)
    assert hi == pytest.approx(d.mean() - q_lo * se, rel=1e-12)
    t_obs = d.mean() / se
    assert r.pvalue == pytest.approx((np.sum(np.abs(tstar) >= abs(t_obs)) + 1) / 5001, rel=1e-12)
    means = stats.bootstrap((d,), np.mean, n_resamples=5000, method="percentile", rng=np.random.default_rng(11),
                            vectorized=True)
    assert r.details["se"] == pytest.approx(means.standard_error, rel=1e-12)
    assert paired_bootstrap(x, y, n_resamples=500, rng=5) == paired_bootstrap(x, y, n_resamples=500, rng=5)
    # on near-normal differences the bootstrap-t p-value is close to the paired t-test's
    assert r.pvalue == pytest.approx(stats.ttest_rel(x, y).pvalue, abs=0.01)


def _with_w_plus(n: int, w: int) -> np.ndarray:
    """Differences of ranks 1..n whose positive ones sum to exactly w (W+ = w)."""
    signs = -np.ones(n)
    left = w
    for r in range(n, 0, -1):
        if r <= left:
            signs[r - 1], left = 1.0, left - r
    assert left == 0
    return signs * np.arange(1, n + 1)


def test_hodges_lehmann_interval_beyond_50_differences_inverts_the_exact_test():
    """For n = 60 the interval's order statistic k must come from the exact signed-rank null: the
    largest k with P(W+ <= k-1) <= alpha/2. P(W+ <= w) is scipy.stats.wilcoxon(d, alternative='less',
    method='exact').pvalue for differences d with W+ = w; it gives k = 649 at 95 % (the uncorrected
    normal approximation gave 648, one order statistic too wide)."""
    from scipy import stats as st

    cdf = {w: st.wilcoxon(_with_w_plus(60, w), alternative="less", method="exact").pvalue for w in range(640, 660)}
    k = max(w for w, p in cdf.items() if p <= 0.025) + 1
    assert k == 649
    d = np.random.default_rng(5).normal(0.3, 1.0, 60)
    lo, hi = wilcoxon_test(d).confidence_interval(0.95)
    i, j = np.triu_indices(60)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    assert (lo, hi) == (walsh[k - 1], walsh[walsh.size - k])


def test_mcnemar_interval_is_sided_like_the_test():
    # 5 items where x passes and y fails, none the other way, n = 100: the paired difference in pass
    # rates is 0.05 with Wald SE sqrt(b + c - (b - c)^2 / n) / n = sqrt(5 - 0.25) / 100
    x = np.r_[np.ones(5), np.zeros(95)].astype(bool)
    y = np.zeros(100, dtype=bool)
    se = np.sqrt(5 - 25 / 100) / 100
    lo, hi = mcnemar_test(x, y, alternative="greater").confidence_interval(0.95)
    # one-sided: lower bound diff - z_0.95 * se (scipy.stats.norm.ppf(0.95) = 1.6448536269514722)
    assert hi == 1.0 and lo == pytest.approx(0.05 - 1.6448536269514722 * se)
    lo2, hi2 = mcnemar_test(x, y).confidence_interval(0.95)
    assert (lo2, hi2) == pytest.approx((0.05 - 1.959963984540054 * se, 0.05 + 1.959963984540054 * se))
