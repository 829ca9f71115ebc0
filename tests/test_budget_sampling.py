"""pass@k, best-of-k and composite systems (best of K sessions at B/K, best of groups)."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pandas as pd
import pytest

from evalkit.budget import (
    best_of_groups,
    best_of_k,
    best_of_k_win_probability,
    best_of_sessions,
    best_so_far,
    pass_at_k,
)


def test_pass_at_k_worked_values():
    # Worked values from the issue / Chen et al. (2021) estimator.
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9, abs=1e-12)
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3, abs=1e-12)
    assert pass_at_k(200, 10, 10) == pytest.approx(0.408548, abs=5e-7)


def test_pass_at_k_matches_binomial_definition_vectorised():
    n = np.array([5, 10, 20, 20, 7])
    c = np.array([0, 3, 20, 4, 2])
    k = np.array([2, 4, 5, 20, 7])
    expected = [1 - comb(nn - cc, kk) / comb(nn, kk) for nn, cc, kk in zip(n, c, k, strict=True)]
    np.testing.assert_allclose(pass_at_k(n, c, k), expected, rtol=1e-12)


def test_pass_at_k_errors():
    with pytest.raises(ValueError, match="k must"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="c must"):
        pass_at_k(3, 4, 1)


def test_best_of_k_equals_brute_force_and_pass_at_k():
    scores = np.array([0.3, 0.9, 0.1, 0.5, 0.7, 0.2])
    for k in range(1, 7):
        brute = np.mean([max(c) for c in itertools.combinations(scores, k)])
        assert best_of_k(scores, k) == pytest.approx(brute, rel=1e-12)
    assert best_of_k([0, 0, 0, 1, 1], 3) == pytest.approx(0.9)  # = pass@3 with n=5, c=2


def test_best_of_k_win_probability_closed_form():
    np.testing.assert_allclose(best_of_k_win_probability([1, 4], [1, 1]), [0.5, 0.8])


def _traces():
    gen = np.random.default_rng(0)
    rows = []
    for task in ("t1", "t2"):
        for s in range(5):
            b = np.cumsum(gen.uniform(1, 3, size=6))
            rows.append(pd.DataFrame({"system": "p1", "task": task, "session": f"s{s}", "budget": b,
                                      "score": gen.random(6)}))
    return pd.concat(rows, ignore_index=True)


def test_best_of_sessions_is_best_member_at_a_kth_of_the_budget():
    tr = _traces()
    with pytest.warns(UserWarning, match="Dropped 2 session"):  # 5 sessions -> 2 groups of 2
        comp = best_of_sessions(tr, 2, name="pass@2")
    assert set(comp["system"]) == {"pass@2"}
    assert comp.groupby("task")["session"].nunique().tolist() == [2, 2]
    grid = np.array([2.0, 5.0, 10.0, 20.0])
    members = best_so_far(tr, grid / 2)  # members at B/2
    composite = best_so_far(comp, grid)
    v = members.values
    # sessions are s0..s4 per task in order; group 0 = {s0, s1}, group 1 = {s2, s3}
    for ti in range(2):
        for gi in range(2):
            expect = np.fmax(v[ti * 5 + 2 * gi], v[ti * 5 + 2 * gi + 1])
            np.testing.assert_array_equal(composite.values[ti * 2 + gi], expect)


def test_best_of_groups_from_column_scales_by_group_size():
    tr = pd.DataFrame({"system": "g2", "task": "t", "session": ["a", "b", "c"],
                       "budget": [1.0, 2.0, 4.0], "score": [0.1, 0.2, 0.3], "grp": ["x", "x", "y"]})
    out = best_of_groups(tr, "grp", name="pass@2 group@2")
    got = sorted(zip(out["session"], out["budget"], out["members"], out["score"], strict=True))
    # group x has two members (budgets doubled), group y one (budget unchanged)
    assert got == [("x", 2.0, 2, 0.1), ("x", 4.0, 2, 0.2), ("y", 4.0, 1, 0.3)]
    assert set(out["system"]) == {"pass@2 group@2"}


def test_best_of_sessions_rejects_bad_k():
    with pytest.raises(ValueError, match="k must"):
        best_of_sessions(_traces(), 0)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=7), st.data())
def test_best_of_k_property_brute_force(scores, data):
    k = data.draw(st.integers(1, len(scores)))
    brute = np.mean([max(c) for c in itertools.combinations(scores, k)])
    assert best_of_k(scores, k) == pytest.approx(brute, rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.data())
def test_pass_at_k_monotone_in_k_and_bounded(n, data):
    c = data.draw(st.integers(0, n))
    vals = pass_at_k(n, c, np.arange(1, n + 1))
    assert np.all((vals >= 0) & (vals <= 1 + 1e-12))
    assert np.all(np.diff(vals) >= -1e-12)
    assert vals[0] == pytest.approx(c / n)  # pass@1 is the plain success rate


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.floats(-5, 5)), min_size=1, max_size=12))
def test_best_so_far_is_the_prefix_max(subs):
    subs = sorted(subs, key=lambda x: x[0])  # budgets are cumulative
    tr = pd.DataFrame({"system": "a", "task": "t", "session": "s",
                       "budget": [b for b, _ in subs], "score": [v for _, v in subs]})
    grid = np.array([1.0, 10.0, 50.0, 100.0])
    got = best_so_far(tr, grid).values[0]
    for g, v in zip(grid, got, strict=True):
        seen = [s for b, s in subs if b <= g]
        assert (np.isnan(v) and not seen) or v == max(seen)
