"""Bootstrap of Bradley–Terry ratings: reproducible, correct replicates, degenerate replicates counted."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from evalkit.ratings import PairCounts, aggregate, bootstrap_bt, fit_bt, leaderboard
from evalkit.ratings._batched import batched_newton as _batched_newton
from evalkit.ratings.leaderboard import DegenerateBootstrapWarning


def synthetic(n_players=8, n_rows=3000, seed=0, items=None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1, 1, n_players)
    a = rng.integers(0, n_players, n_rows)
    b = (a + rng.integers(1, n_players, n_rows)) % n_players
    u = rng.random(n_rows)
    p = expit(theta[a] - theta[b])
    outcome = np.where(u < p - 0.05, 1.0, np.where(u < p + 0.05, 0.5, 0.0))
    out = pd.DataFrame(
        {"player_a": [f"m{k}" for k in a], "player_b": [f"m{k}" for k in b], "outcome": outcome}
    )
    if items:
        out["item"] = [f"q{k}" for k in rng.integers(0, items, n_rows)]
    return out


def test_same_seed_identical():
    data = synthetic(items=50)
    for cluster in (None, "item"):
        one = bootstrap_bt(data, n_resamples=50, rng=7, cluster=cluster)
        two = bootstrap_bt(data, n_resamples=50, rng=7, cluster=cluster)
        three = bootstrap_bt(data, n_resamples=50, rng=8, cluster=cluster)
        assert np.array_equal(one.theta, two.theta)
        assert not np.array_equal(one.theta, three.theta)


def test_point_estimate_is_full_fit_and_sd_matches_sandwich():
    data = synthetic(n_rows=4000)
    boot = bootstrap_bt(data, n_resamples=400, rng=1)
    full = fit_bt(aggregate(data))
    np.testing.assert_array_equal(boot.fit.theta, full.theta)
    # The bootstrap SD of theta estimates the same sampling SD as the sandwich formula
    # (asymptotically equal); with 400 replicates the Monte Carlo error is ~4%.
    ratio = boot.theta.std(axis=0, ddof=1) / full.se("sandwich")
    assert np.all((ratio > 0.85) & (ratio < 1.15))


def test_batched_replicates_equal_single_fits():
    data = synthetic(n_rows=2000)
    fit = fit_bt(aggregate(data))
    c = fit.counts
    rng = np.random.default_rng(3)
    scale = rng.uniform(0.7, 1.3, size=(4, len(c.i)))  # perturbed counts, as a replicate would have
    wi, wj, t = c.wins_i * scale, c.wins_j * scale[::-1], c.ties * scale
    from evalkit.ratings._linalg import pinv_centred

    h_inv = pinv_centred(fit.information, len(fit.theta), singular=True)
    theta, ok = _batched_newton(c.i, c.j, wi + t / 2, wj + t / 2, fit.theta, h_inv, 0.0, 1e-10, 200)
    assert ok.all()
    for r in range(4):
        single = fit_bt(PairCounts(c.players, c.i, c.j, wi[r], wj[r], t[r]))
        np.testing.assert_allclose(theta[r], single.theta, atol=1e-8)


def test_replicate_where_a_model_never_loses_is_counted_not_an_outlier():
    # A beats everyone except for a single loss; in about e^-1 of the replicates that
    # one row is not drawn and A never loses: no finite MLE for that replicate.
    rows = [("A", o, 1.0) for o in "BCD" for _ in range(4)] + [("A", "B", 0.0)]
    rows += [
        (x, y, 1.0) for x in "BCD" for y in "BCD" if x != y for _ in range(10)
    ]  # a solid B-C-D block
    data = pd.DataFrame(rows, columns=["player_a", "player_b", "outcome"])
    boot = bootstrap_bt(data, n_resamples=600, rng=11)
    p_missing = (1 - 1 / len(data)) ** len(data)  # P(a given row is never drawn) ~ e^-1
    assert boot.n_degenerate == pytest.approx(
        600 * p_missing, abs=4 * np.sqrt(600 * p_missing * (1 - p_missing))
    )
    assert boot.never_lose[0] == boot.n_degenerate  # A (index 0) is the one named
    # every replicate is kept (no conditioning on the well-behaved ones): the degenerate ones by the
    # L2-penalised fit, in which A is far above the others but finite
    assert len(boot.theta) == 600 and np.all(np.isfinite(boot.theta))
    elo = boot.elo()
    assert elo.max() < 2500
    gap = boot.theta[:, 0] - boot.theta[:, 1:].max(axis=1)
    assert np.median(gap) > 0 and gap.max() > 3  # the diverging replicates sit in A's upper tail
    dropped = bootstrap_bt(data, n_resamples=600, rng=11, degenerate="drop")
    assert dropped.n_degenerate == boot.n_degenerate and len(dropped.theta) == 600 - boot.n_degenerate
    # 36 % of the replicates are degenerate, more than the 2.5 % tail of a 95 % interval: the
    # leaderboard does not use them and says which interval it gives instead
    with pytest.warns(DegenerateBootstrapWarning, match="robust sandwich"):
        table = leaderboard(data, interval="bootstrap", n_resamples=200, rng=2)
    assert table.attrs["n_degenerate"] > 0 and np.isfinite(table["ci_high"]).all()
    assert table.attrs["interval"].startswith("sandwich 95% Wald") and "HC0" in table.attrs["fallback"]
    plain = leaderboard(data)
    np.testing.assert_allclose(table["ci_high"], plain["ci_high"])


def test_cluster_bootstrap_is_wider_for_duplicated_clusters():
    # Each item's comparisons are repeated 6 times: rows are not independent, so resampling
    # items gives wider intervals than resampling rows (by about sqrt(6)).
    base = synthetic(n_rows=600, seed=4)
    base["item"] = [f"q{k}" for k in range(len(base))]
    data = pd.concat([base] * 6, ignore_index=True)
    rows = bootstrap_bt(data, n_resamples=300, rng=5).theta.std(axis=0)
    items = bootstrap_bt(data, n_resamples=300, rng=5, cluster="item").theta.std(axis=0)
    ratio = np.median(items / rows)
    assert 1.9 < ratio < 3.1  # sqrt(6) = 2.45


def test_fast_existence_check_is_exact():
    # The backbone shortcut must agree with scipy's strongly connected components on every
    # replicate, including sparse ones where many replicates have no MLE.
    from evalkit.ratings.bootstrap import _backbone, _replicates_exist
    from evalkit.ratings.existence import strong_components

    rng = np.random.default_rng(0)
    n = 10
    i, j = np.triu_indices(n, 1)
    names = tuple(str(k) for k in range(n))
    full = PairCounts(names, i, j, np.ones(len(i)), np.ones(len(i)), np.ones(len(i)))
    for ties in ("half", "drop"):
        backbone = _backbone(full, ties)
        for density in (0.08, 0.2, 0.5):
            wi, wj, tt = ((rng.random((60, len(i))) < density) * 1.0 for _ in range(3))
            ok = _replicates_exist(full, backbone, wi, wj, tt, ties)
            ref = [
                strong_components(PairCounts(names, i, j, wi[r], wj[r], tt[r]), ties=ties)[0] == 1
                for r in range(60)
            ]
            np.testing.assert_array_equal(ok, ref)
