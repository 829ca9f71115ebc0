"""Betting confidence sequences: tensorzero's own numbers, time-uniform validity, the paired comparison."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from evalkit.stats.sequential import (
    BettingCS,
    betting_confidence_sequence,
    fixed_n_equal_power,
    sequential_comparison,
)

DATA = Path(__file__).parent / "data" / "tensorzero"


def test_tensorzero_known_value_test():
    # tensorzero evaluations/src/betting_confidence_sequences.rs, test_known_values_full_confidence_sequence
    # (at 552cb47^): one batch of 10, alpha 0.05, resolution 101 -> [0.36, 0.86], variance 0.031827712868268
    cs = betting_confidence_sequence([0.5, 0.9, 0.6, 0.8, 0.7, 0.75, 0.65, 0.72, 0.68, 0.7], grid=101,
                                     confidence_level=0.95)
    assert cs.lower_raw[-1] == pytest.approx(0.36, abs=1e-12)
    assert cs.upper_raw[-1] == pytest.approx(0.86, abs=1e-12)
    assert abs(cs.variance_regularized - 0.031827712868268) < 1e-12
    assert abs(cs.mean_regularized - 7.5 / 11) < 1e-12
    assert cs.estimate[-1] == pytest.approx(0.7, abs=1e-12)


def test_tensorzero_known_bets_and_wealth():
    # test_known_values_compute_bet and test_known_values_single_observation_wealth_at_endpoints
    from evalkit.stats.sequential import _bets

    assert abs(_bets(np.array([1.0]), np.array([0.25]), 0.05)[0] - 6.524984655851606) < 1e-10
    assert abs(_bets(np.array([2.0]), np.array([0.12625]), 0.05)[0] - 5.157144640499054) < 1e-10
    st = BettingCS.start(grid=101)
    st.update([0.5])
    assert abs(np.exp(st.log_wealth_upper[0]) - 4.262492327925803) < 1e-9
    assert abs(np.exp(st.log_wealth_lower[0]) - 0.75) < 1e-12
    assert abs(np.exp(st.log_wealth_upper[-1]) - 0.75) < 1e-12


def test_matches_tensorzero_binary_on_many_sequences():
    """Every bound, estimate and variance after every batch equals tensorzero's compiled Rust code
    (tests/data/tensorzero/make_reference.py ran it on these inputs), batch-wise intersection as it does."""
    ref = json.loads((DATA / "betting_cs_reference.json").read_text())
    assert len(ref) == 10
    for case in ref:
        alpha = float(np.float32(case["alpha"]))  # tensorzero keeps alpha as f32
        st = BettingCS.start(grid=case["resolution"])
        st.alpha = alpha
        x, b = np.array(case["x"]), case["batch"]
        lo_prev, hi_prev = 0.0, 1.0
        for k, expected in enumerate(case["after_batch"]):
            path = st.update(x[k * b:(k + 1) * b])
            est = path["estimate"][-1]
            lo_prev = min(max(path["lower_raw"][-1], lo_prev), est)
            hi_prev = max(min(path["upper_raw"][-1], hi_prev), est)
            got = [lo_prev, hi_prev, est, st.variance_regularized]
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        if b == 1:  # per-observation updates: the running intersection is the reported sequence
            cs = betting_confidence_sequence(x, grid=case["resolution"], confidence_level=1 - alpha)
            np.testing.assert_allclose(cs.lower, [s[0] for s in case["after_batch"]], atol=1e-12)


def test_incremental_equals_batch():
    x = np.random.default_rng(1).beta(2, 3, 50)
    whole = betting_confidence_sequence(x)
    st = BettingCS.start()
    lows = np.concatenate([st.update(x[:17])["lower"], st.update(x[17:])["lower"]])
    np.testing.assert_array_equal(lows, whole.lower)


def test_bounds_rescale_and_validation():
    x = np.array([-1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    cs = betting_confidence_sequence(x, bounds=(-1, 1), grid=201)
    cs01 = betting_confidence_sequence((x + 1) / 2, grid=201)
    np.testing.assert_allclose(cs.upper, 2 * cs01.upper - 1)
    with pytest.raises(ValueError, match="outside bounds"):
        betting_confidence_sequence([0.2, 1.5])
    with pytest.raises(ValueError, match="at least 2 points"):
        betting_confidence_sequence([0.2], grid=1)


def test_time_uniform_coverage_small_simulation():
    # every look of 200 sequences of 150 Bernoulli(0.3): the running intersection misses 0.3 at most ~alpha
    gen = np.random.default_rng(5)
    miss = 0
    for _ in range(200):
        cs = betting_confidence_sequence(gen.binomial(1, 0.3, 150).astype(float), grid=201)
        miss += bool(((cs.lower > 0.3) | (cs.upper < 0.3)).any())
    assert miss / 200 <= 0.05


def test_sequential_comparison_settles_and_plans():
    gen = np.random.default_rng(3)
    a = gen.binomial(1, 0.4, 300).astype(float)
    b = np.where(gen.random(300) < 0.35, 1.0, a)  # b fixes 35 % of a's failures
    res = sequential_comparison(a, b, rng=7, power_boot=40, look_every=10)
    assert res.settled_at is not None and res.direction == "b > a"
    assert res.settled_at % 10 == 0 or res.settled_at == 300
    assert res.seed == 7 and sorted(res.order.tolist()) == list(range(300))
    assert res.plan["n_fixed"] is not None and 0 < res.plan["power"] <= 1
    text = res.statement()
    assert "Settled at task" in text and "seed 7" in text and "fixed-n paired t-test" in text
    # same seed, same order and answer
    again = sequential_comparison(a, b, rng=7, power_boot=40, look_every=10)
    assert again.settled_at == res.settled_at and np.array_equal(again.order, res.order)


def test_file_order_warns():
    a, b = np.zeros(10), np.ones(10)
    with pytest.warns(UserWarning, match="file order"):
        res = sequential_comparison(a, b, order="file", plan=False)
    assert res.order_kind == "file" and res.seed is None
    with pytest.raises(ValueError, match="rng"):
        sequential_comparison(a, b)


def test_fixed_n_equal_power_uses_statsmodels():
    from statsmodels.stats.power import TTestPower

    d = np.random.default_rng(0).choice([-1.0, 0.0, 1.0], 120, p=[0.15, 0.5, 0.35])
    info = fixed_n_equal_power(d, bounds=(-1, 1), n_boot=30, rng=1)
    expect = TTestPower().solve_power(effect_size=abs(d.mean() / d.std(ddof=1)), alpha=0.05,
                                      power=min(info["power"], 0.999), alternative="two-sided")
    assert info["n_fixed"] == int(np.ceil(expect))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        none = fixed_n_equal_power(np.zeros(10), bounds=(-1, 1), n_boot=5)
    assert none["n_fixed"] is None and "effect is 0" in none["note"]
