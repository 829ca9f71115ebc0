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
