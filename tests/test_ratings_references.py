"""Ratings against independent references: choix's exact ML fixtures and evalica's goldens."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.io import read_comparisons
from evalkit.ratings import (
    PairCounts,
    aggregate,
    average_win_rate,
    counting,
    fit_bt,
    online_elo,
)

DATA = Path(__file__).parent / "data"
CHOIX_CASES = sorted((DATA / "choix").glob("testcase-pairwise-*.json"))
EVALICA_CASES = {
    "simple": DATA / "evalica" / "simple.csv",
    "food": DATA / "evalica" / "food.csv",
    "llmfao": DATA / "llmfao" / "crowd-comparisons.csv",
}


@pytest.mark.parametrize("path", CHOIX_CASES, ids=lambda p: p.stem)
def test_choix_ml_est(path):
    case = json.loads(path.read_text())
    data = np.array(case["data"])  # (winner, loser) rows
    n = case["n_items"]
    counts = PairCounts.from_arrays(
        [str(k) for k in range(n)], data[:, 0], data[:, 1], np.ones(len(data)), np.zeros(len(data))
    )
    fit = fit_bt(counts)
    assert fit.converged
    np.testing.assert_allclose(fit.theta, case["ml_est"], atol=1e-6)  # choix tests/data ml_est
    via_choix = fit_bt(counts, solver="choix")  # choix.ilsr_pairwise_dense as the solver
    np.testing.assert_allclose(via_choix.theta, case["ml_est"], atol=1e-6)


def _golden(name: str, algorithm: str) -> pd.Series:
    gold = pd.read_csv(DATA / "evalica" / f"{name}-golden.csv", dtype={"item": str})
    rows = gold[gold["algorithm"] == algorithm]
    return pd.Series(rows["score"].to_numpy(), index=rows["item"].to_numpy())


def _frame(name: str) -> pd.DataFrame:
    return read_comparisons(EVALICA_CASES[name], format="left_right").frame


@pytest.fixture(scope="module", params=sorted(EVALICA_CASES))
def case(request):
    frame = _frame(request.param)
    return request.param, frame, aggregate(frame)


def test_evalica_bradley_terry(case):
    name, _, counts = case
    gold = _golden(
        name, "bradley_terry"
    )  # evalica.bradley_terry: MM, tol 1e-6, scores summing to 1
    fit = fit_bt(counts, ties="half")
    assert fit.converged
    strength = pd.Series(np.exp(fit.theta) / np.exp(fit.theta).sum(), index=list(fit.players))
    np.testing.assert_allclose(strength.loc[gold.index], gold.to_numpy(), rtol=1e-4)


def test_evalica_online_elo(case):
    name, frame, _ = case
    gold = _golden(name, "elo")  # evalica.elo(..., k=4) over the file's rows in order, initial 1000
    elo = online_elo(frame, k=4, initial=1000)
    np.testing.assert_allclose(elo.loc[gold.index], gold.to_numpy(), atol=1e-9, rtol=0)


def test_evalica_counting(case):
    name, _, counts = case
    gold = _golden(name, "counting")  # evalica.counting: win 1, tie 0.5
    np.testing.assert_allclose(counting(counts).loc[gold.index], gold.to_numpy(), atol=1e-9, rtol=0)


def test_evalica_average_win_rate(case):
    name, _, counts = case
    gold = _golden(name, "average_win_rate")  # evalica.average_win_rate
    np.testing.assert_allclose(
        average_win_rate(counts).loc[gold.index], gold.to_numpy(), atol=1e-9, rtol=0
    )


def test_davidson_matches_evalica_newman(case):
    name, _, counts = case
    gold = _golden(
        name, "newman"
    )  # evalica.newman: the Davidson tie model (nu = 2 v), scores up to scale
    fit = fit_bt(counts, ties="davidson")
    assert fit.converged
    strength = pd.Series(np.exp(fit.theta), index=list(fit.players)).loc[gold.index]
    np.testing.assert_allclose(strength / strength.sum(), gold / gold.sum(), rtol=1e-4)


def test_many_players_match_choix():
    # 210 players: Newton steps go through conjugate gradients on the sparse Laplacian;
    # choix.ilsr_pairwise_dense (a different algorithm) is the reference.
    rng = np.random.default_rng(5)
    n, m = 210, 20_000
    theta = rng.normal(0, 1, n)
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    u = rng.random(m)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    outcome = np.where(u < p - 0.05, 1.0, np.where(u < p + 0.05, 0.5, 0.0))
    frame = pd.DataFrame({"player_a": a.astype(str), "player_b": b.astype(str), "outcome": outcome})
    counts = aggregate(frame)
    ours = fit_bt(counts, ties="half")
    ref = fit_bt(counts, ties="half", solver="choix", tol=1e-12, max_iter=10_000)
    assert ours.converged and ours.grad_norm < 1e-6
    np.testing.assert_allclose(ours.theta, ref.theta, atol=1e-6)
