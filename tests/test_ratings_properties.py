"""Property tests: ratings do not depend on row order, player labels, or which side is player_a."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.ratings import aggregate, fit_bt


@st.composite
def comparisons(draw):
    n = draw(st.integers(2, 6))
    m = draw(st.integers(0, 30))
    a = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    shift = draw(st.lists(st.integers(1, n - 1), min_size=m, max_size=m))
    out = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 0.25]), min_size=m, max_size=m))
    rows = [(f"p{x}", f"p{(x + s) % n}", o) for x, s, o in zip(a, shift, out, strict=True)]
    # a win, a loss and a tie around a cycle makes the ratings exist (also for Davidson)
    rows += [(f"p{k}", f"p{(k + 1) % n}", o) for k in range(n) for o in (0.0, 0.5, 1.0)]
    return pd.DataFrame(rows, columns=["player_a", "player_b", "outcome"]), draw(
        st.randoms(use_true_random=False)
    )


def ratings(frame, ties):
    fit = fit_bt(aggregate(frame), ties=ties)
    return pd.Series(fit.theta, index=list(fit.players))


@settings(max_examples=40, deadline=None)
@given(comparisons(), st.sampled_from(["half", "davidson"]))
def test_invariances(case, ties):
    frame, rnd = case
    ref = ratings(frame, ties)
    # reordering rows
    order = list(range(len(frame)))
    rnd.shuffle(order)
    pd.testing.assert_series_equal(ratings(frame.iloc[order], ties), ref, atol=1e-8, rtol=0)
    # relabelling players (a permutation of the names that also changes their sort order)
    names = sorted(set(frame["player_a"]) | set(frame["player_b"]))
    perm = names[:]
    rnd.shuffle(perm)
    new = {old: f"z{k}-{p}" for k, (old, p) in enumerate(zip(names, perm, strict=True))}
    relabelled = frame.assign(
        player_a=frame["player_a"].map(new), player_b=frame["player_b"].map(new)
    )
    back = ratings(relabelled, ties).rename(index={v: k for k, v in new.items()}).loc[ref.index]
    pd.testing.assert_series_equal(back, ref, atol=1e-8, rtol=0)
    # swapping the two players and the outcome
    swapped = frame.assign(
        player_a=frame["player_b"], player_b=frame["player_a"], outcome=1 - frame["outcome"]
    )
    pd.testing.assert_series_equal(ratings(swapped, ties), ref, atol=1e-8, rtol=0)
    assert abs(ref.sum()) < 1e-9 and np.all(np.isfinite(ref))
