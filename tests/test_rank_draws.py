"""Rank intervals at many players: the cheaper draws and the max-|t| loop give what the direct
computation gives (issue 27: `rate --out` at 1,000 models)."""

import numpy as np

from evalkit.ratings.ranks import CHOLESKY_MIN_PLAYERS, _PairStats, gaussian_replicates


def _centred_cov(n: int, seed: int) -> np.ndarray:
    a = np.random.default_rng(seed).normal(size=(n, n))
    c = np.eye(n) - 1.0 / n
    return c @ (a @ a.T / n + np.eye(n)) @ c  # singular along 1, as a centred BT covariance


def test_cholesky_draws_have_the_covariance_of_every_difference():
    n, draws = CHOLESKY_MIN_PLAYERS, 6000
    cov = _centred_cov(n, 0)
    x = gaussian_replicates(np.zeros(n), cov, n_draws=draws, rng=1, differences_only=True)
    d = x[:, 1:] - x[:, :1]  # model k minus model 0
    true = np.diag(cov)[1:] + cov[0, 0] - 2 * cov[0, 1:]
    z = (d.var(axis=0) / true - 1) / np.sqrt(2 / draws)  # each sample variance's error in its own SEs
    assert np.abs(z).max() < 5.0
    assert np.abs(d.mean(axis=0) / np.sqrt(true / draws)).max() < 5.0
    assert np.abs(x.mean(axis=1)).mean() > 0.1  # the common shift is there (differences do not see it)


def test_max_abs_t_is_the_direct_computation_bit_for_bit():
    gen = np.random.default_rng(2)
    est = gen.normal(size=60)
    ps = _PairStats(est, est + 0.3 * gen.normal(size=(300, 60)))
    direct = np.max(np.abs(ps.dev[:, ps.iu] - ps.dev[:, ps.ju]) / ps.safe, axis=1)
    assert np.array_equal(ps.max_abs_t(), direct)


def test_max_abs_t_in_float32_from_many_players_is_float64_to_1e6():
    n = CHOLESKY_MIN_PLAYERS
    gen = np.random.default_rng(3)
    est = gen.normal(size=n)
    ps = _PairStats(est, est + 0.3 * gen.normal(size=(40, n)))
    direct = np.array([np.max(np.abs(row[ps.iu] - row[ps.ju]) / ps.safe) for row in ps.dev])
    np.testing.assert_allclose(ps.max_abs_t(), direct, rtol=1e-6)


def _cluster_robust_cov(order: np.ndarray, n: int = 59, clusters: int = 13) -> np.ndarray:
    """A centred covariance of rank ``clusters - 1`` (a cluster-robust sandwich over 13 items, as
    ``rate --cluster item`` on LLMFAO), its meat summed over the clusters in ``order``."""
    s = np.random.default_rng(4).normal(size=(clusters, n))
    s -= s.mean(axis=0)  # the scores of the clusters sum to 0
    s -= s.mean(axis=1, keepdims=True)  # centred ratings
    meat = np.zeros((n, n))
    for g in order:
        meat += np.outer(s[g], s[g])
    return meat / clusters


def test_covariances_that_differ_by_round_off_give_the_same_draws_and_rank_intervals():
    # the pandas and DuckDB engines sum a cluster-robust meat in different orders: the covariances
    # differ in their last bits, and the rank intervals drawn from them must not (they differed by
    # 1-2 ranks when the draws used eigenvectors, whose signs flipped with the last bits)
    from evalkit.ratings.ranks import rank_values

    a, b = _cluster_robust_cov(np.arange(13)), _cluster_robust_cov(np.arange(13)[::-1])
    assert not np.array_equal(a, b)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13 * np.abs(a).max())
    est = np.linspace(10.0, -10.0, 59)
    xa = gaussian_replicates(est, a, rng=0, df=12.0, differences_only=True)
    xb = gaussian_replicates(est, b, rng=0, df=12.0, differences_only=True)
    np.testing.assert_allclose(xa, xb, rtol=0, atol=1e-12 * np.abs(xa).max())
    players = tuple(f"m{k}" for k in range(59))
    ca, _ = rank_values(players, est, cov=a, df=12.0)
    cb, _ = rank_values(players, est, cov=b, df=12.0)
    assert ca is not None and cb is not None
    for name in ("rank_low", "rank_high", "tie_group"):
        np.testing.assert_array_equal(ca[name], cb[name])
    assert 1 < np.median(ca["rank_high"] - ca["rank_low"]) < 58  # intervals neither all points nor all 1-59


def test_draws_have_the_covariance_of_a_rank_deficient_cov():
    cov = _cluster_robust_cov(np.arange(13))
    x = gaussian_replicates(np.zeros(59), cov, n_draws=20000, rng=5)
    np.testing.assert_allclose(np.cov(x, rowvar=False), cov, rtol=0, atol=0.05 * np.abs(cov).max())
