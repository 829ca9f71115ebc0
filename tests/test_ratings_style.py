"""Position-adjusted and style-controlled Bradley–Terry, pinned to statsmodels; rank intervals."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from evalkit.io import read_comparisons
from evalkit.ratings import bootstrap_bt, fit_bt
from evalkit.ratings.counts import aggregate, encode_players
from evalkit.ratings.position import fit_position_bt, position_effect, position_leaderboard
from evalkit.ratings.ranks import fastchat_rank, pairwise_dominance, rank_intervals, tie_groups
from evalkit.ratings.style import fit_style_bt, length_feature

LLMFAO = "tests/data/llmfao"


def _design(frame, extra=()):
    """Dense reference-coded +1/-1 design (first player dropped) plus extra columns, as statsmodels sees it."""
    players, a, b = encode_players(frame["player_a"], frame["player_b"])
    x = np.zeros((len(frame), len(players)))
    x[np.arange(len(frame)), a] = 1.0
    x[np.arange(len(frame)), b] -= 1.0
    return np.column_stack([x[:, 1:], *extra]), len(players)


def _centred(ref_coded):
    th = np.r_[0.0, ref_coded]
    return th - th.mean()


@pytest.mark.parametrize("judge", ["gpt3", "gpt4"])
def test_position_fit_equals_statsmodels_logit(judge):
    frame, _ = read_comparisons(f"{LLMFAO}/{judge}-comparisons.csv")
    fit = fit_position_bt(frame)
    x, n = _design(frame, [np.ones(len(frame))])
    y = frame["outcome"].to_numpy()
    # statsmodels Logit with a position column (ties as the fractional response 0.5), HC0 sandwich
    ref = sm.Logit(y, x).fit(disp=0, method="newton", tol=1e-12, maxiter=100, cov_type="HC0")
    np.testing.assert_allclose(fit.theta, _centred(ref.params[: n - 1]), atol=1e-6)
    assert abs(fit.coef["player_a"] - ref.params[-1]) < 1e-6
    assert abs(fit.se()[-1] - ref.bse[-1]) < 1e-6
    # reference-coded sandwich of the strengths too
    np.testing.assert_allclose(np.sqrt(np.diag(fit.logit.covariance()))[: n - 1], ref.bse[: n - 1], atol=1e-6)
    hess = sm.Logit(y, x).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
    assert abs(fit_position_bt(frame, kind="hessian").se()[-1] - hess.bse[-1]) < 1e-6


def test_position_effect_direction_on_llmfao():
    # the GPT-3.5 judge favours the left answer, GPT-4 the right one (audit of issue 12)
    g3 = position_effect(fit_position_bt(read_comparisons(f"{LLMFAO}/gpt3-comparisons.csv")[0]))
    g4 = position_effect(fit_position_bt(read_comparisons(f"{LLMFAO}/gpt4-comparisons.csv")[0]))
    assert g3.gamma > 0 and g3.pvalue < 1e-20 and g3.odds_ratio > 1.5
    assert g4.gamma < 0 and g4.pvalue < 1e-3
    lo, hi = g3.confidence_interval()
    assert lo < g3.gamma < hi


def test_position_leaderboard_is_invariant_to_swapping_sides():
    # Ratings adjusted for position do not depend on the side a model was shown on: showing every game with sides
    # swapped (outcome flipped) leaves the strengths unchanged and flips gamma.
    frame, _ = read_comparisons(f"{LLMFAO}/gpt3-comparisons.csv")
    swapped = frame.assign(player_a=frame["player_b"], player_b=frame["player_a"], outcome=1 - frame["outcome"])
    f1, f2 = fit_position_bt(frame), fit_position_bt(swapped)
    np.testing.assert_allclose(f1.theta, f2.theta, atol=1e-9)
    assert abs(f1.coef["player_a"] + f2.coef["player_a"]) < 1e-9
    table = position_leaderboard(frame)
    assert table["rank"].tolist() == list(range(1, len(table) + 1)) and "left" in table.attrs["position"]


def _simulated(seed=1, n=6, rows=800, clusters=25):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, rows)
    b = (a + rng.integers(1, n, rows)) % n
    z1, z2 = rng.normal(size=rows), rng.normal(size=rows)
    theta = np.linspace(-1, 1, n)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b] + 0.5 * z1 - 0.2 * z2)))
    u = rng.random(rows)
    y = np.where(u < 0.9 * p, 1.0, np.where(u < 0.9 * p + 0.1, 0.5, 0.0))
    names = [f"m{k}" for k in range(n)]
    return pd.DataFrame({"player_a": [names[k] for k in a], "player_b": [names[k] for k in b], "outcome": y,
                         "weight": 1.0, "len": z1, "fmt": z2, "item": rng.integers(0, clusters, rows).astype(str)})


def test_style_fit_equals_statsmodels_glm_with_sandwich():
    frame = _simulated()
    x, n = _design(frame, [frame["len"], frame["fmt"]])
    y = frame["outcome"].to_numpy()
    glm = sm.GLM(y, x, family=sm.families.Binomial())
    # HC0 sandwich: statsmodels GLM(Binomial).fit(cov_type="HC0")
    ref = glm.fit(cov_type="HC0", tol=1e-12)
    fit = fit_style_bt(frame, ["len", "fmt"])
    np.testing.assert_allclose(fit.theta, _centred(ref.params[: n - 1]), atol=1e-6)
    np.testing.assert_allclose(fit.coef.to_numpy(), ref.params[-2:], atol=1e-6)
    np.testing.assert_allclose(fit.se()[-2:], ref.bse[-2:], atol=1e-6)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.logit.covariance())), ref.bse, atol=1e-6)
    # cluster-robust CR1: statsmodels cov_type="cluster" (use_correction=True: G/(G-1) (N-1)/(N-K)); CR0 without
    groups = pd.factorize(frame["item"])[0]
    for cr1 in (True, False):
        ref_c = glm.fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": cr1}, tol=1e-12)
        fit_c = fit_style_bt(frame, ["len", "fmt"], cluster="item", cr1=cr1)
        np.testing.assert_allclose(np.sqrt(np.diag(fit_c.logit.covariance(groups=groups, cr1=cr1))), ref_c.bse,
                                   atol=1e-6)
        assert fit_c.n_clusters == 25 and ("CR1" if cr1 else "CR0") in fit_c.cov_kind


def test_style_frequency_weights_equal_duplicated_rows():
    frame = _simulated(rows=300)
    doubled = fit_style_bt(frame.assign(weight=2.0), ["len"])
    dup = fit_style_bt(pd.concat([frame, frame], ignore_index=True), ["len"])
    np.testing.assert_allclose(doubled.theta, dup.theta, atol=1e-9)
    np.testing.assert_allclose(doubled.se(), dup.se(), atol=1e-9)
    np.testing.assert_allclose(fit_style_bt(frame.assign(weight=2.0), ["len"], kind="hessian").se(),
                               fit_style_bt(pd.concat([frame, frame]), ["len"], kind="hessian").se(), atol=1e-9)


def test_style_errors_name_the_column():
    frame = _simulated(rows=50)
    with pytest.raises(ValueError, match="'nope' is not in the frame"):
        fit_style_bt(frame, ["nope"])
    bad = frame.assign(len=frame["len"].astype(object))
    bad.loc[3, "len"] = "x"
    with pytest.raises(ValueError, match=r"'len' must be finite numbers; got 'x' in 1 rows \(first at row 3\)"):
        fit_style_bt(bad, ["len"])


def test_length_feature_is_lmarenas_normalised_difference():
    d = length_feature(np.array([300, 100, 200]), np.array([100, 300, 200]), standardize=False)
    np.testing.assert_allclose(d, [0.5, -0.5, 0.0])  # (a - b) / (a + b)
    assert abs(length_feature(np.array([3, 1, 2, 5]), np.array([1, 3, 2, 1])).std() - 1) < 1e-12


def test_fastchat_rank_rule():
    # 1 + number of models whose lower bound beats this one's upper bound
    lo = np.array([10.0, 8.0, 0.0, -5.0])
    hi = np.array([20.0, 12.0, 9.0, 1.0])
    assert fastchat_rank(lo, hi).tolist() == [1, 1, 2, 3]


def test_dominance_and_tie_groups_on_clear_case():
    rng = np.random.default_rng(0)
    est = np.array([10.0, 9.5, 0.0, -10.0])
    reps = est + rng.normal(scale=0.5, size=(2000, 4))
    above, crit = pairwise_dominance(est, reps)
    assert 2.0 < crit < 3.5  # max of 6 correlated |t|'s at 95 %: between z_.975 = 1.96 and Bonferroni 2.87 + noise
    lo, hi = rank_intervals(est, reps)
    assert lo.tolist() == [1, 1, 3, 4] and hi.tolist() == [2, 2, 3, 4]
    assert tie_groups(est, above).tolist() == [1, 1, 2, 3]


def test_simultaneous_rank_intervals_cover_true_ranks():
    """Coverage: 200 seeded replicates of 5 models with known strengths, 600 comparisons each, 200 bootstrap
    replicates per data set; the simultaneous 95 % intervals must cover all five true ranks in >= 95 % of them."""
    strengths = np.array([0.6, 0.3, 0.0, -0.3, -0.6])
    true_rank = np.array([1, 2, 3, 4, 5])
    names = [f"m{k}" for k in range(5)]
    covered = 0
    n_rep = 200
    for seed in range(n_rep):
        rng = np.random.default_rng(seed)
        a = rng.integers(0, 5, 600)
        b = (a + rng.integers(1, 5, 600)) % 5
        y = (rng.random(600) < 1 / (1 + np.exp(-(strengths[a] - strengths[b])))).astype(float)
        frame = pd.DataFrame({"player_a": [names[k] for k in a], "player_b": [names[k] for k in b],
                              "outcome": y, "weight": 1.0})
        fit = fit_bt(aggregate(frame))
        boot = bootstrap_bt(frame, n_resamples=200, rng=seed, fit=fit)
        lo, hi = rank_intervals(fit.theta, boot.theta)
        covered += bool(np.all((lo <= true_rank) & (true_rank <= hi)))
    assert covered / n_rep >= 0.95, covered


def test_marginal_rank_intervals_are_narrower_and_still_cover():
    # 12 models 1 apart, replicate SD 0.244: adjacent t = 1 / (0.244 sqrt 2) = 2.9, between the marginal (max over
    # 11 pairs, ~2.6) and the simultaneous (max over 66 pairs, ~3.2) critical values
    rng = np.random.default_rng(1)
    est = np.arange(12.0)[::-1]
    reps = est + rng.normal(scale=0.244, size=(4000, 12))
    s_lo, s_hi = rank_intervals(est, reps)
    m_lo, m_hi = rank_intervals(est, reps, simultaneous=False)
    truth = np.arange(1, 13)
    assert np.all(m_lo >= s_lo) and np.all(m_hi <= s_hi)
    assert np.all((m_lo <= truth) & (truth <= m_hi)) and (m_hi - m_lo).sum() < (s_hi - s_lo).sum()


def test_leaderboard_rank_columns_and_their_size_limit():
    from evalkit.ratings import leaderboard
    from evalkit.ratings.ranks import rank_columns

    frame, _ = read_comparisons(f"{LLMFAO}/gpt4-comparisons.csv")
    table = leaderboard(frame)
    assert {"rank_fastchat", "rank_low", "rank_high", "tie_group"} <= set(table.columns)
    assert (table["rank_low"] <= table["rank"]).all() and (table["rank"] <= table["rank_high"]).all()
    assert (table["rank_fastchat"] == fastchat_rank(table["ci_low"], table["ci_high"])).all()
    fit = fit_bt(aggregate(frame))
    small = rank_columns(table.drop(columns=["rank_fastchat", "rank_low", "rank_high", "tie_group"]), fit,
                         max_players=10)
    assert small["rank_low"].isna().all() and "skipped" in small.attrs["ranks"]


def test_identical_players_are_tied_not_nan():
    # two byte-identical submissions (AlpacaEval's falcon-7b/40b files) have zero spread in their difference
    rng = np.random.default_rng(0)
    est = np.array([1.0, 0.0, 0.0, -1.0])
    noise = rng.normal(scale=0.2, size=(500, 4))
    noise[:, 2] = noise[:, 1]
    with np.errstate(all="raise"):
        lo, hi = rank_intervals(est, est + noise)
    assert lo[1] == lo[2] and hi[1] == hi[2]


def test_position_fit_names_models_without_finite_ratings():
    frame = pd.DataFrame({"player_a": ["a", "a", "b", "c"], "player_b": ["b", "c", "c", "b"],
                          "outcome": [1.0, 1.0, 1.0, 0.0], "weight": 1.0})  # 'a' never loses
    with pytest.raises(ValueError, match="never lose"):
        fit_position_bt(frame)


def test_rank_intervals_for_an_arena_sized_board():
    """400 models (above the former 300 limit): the simultaneous rank columns are filled, hold the point rank,
    and cover the true rank of the simulated strengths for nearly every model."""
    import pandas as pd

    from evalkit.ratings import leaderboard
    from evalkit.ratings.ranks import RANK_MAX_PLAYERS

    assert RANK_MAX_PLAYERS >= 400
    rng = np.random.default_rng(7)
    n, m = 400, 200_000
    theta = np.sort(rng.normal(0, 1.0, n))[::-1]
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    win = rng.random(m) < 1 / (1 + np.exp(-(theta[a] - theta[b])))
    frame = pd.DataFrame({"player_a": [f"m{k:03d}" for k in a], "player_b": [f"m{k:03d}" for k in b],
                          "outcome": win.astype(float)})
    table = leaderboard(frame)
    assert table[["rank_low", "rank_high", "tie_group"]].notna().all().all()
    assert ((table["rank_low"] <= table["rank"]) & (table["rank"] <= table["rank_high"])).all()
    true_rank = table["model"].str[1:].astype(int) + 1  # m000 is the strongest
    covered = (table["rank_low"] <= true_rank) & (true_rank <= table["rank_high"])
    assert covered.mean() >= 0.95  # simultaneous 95 % intervals: all cover with prob >= 0.95
