"""Properties that must hold for any input (hypothesis), and the panel-agreement count."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalkit.stats import (
    adjust_pvalues,
    panel_agreement,
    sign_test,
    welch_ttest,
    wilson_interval,
)

finite = st.floats(-100, 100, allow_nan=False, allow_infinity=False)
pvals = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(pvals, st.sampled_from(["holm", "bh", "bonferroni"]))
def test_adjusted_pvalues_are_valid_and_not_smaller(p, method):
    r = adjust_pvalues(p, method=method)
    adj = np.array(r.adjusted)
    assert np.all(adj >= np.array(p) - 1e-15) and np.all(adj <= 1)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in the raw p-values


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=25))
def test_sign_test_is_symmetric_and_equals_binomtest(pairs):
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    if np.all(x == y):
        with pytest.raises(ValueError, match="ties"):
            sign_test(x, y)
        return
    r, s = sign_test(x, y), sign_test(y, x)
    assert r.pvalue == pytest.approx(s.pvalue, rel=1e-12)
    assert (r.wins, r.losses) == (s.losses, s.wins)
    assert r.pvalue == pytest.approx(stats.binomtest(r.wins, r.wins + r.losses).pvalue, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(finite, min_size=2, max_size=15), st.lists(finite, min_size=2, max_size=15))
def test_welch_matches_scipy_whenever_defined(x, y):
    if np.var(x) == 0 and np.var(y) == 0:
        with pytest.raises(ValueError, match="zero variance"):
            welch_ttest(x, y)
        return
    ref = stats.ttest_ind(x, y, equal_var=False)
    r = welch_ttest(x, y)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-7, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 500), st.data(), st.floats(0.5, 0.999))
def test_wilson_interval_contains_estimate(n, data, level):
    k = data.draw(st.integers(0, n))
    r = wilson_interval(k, n, confidence_level=level)
    lo, hi = r.confidence_interval()
    assert 0 <= lo <= r.estimate <= hi <= 1


def test_panel_agreement_counts_strict_majorities():
    ev = ["a", "b", "a", "b", "a", "a"]
    panel = pd.DataFrame({"j1": ["a", "b", "b", "a", "a", None], "j2": ["a", "a", "b", "b", "b", "a"],
                          "j3": ["a", "b", "b", None, "a", "b"]})
    r = panel_agreement(ev, panel)
    # majorities by hand: a, b, b, (tie), a, (tie) -> evaluator agrees on items 0, 1, 4 of the 4 decided
    assert (r.details["agree"], r.n, r.details["no_majority"]) == (3, 4, 2)
    assert r.estimate == 0.75
    assert r.details["per_judge"] == {"j1": 3 / 5, "j2": 3 / 6, "j3": 3 / 5}
    with pytest.raises(ValueError, match="items"):
        panel_agreement(ev[:-1], panel)
