"""Elo per budget: closed forms, known-curve recovery, ties, bootstrap, slopes and inflection."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evalkit.budget import (
    TiesWarning,
    allocate_sessions,
    best_so_far,
    count_games,
    elo_curves,
    geometric_grid,
    inflection_point,
    local_slopes,
    reference_line,
    split_advantage,
)
from evalkit.budget._fit import fit_elo

ELO = 400 / np.log(10)


def gumbel_traces(r_fn, budgets, n_sessions, n_tasks, seed, system="A"):
    """Sessions whose score at budget b is ln theta(b) + one Gumbel offset per session.

    Then P(session s at b1 beats s' at b2) = theta(b1) / (theta(b1) + theta(b2)) exactly, so
    the true self-Elo curve is 1000 + r(b) - r(b0).
    """
    gen = np.random.default_rng(seed)
    ln_theta = np.asarray(r_fn(budgets)) / ELO
    off = gen.gumbel(size=(n_tasks, n_sessions)) + gen.normal(size=(n_tasks, 1))  # task difficulty
    t, s, b = np.meshgrid(np.arange(n_tasks), np.arange(n_sessions), np.arange(budgets.size), indexing="ij")
    return pd.DataFrame({
        "system": system, "task": t.ravel(), "session": s.ravel(),
        "budget": budgets[b].ravel(), "score": (ln_theta[b] + off[t, s]).ravel(),
    })


def kinked(b):
    """600 Elo/decade up to 3e6, 200 after (the issue's designed curve)."""
    b = np.asarray(b, dtype=float)
    return np.where(b <= 3e6, 600 * np.log10(b / 1e5), 600 * np.log10(30) + 200 * np.log10(b / 3e6))


# ---------------------------------------------------------------- closed forms

def test_best_of_n_beats_best_of_m_closed_form_monte_carlo():
    # i.i.d. uniform attempts, one per unit budget; best-so-far at n = best of n attempts.
    gen = np.random.default_rng(1)
    n_tasks, n_sess, grid = 2000, 25, np.array([1.0, 2.0, 3.0, 5.0])
    x = gen.random((n_tasks, n_sess, 5))
    t, s, a = np.meshgrid(np.arange(n_tasks), np.arange(n_sess), np.arange(5), indexing="ij")
    tr = pd.DataFrame({"system": "A", "task": t.ravel(), "session": s.ravel(),
                       "budget": (a + 1.0).ravel(), "score": x.ravel()})
    g = count_games(best_so_far(tr, grid))
    w = g.wins[0]
    for p, q in [(0, 1), (0, 2), (1, 3), (0, 3), (2, 3)]:
        n, m = grid[p], grid[q]
        share = w[p, q] / (w[p, q] + w[q, p])
        assert abs(share - n / (n + m)) < 0.005, (n, m, share)  # closed form n/(n+m)
    assert g.ties[0].sum() == 0


def test_exact_expected_outcomes_on_doubling_grid_give_120_41_per_doubling():
    n = 2.0 ** np.arange(8)  # best of 1, 2, 4, ..., 128
    games = 1000.0
    wins = games * n[:, None] / (n[:, None] + n[None, :])  # E[wins of p over q] = n/(n+m)
    np.fill_diagonal(wins, 0.0)
    elo, converged = fit_elo(wins, np.zeros_like(wins), anchors=np.arange(8))
    assert converged
    np.testing.assert_allclose(np.diff(elo), 400 * np.log10(2), atol=0.1)  # 120.41
    assert abs(np.diff(elo)[0] - 120.41) < 0.1
    slopes = local_slopes(n, elo)
    np.testing.assert_allclose(slopes, 400.0, atol=0.1)


def test_reference_line_is_400_per_decade_from_anchor():
    b = np.array([1e5, 1e6, 1e7])
    np.testing.assert_allclose(reference_line(b, b0=1e5), [1000, 1400, 1800])


# ---------------------------------------------------------------- ties

def _pass_fail_counts(p=0.3, n_hi=10, games=1e6):
    q_hi = 1 - (1 - p) ** n_hi
    win_hi = q_hi * (1 - p)  # best-of-10 passes, best-of-1 fails
    win_lo = p * (1 - q_hi)
    tie = 1 - win_hi - win_lo
    wins = np.array([[0.0, win_lo], [win_hi, 0.0]]) * games
    ties = np.array([[0.0, tie], [tie, 0.0]]) * games
    return wins, ties


def test_pass_fail_best_of_10_vs_1_is_282_8_elo_not_400():
    wins, ties = _pass_fail_counts()
    elo, _ = fit_elo(wins, ties, anchors=np.array([0]))
    # closed form with ties = half a win: 400 log10(P / (1 - P)), P = win_hi + tie / 2
    assert abs(elo[1] - elo[0] - 282.8) < 0.1


def test_pass_fail_curve_recovers_282_8_and_warns_about_ties():
    gen = np.random.default_rng(3)
    n_tasks, n_sess = 200, 20
    x = (gen.random((n_tasks, n_sess, 10)) < 0.3).astype(float)
    t, s, a = np.meshgrid(np.arange(n_tasks), np.arange(n_sess), np.arange(10), indexing="ij")
    tr = pd.DataFrame({"system": "A", "task": t.ravel(), "session": s.ravel(),
                       "budget": (a + 1.0).ravel(), "score": x.ravel()})
    with pytest.warns(TiesWarning, match="400-Elo-per-decade"):
        res = elo_curves(tr, budgets=np.array([1.0, 10.0]), n_resamples=0)
    gap = res.curve["elo"].iat[1] - res.curve["elo"].iat[0]
    assert abs(gap - 282.8) < 10  # Monte Carlo around the closed form 282.8
    assert res.tie_share["A"] > 0.25


def test_continuous_scores_do_not_warn():
    grid = geometric_grid(1e5, 1e6, ratio=2)
    tr = gumbel_traces(lambda b: 400 * np.log10(b / 1e5), grid, 5, 10, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TiesWarning)
        elo_curves(tr, budgets=grid, n_resamples=0)


# ---------------------------------------------------------------- known-curve recovery

@pytest.fixture(scope="module")
def kinked_result():
    grid = geometric_grid(1e5, 1e8, ratio=1.5)
    tr = gumbel_traces(kinked, grid, 20, 30, 7)
    return grid, elo_curves(tr, budgets=grid, n_resamples=60, rng=11)


def test_known_curve_slopes_within_15_percent(kinked_result):
    grid, res = kinked_result
    inf = inflection_point(res)
    slope = inf.slopes["slope"].to_numpy()
    logb = np.log10(grid)
    lo = logb + 2 * np.log10(1.5) < np.log10(3e6)  # window entirely before the kink
    hi = logb - 2 * np.log10(1.5) > np.log10(3e6)  # entirely after
    assert lo.sum() >= 5 and hi.sum() >= 5
    np.testing.assert_array_less(np.abs(slope[lo] / 600 - 1), 0.15)
    np.testing.assert_array_less(np.abs(slope[hi] / 200 - 1), 0.15)


def test_known_curve_inflection_within_two_grid_steps(kinked_result):
    grid, res = kinked_result
    inf = inflection_point(res)
    assert inf.status == "crossed"
    steps = abs(np.log(inf.b_inf / 3e6) / np.log(1.5))
    assert steps <= 2, inf.b_inf
    assert inf.ci_low <= inf.b_inf <= inf.ci_high
    assert 0 < inf.ci_low and inf.ci_high < grid[-1]


def test_known_curve_elo_and_bands(kinked_result):
    grid, res = kinked_result
    c = res.curve
    assert res.anchors == {"A": grid[0]}
    assert res.converged == {"A": True} and res.failed == {"A": 0}
    assert c["elo"].iat[0] == 1000.0
    truth = 1000 + kinked(grid)
    # The bootstrap bands cover the designed curve at most checkpoints.
    covered = (c["ci_low"] <= truth + 1e-9) & (truth - 1e-9 <= c["ci_high"])
    assert covered.mean() >= 0.8
    assert (c["ci_low"] <= c["elo"]).all() and (c["elo"] <= c["ci_high"]).all()
    assert list(c.columns[:6]) == ["system", "budget", "elo", "ci_low", "ci_high", "n_games"]


def test_trailing_window_lags_the_centred_one(kinked_result):
    grid, res = kinked_result
    cen = inflection_point(res, align="centred").b_inf
    trail = inflection_point(res, align="trailing").b_inf
    assert trail > cen  # a trailing window sees the steep part for longer


# ---------------------------------------------------------------- bootstrap, joint, split

def test_bootstrap_is_seeded_and_bit_identical():
    grid = geometric_grid(1e5, 1e6, ratio=2)
    tr = gumbel_traces(lambda b: 400 * np.log10(b / 1e5), grid, 4, 6, 2)
    a = elo_curves(tr, budgets=grid, n_resamples=20, rng=5)
    b = elo_curves(tr, budgets=grid, n_resamples=20, rng=5)
    c = elo_curves(tr, budgets=grid, n_resamples=20, rng=6)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    assert not np.array_equal(a.replicates, c.replicates)


def test_joint_split_advantage_matches_gumbel_max_identity():
    # r(b) = 200 log10 b: the best of 4 sessions at B/4 gains 400 log10 4 - 200 log10 4 = 120.4.
    grid = geometric_grid(1e5, 1e7, ratio=1.5)
    tr = gumbel_traces(lambda b: 200 * np.log10(b / 1e5), grid, 20, 30, 4)
    res = elo_curves(tr, budgets=grid, n_resamples=20, rng=1)
    adv = split_advantage(res, system="A", budget=grid[-1], k=4)
    assert abs(adv.statistic - 200 * np.log10(4)) < 25
    assert adv.ci_low < adv.statistic < adv.ci_high


def test_joint_mode_two_systems_offset():
    grid = geometric_grid(1e5, 1e6, ratio=2)
    a = gumbel_traces(lambda b: 400 * np.log10(b / 1e5), grid, 10, 20, 8, system="a")
    b = gumbel_traces(lambda b: 200 + 400 * np.log10(b / 1e5), grid, 10, 20, 9, system="b")
    # within_session=True: this test was written for (and its seeds chosen under) the former joint default
    res = elo_curves(pd.concat([a, b]), budgets=grid, mode="joint", n_resamples=0, within_session=True)
    c = res.curve
    gap = c.loc[c.system == "b", "elo"].to_numpy() - c.loc[c.system == "a", "elo"].to_numpy()
    # Different tasks' offsets make this noisy; the designed gap is 200 at every budget.
    assert abs(gap.mean() - 200) < 40
    assert res.anchors == {"a": grid[0], "b": grid[0]}


def test_allocation_rule_paper_case():
    # Paper (FrontierCS Polyomino, Kimi): b_inf = 38M -> K = 3 at B = 100M.
    assert allocate_sessions(100e6, 38e6) == 3
    assert allocate_sessions(10e6, 38e6) == 1
    with pytest.raises(ValueError, match="b_inf"):
        allocate_sessions(1e6, float("nan"))


# ---------------------------------------------------------------- grid and missing values

def test_best_so_far_prefix_max_and_missing_before_first_submission():
    tr = pd.DataFrame({
        "system": "A", "task": "t", "session": ["s1"] * 3 + ["s2"],
        "budget": [2.0, 5.0, 9.0, 1.0], "score": [0.5, 0.2, 0.9, 0.1],
    })
    ck = best_so_far(tr, np.array([1.0, 2.0, 4.0, 8.0, 16.0]))
    np.testing.assert_array_equal(ck.values[0], [np.nan, 0.5, 0.5, 0.5, 0.9])
    np.testing.assert_array_equal(ck.values[1], [0.1] * 5)
    low = best_so_far(tr, np.array([1.0, 2.0, 16.0]), higher_is_better=False)
    np.testing.assert_array_equal(low.values[0], [np.nan, -0.5, -0.2])


def test_missing_checkpoint_drop_or_lose():
    tr = pd.DataFrame({"system": "A", "task": "t", "session": ["s1", "s2"],
                       "budget": [2.0, 1.0], "score": [0.5, 0.1]})
    ck = best_so_far(tr, np.array([1.0, 2.0]))
    # s1: [nan, 0.5], s2: [0.1, 0.1]; cross-session games only.
    drop = count_games(ck, missing="drop").wins[0]
    lose = count_games(ck, missing="lose").wins[0]
    # drop: only s1@2 (0.5) vs s2@1 (0.1): player 1 beats player 0 once.
    np.testing.assert_array_equal(drop, [[0, 0], [1, 0]])
    # lose: additionally s1@1 (no value) loses to s2@2 (0.1): player 1 beats player 0 again.
    np.testing.assert_array_equal(lose, [[0, 0], [2, 0]])


def test_within_session_games_only_when_asked():
    tr = pd.DataFrame({"system": "A", "task": "t", "session": ["s1", "s1"],
                       "budget": [1.0, 2.0], "score": [0.1, 0.5]})
    ck = best_so_far(tr, np.array([1.0, 2.0]))
    assert count_games(ck).wins[0].sum() == 0
    np.testing.assert_array_equal(count_games(ck, within_session=True).wins[0], [[0, 0], [1, 0]])


def test_geometric_grid_and_errors():
    np.testing.assert_allclose(geometric_grid(1e5, 1e5 * 1.5**18), 1e5 * 1.5 ** np.arange(19))
    with pytest.raises(ValueError, match="ratio"):
        geometric_grid(1, 10, ratio=1.0)
    with pytest.raises(ValueError, match="mode"):
        elo_curves(pd.DataFrame({"system": ["a"], "session": [1], "budget": [1], "score": [1]}), mode="both")


def test_composite_pass_at_4_on_the_joint_scale_matches_the_split_identity():
    # Sessions below the reference (200 Elo/decade). The best of 4 independent sessions at
    # B/4 rates r(B/4) + 400 log10 4 (max of 4 Gumbels = Gumbel + ln 4), i.e.
    # 200 log10 4 = 120.4 Elo above one session of B.
    from evalkit.budget import best_of_sessions

    grid = geometric_grid(1e5, 1e5 * 2**8, ratio=2)
    tr = gumbel_traces(lambda b: 200 * np.log10(b / 1e5), grid, 40, 30, 12, system="pass@1")
    solo = tr.loc[tr["session"] < 20]
    members = tr.loc[tr["session"] >= 20]  # independent sessions for the composite
    p4 = best_of_sessions(members, 4, name="pass@4")
    res = elo_curves(pd.concat([solo, p4]), budgets=grid, mode="joint", within_session=False, n_resamples=0)
    c = res.curve.set_index(["system", "budget"])["elo"]
    gap = c[("pass@4", grid[-1])] - c[("pass@1", grid[-1])]
    assert abs(gap - 200 * np.log10(4)) < 30
    assert np.isnan(c[("pass@4", grid[0])])  # before the composite's first submission (4 x 1e5)


def test_prior_of_21_pseudo_games_pulls_400_down_to_about_305():
    # The notes (second-hand on the paper): "lambda = 21 symmetric pseudo-games per pair ...
    # pulls a true 400/decade slope down to about 305". The paper's study has 14 tasks x 5
    # sessions, i.e. 14 * 5 * 4 = 280 cross-session games per pair of checkpoints; exact
    # expected outcomes n/(n+m) on its 1.5x grid over three decades (19 checkpoints).
    n = 1.5 ** np.arange(19)
    wins = 280 * n[:, None] / (n[:, None] + n[None, :])
    np.fill_diagonal(wins, 0.0)
    elo0, _ = fit_elo(wins, np.zeros_like(wins), anchors=np.arange(19))
    elo21, _ = fit_elo(wins, np.zeros_like(wins), anchors=np.arange(19), prior=21.0)
    per_decade = lambda e: (e[-1] - e[0]) / np.log10(n[-1])  # noqa: E731
    assert per_decade(elo0) == pytest.approx(400.0, abs=1e-6)
    assert per_decade(elo21) == pytest.approx(305, abs=2)


def test_split_table_picks_the_allocation_rule_k_on_a_kinked_curve(kinked_result):
    # Designed curve: 600/decade to 3e6, 200 after. At B = 3e7 one session gains
    # 600 log10(30) + 200 log10(10) over 1e5; k sessions at B/k gain 400 log10 k on top of
    # r(B/k). The analytic optimum over integer k is near B / b_inf = 10.
    from evalkit.budget import split_table

    grid, res = kinked_result
    tab = split_table(res, system="A", budget=3e7, ks=(1, 2, 5, 10, 20, 50))
    analytic = [kinked(3e7 / k) + 400 * np.log10(k) - kinked(3e7) for k in tab["k"]]
    np.testing.assert_allclose(tab["advantage"], analytic, atol=60)
    assert tab["advantage"].iat[0] == 0.0
    assert tab.loc[tab["advantage"].idxmax(), "k"] == 10
    assert allocate_sessions(3e7, 3e6) == 10


def test_bootstrap_replicates_keep_the_point_estimates_anchor():
    """Only one session has a value at the first checkpoint, so many replicates lose it: they must
    be counted as failed, not re-anchored at a later checkpoint (which would mix scales in the bands)."""
    g = np.random.default_rng(0)
    rows = []
    for t in range(6):
        for s in range(4):
            b = 1.0 if (t == 0 and s == 0) else 3.0
            for q in range(8):
                rows.append(("A", f"t{t}", f"s{s}", b, float(g.normal(q, 1.5))))
                b *= 1.6
    tr = pd.DataFrame(rows, columns=["system", "task", "session", "budget", "score"])
    budgets = np.array([1, 1.5, 2.25, 3.375, 5.06, 7.6, 11.4, 17, 25.6, 38])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = elo_curves(tr, mode="self", budgets=budgets, n_resamples=200, rng=1)
    rep = res.replicates
    ok = np.isfinite(rep).any(axis=1)
    assert np.all(rep[ok, 0] == 1000.0)  # every kept replicate is anchored where the estimate is
    assert res.failed["A"] == int((~ok).sum()) > 0


# ---------------------------------------------------------------- issue 12, item 8

def test_joint_elo_leaves_out_same_session_games_by_default():
    grid = geometric_grid(1e5, 1e6, ratio=2)
    a = gumbel_traces(lambda b: 400 * np.log10(b / 1e5), grid, 5, 8, 8, system="a")
    b = gumbel_traces(lambda b: 300 * np.log10(b / 1e5), grid, 5, 8, 9, system="b")
    tr = pd.concat([a, b])
    default = elo_curves(tr, budgets=grid, mode="joint", n_resamples=0)
    without = elo_curves(tr, budgets=grid, mode="joint", within_session=False, n_resamples=0)
    within = elo_curves(tr, budgets=grid, mode="joint", within_session=True, n_resamples=0)
    np.testing.assert_array_equal(default.curve["elo"], without.curve["elo"])
    # each of the 2 x 8 x 5 sessions plays its own other 4 checkpoints once per checkpoint: 80 x 5 x 4 more games
    extra = within.curve["n_games"].sum() - default.curve["n_games"].sum()
    assert extra == 2 * 8 * 5 * grid.size * (grid.size - 1)
    assert default.options["within_session"] is False


def test_inflection_point_not_distinguishable_from_the_reference():
    # A true slope of exactly 400 Elo/decade with few sessions: every local slope's interval covers 400, so no
    # crossing is reported (issue 12: otherwise noise picks one).
    grid = geometric_grid(1e5, 1e7, ratio=1.5)
    tr = gumbel_traces(lambda b: 400 * np.log10(b / 1e5), grid, 4, 6, 3)
    inf = inflection_point(elo_curves(tr, budgets=grid, n_resamples=100, rng=2))
    s = inf.slopes.dropna()
    assert ((s["ci_low"] <= 400) & (400 <= s["ci_high"])).all()
    assert inf.status == "indistinguishable" and np.isnan(inf.b_inf)
    assert "not distinguishable from the reference" in inf.note
