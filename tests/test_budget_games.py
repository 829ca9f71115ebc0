"""Game counting: the vectorised bootstrap counts against a brute-force loop over observations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.budget import best_so_far, count_games, elo_curves, session_multiplicity


def _tiny(seed=0):
    gen = np.random.default_rng(seed)
    rows = []
    for system in ("a", "b"):
        for task in ("t1", "t2"):
            for s in range(3):
                k = gen.integers(1, 4)
                rows.append(pd.DataFrame({
                    "system": system, "task": task, "session": f"s{s}",
                    "budget": np.sort(gen.choice([1.0, 2.0, 3.0, 4.0], size=k, replace=False)),
                    "score": gen.integers(0, 3, size=k).astype(float),  # small range: many ties
                }))
    return pd.concat(rows, ignore_index=True)


def _brute(ck, mult, within, missing, systems):
    """Explicit loop over copies of sessions and checkpoints, following the documented rule."""
    c = ck.budgets.size
    n_p = len(systems) * c
    wins = np.zeros((n_p, n_p))
    ties = np.zeros((n_p, n_p))
    sess = ck.sessions
    for x in range(len(sess)):
        for y in range(len(sess)):
            if sess.task[x] != sess.task[y] or sess.system[x] not in systems or sess.system[y] not in systems:
                continue
            for cx in range(int(mult[x])):
                for cy in range(int(mult[y])):
                    if x == y and (cx != cy or not within):
                        continue  # copies never play each other; own checkpoints only if within
                    for i in range(c):
                        for j in range(c):
                            p = systems.index(sess.system[x]) * c + i
                            q = systems.index(sess.system[y]) * c + j
                            if p == q:
                                continue
                            u, v = ck.values[x, i], ck.values[y, j]
                            if np.isnan(u) or np.isnan(v):
                                if missing == "lose" and not np.isnan(u):
                                    wins[p, q] += 1
                                continue
                            wins[p, q] += u > v
                            ties[p, q] += u == v
    return wins, ties


@pytest.mark.parametrize("within", [False, True])
@pytest.mark.parametrize("missing", ["drop", "lose"])
def test_bootstrap_counts_equal_brute_force(within, missing):
    ck = best_so_far(_tiny(), np.array([1.0, 2.0, 4.0]))
    mult = session_multiplicity(ck.sessions, 3, rng=4)
    got = count_games(ck, within_session=within, missing=missing, multiplicity=mult)
    for r in range(3):
        w, t = _brute(ck, mult[r], within, missing, ["a", "b"])
        np.testing.assert_array_equal(got.wins[r], w)
        np.testing.assert_array_equal(got.ties[r], t)


def test_multiplicity_resamples_within_system_and_task():
    ck = best_so_far(_tiny(), np.array([1.0, 2.0, 4.0]))
    mult = session_multiplicity(ck.sessions, 50, rng=0)
    sums = pd.DataFrame(mult.T).groupby([ck.sessions.system, ck.sessions.task]).sum()
    assert (sums.to_numpy() == 3).all()  # every (system, task) keeps its 3 sessions
    assert not np.array_equal(mult[0], mult[1])


def test_separation_needs_a_prior():
    # One session per checkpoint ordering that never changes: the last checkpoint never loses.
    tr = pd.DataFrame({"system": "a", "task": "t", "session": ["s1", "s1", "s2", "s2"],
                       "budget": [1.0, 2.0, 1.0, 2.0], "score": [0.1, 0.9, 0.2, 0.8]})
    with pytest.raises(ValueError, match="prior="):
        elo_curves(tr, budgets=np.array([1.0, 2.0]), n_resamples=0)
    res = elo_curves(tr, budgets=np.array([1.0, 2.0]), n_resamples=0, prior=2.0)
    # 2 real games (both won by checkpoint 2) + 2 pseudo-games split 1:1 -> 3 wins of 4
    assert res.curve["elo"].iat[1] - 1000 == pytest.approx(400 * np.log10(3.0), abs=1e-6)


def test_tie_modes_pass_through_to_fit_bt():
    tr = _tiny(1)
    half = elo_curves(tr, budgets=np.array([1.0, 2.0, 4.0]), n_resamples=0, tie_warning=1.0, prior=1.0)
    drop = elo_curves(tr, budgets=np.array([1.0, 2.0, 4.0]), n_resamples=0, tie_warning=1.0, prior=1.0, ties="drop")
    # Dropping ties keeps only decisive games: ratings move further apart than with half-wins.
    spread = lambda r: np.ptp(r.curve["elo"].to_numpy())  # noqa: E731
    assert spread(drop) >= spread(half)


def test_davidson_replicates_without_ties_are_counted_not_raised():
    tr = _tiny(2)
    with pytest.warns(RuntimeWarning, match="without a Bradley–Terry estimate"):
        res = elo_curves(tr, budgets=np.array([1.0, 2.0, 4.0]), n_resamples=20, rng=0,
                         ties="davidson", prior=1.0, tie_warning=1.0)
    assert res.n_failed == sum(res.failed.values()) > 0
    assert np.isfinite(res.curve["elo"]).all()
