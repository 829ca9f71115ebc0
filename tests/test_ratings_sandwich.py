"""Sandwich (robust, cluster-robust) and inverse-Hessian covariances against statsmodels.

Bradley–Terry with ties as half a win is a logistic regression of player_a's score on
the design row ``e_a - e_b``: statsmodels' Binomial GLM fits the same model, so its theta,
nonrobust, HC0 and cluster covariances are independent references, also for continuous
outcomes. Weights are frequency weights, so the reference is the unweighted GLM on the rows
written out (a row of weight 3 three times).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from evalkit.ratings import aggregate, fit_bt


def data(seed=0, n_players=6, n_rows=600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1, 1, n_players)
    a = rng.integers(0, n_players, n_rows)
    b = (a + rng.integers(1, n_players, n_rows)) % n_players
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    outcome = rng.choice([0.0, 0.5, 1.0, 0.3, 0.8], size=n_rows, p=[0.3, 0.1, 0.3, 0.15, 0.15])
    outcome = np.where(rng.random(n_rows) < p, np.maximum(outcome, 0.5), np.minimum(outcome, 0.5))
    return pd.DataFrame(
        {
            "player_a": [f"p{k}" for k in a],
            "player_b": [f"p{k}" for k in b],
            "outcome": outcome,
            "weight": rng.choice([0.5, 1.0, 2.0], size=n_rows),
            "item": [f"q{k}" for k in rng.integers(0, 40, n_rows)],
        }
    )


def glm(frame: pd.DataFrame, **fit_kwargs):
    players = sorted(set(frame["player_a"]) | set(frame["player_b"]))
    idx = {p: k for k, p in enumerate(players)}
    x = np.zeros((len(frame), len(players)))
    x[np.arange(len(frame)), frame["player_a"].map(idx)] += 1
    x[np.arange(len(frame)), frame["player_b"].map(idx)] -= 1
    model = sm.GLM(
        frame["outcome"].to_numpy(),
        x[:, 1:],
        family=sm.families.Binomial(),
        var_weights=frame["weight"].to_numpy(),
    )
    # statsmodels warns that cov_type is "not fully supported with var_weights"; for the Binomial
    # family (scale 1) its HC0 and cluster formulas are the textbook ones, and they agree here.
    return model.fit(tol=1e-13, **fit_kwargs)  # theta_k - theta_p0 for k >= 1


def differences_cov(cov: np.ndarray) -> np.ndarray:
    """Covariance of (theta_k - theta_0), k >= 1, from the centred covariance."""
    n = cov.shape[0]
    t = np.hstack([-np.ones((n - 1, 1)), np.eye(n - 1)])
    return t @ cov @ t.T


def expanded(frame: pd.DataFrame) -> pd.DataFrame:
    """Integer frequency weights written out as repeated rows of weight 1."""
    return frame.loc[frame.index.repeat(frame["weight"].astype(int))].assign(weight=1.0)


@pytest.mark.parametrize(
    ("kind", "cluster", "fit_kwargs", "factor"),
    [
        ("hessian", None, {}, 1.0),
        ("sandwich", None, {"cov_type": "HC0"}, 1.0),
        # cluster-robust: statsmodels' default correction is CR1, G / (G - 1) * (N - 1) / (N - K)
        # (G = 40 items, N rows written out, K = 5 free strengths), evalkit's one CR1 factor
        ("sandwich", "item", {"cov_type": "cluster", "cov_kwds": {"groups": None}}, 1.0),
    ],
)
def test_covariances_match_statsmodels(kind, cluster, fit_kwargs, factor):
    """Frequency weights: the weighted fit's covariances equal statsmodels' on the rows written out."""
    frame = data().assign(weight=lambda f: f["weight"].map({0.5: 1.0, 1.0: 2.0, 2.0: 3.0}))
    rows = expanded(frame)
    if cluster:
        fit_kwargs["cov_kwds"]["groups"] = pd.factorize(rows[cluster])[0]
        assert rows[cluster].nunique() == 40
    ref = glm(rows, **fit_kwargs)  # unweighted GLM on the expanded rows
    fit = fit_bt(aggregate(frame), ties="half")
    np.testing.assert_allclose(fit.theta[1:] - fit.theta[0], ref.params, atol=1e-8)
    ours = differences_cov(fit.covariance(kind, frame=frame, cluster=cluster))
    np.testing.assert_allclose(ours, factor * ref.cov_params(), rtol=1e-6, atol=1e-12)
    if cluster:
        cr0 = differences_cov(fit.covariance(kind, frame=frame, cluster=cluster, cluster_correction="CR0"))
        ref0 = glm(rows, cov_type="cluster", cov_kwds={"groups": fit_kwargs["cov_kwds"]["groups"],
                                                        "use_correction": False})
        np.testing.assert_allclose(cr0, ref0.cov_params(), rtol=1e-6, atol=1e-12)


def test_counts_sandwich_equals_row_sandwich_for_unit_outcomes():
    frame = data().assign(weight=1.0)
    frame["outcome"] = frame["outcome"].round()  # 0 / 1 only (0.5 rounds to 0)
    fit = fit_bt(aggregate(frame), ties="half")
    np.testing.assert_allclose(
        fit.covariance("sandwich"), fit.covariance("sandwich", frame=frame), atol=1e-12
    )
    ref = glm(frame, cov_type="HC0")
    np.testing.assert_allclose(
        differences_cov(fit.covariance("sandwich")), ref.cov_params(), rtol=1e-6
    )


def test_hessian_intervals_with_a_tiny_prior_match_the_unpenalised_fit():
    """An L2 prior of 1e-6 barely moves the fit, so its model-based SEs must equal the l2 = 0 ones
    (which are pinned to statsmodels' GLM above); before centring the covariance they were ~70,000 Elo."""
    import numpy as np
    import pandas as pd

    from evalkit.ratings import aggregate, elo_table, fit_bt

    g = np.random.default_rng(0)
    theta = np.linspace(-1, 1, 6)
    rows = []
    for _ in range(400):
        i, j = g.choice(6, 2, replace=False)
        rows.append((str(i), str(j), float(g.random() < 1 / (1 + np.exp(theta[j] - theta[i])))))
    c = aggregate(pd.DataFrame(rows, columns=["player_a", "player_b", "outcome"]))
    ref = elo_table(fit_bt(c), se="hessian")["se"].to_numpy()
    for l2 in (1e-6, 1e-3):
        got = elo_table(fit_bt(c, l2=l2), se="hessian")["se"].to_numpy()
        np.testing.assert_allclose(got, ref, rtol=2e-3)


def test_counts_only_sandwich_of_continuous_outcomes_raises_with_the_reason():
    # the pair counts of continuous outcomes hold sum(w o) but not sum(w o^2): a sandwich from them alone is
    # not the sandwich (the meat needs (o - p)^2 per comparison), so it is refused, and the frame gives the
    # exact one (statsmodels' HC0 above)
    frame = data().assign(weight=1.0)
    fit = fit_bt(aggregate(frame), ties="half")
    assert fit.counts.continuous
    with pytest.raises(ValueError, match="continuous outcomes.*frame="):
        fit.covariance("sandwich")
    with pytest.raises(ValueError, match="continuous outcomes"):
        fit.se("sandwich")
    ref = glm(frame, cov_type="HC0")
    np.testing.assert_allclose(differences_cov(fit.covariance("sandwich", frame=frame)), ref.cov_params(),
                               rtol=1e-6, atol=1e-12)
    assert not fit_bt(aggregate(frame.assign(outcome=frame["outcome"].round()))).counts.continuous
