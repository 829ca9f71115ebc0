"""Ratings that do not exist, and bad options, give clear ValueErrors (never a silent answer)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.ratings import PairCounts, aggregate, bootstrap_bt, elo_table, fit_bt, leaderboard


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["player_a", "player_b", "outcome"])


CYCLE = [("B", "C", 1.0), ("C", "D", 1.0), ("D", "B", 1.0)]


def test_single_model():
    counts = PairCounts.from_arrays(["A"], [], [], [], [])
    with pytest.raises(ValueError, match="at least two players"):
        fit_bt(counts)


def test_disconnected_graph_names_the_parts():
    data = frame([("A", "B", 1.0), ("B", "A", 1.0), ("C", "D", 1.0), ("D", "C", 0.5)])
    with pytest.raises(
        ValueError, match=r"falls into 2 parts.*'A', 'B'.*'C', 'D'.*L2 prior.*separately"
    ) as exc:
        fit_bt(aggregate(data))
    assert "Remedies" in str(exc.value)


def test_model_winning_every_game():
    data = frame([("A", "B", 1.0), ("C", "A", 0.0), ("A", "D", 1.0), *CYCLE])
    with pytest.raises(ValueError, match=r"\['A'\] never lose or tie") as exc:
        fit_bt(aggregate(data))
    assert "l2=" in str(exc.value) and "drop these models" in str(exc.value)
    with pytest.raises(ValueError, match="never lose"):
        leaderboard(data)
    # The remedy works: with an L2 prior the MAP estimate exists, A on top, finite.
    fit = fit_bt(aggregate(data), l2=0.1)
    assert fit.converged and np.all(np.isfinite(fit.theta))
    assert fit.players[int(np.argmax(fit.theta))] == "A"


def test_model_losing_every_game_and_ties_dropped():
    data = frame(
        [
            ("A", "B", 0.5),
            ("B", "A", 1.0),
            ("A", "B", 0.0),
            *[(a, b, o) for a, b, o in CYCLE],
            ("B", "C", 0.0),
        ]
    )
    fit_bt(aggregate(data), ties="half")  # the tie is an edge both ways: A has beaten-or-tied B
    with pytest.raises(ValueError, match=r"\['A'\] never win"):
        fit_bt(aggregate(data), ties="drop")


def test_davidson_needs_ties():
    data = frame([("A", "B", 1.0), ("B", "A", 1.0)])
    with pytest.raises(ValueError, match="needs both ties and decided"):
        fit_bt(aggregate(data), ties="davidson")


def test_davidson_divergence_is_an_error():
    # Beat-or-tie graph is strongly connected (ties count both ways), but P(B wins) = 0 is
    # only reached as theta_A - theta_B and nu both go to infinity: no Davidson MLE.
    data = frame([("A", "B", 0.5), ("B", "A", 0.5), ("A", "B", 1.0)])
    fit_bt(aggregate(data), ties="half")  # exists
    with pytest.raises(ValueError, match="Davidson tie model has no finite maximum-likelihood"):
        fit_bt(aggregate(data), ties="davidson")
    assert np.isfinite(fit_bt(aggregate(data), ties="davidson", l2=0.5).theta).all()


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"ties": "third"}, "'ties' must be one of"),
        ({"l2": -1.0}, "'l2' must be"),
        ({"solver": "magic"}, "'solver' must be one of"),
        ({"init": [0.0]}, "'init' must have one value per player"),
        ({"solver": "choix", "ties": "davidson"}, "no Davidson"),
        ({"solver": "choix", "l2": 1.0}, "maximum likelihood only"),
    ],
)
def test_bad_options(kwargs, pattern):
    data = frame([("A", "B", 1.0), ("B", "A", 1.0), ("A", "B", 0.5)])
    with pytest.raises(ValueError, match=pattern):
        fit_bt(aggregate(data), **kwargs)


def test_bad_anchor_and_arrays():
    data = frame([("A", "B", 1.0), ("B", "A", 1.0)])
    with pytest.raises(ValueError, match="anchor model 'Z' is not among"):
        elo_table(fit_bt(aggregate(data)), anchor="Z")
    with pytest.raises(ValueError, match="same length"):
        PairCounts.from_arrays(["A", "B"], [0], [1, 0], [1], [1])
    with pytest.raises(ValueError, match="'wins_i' must be finite and >= 0"):
        PairCounts.from_arrays(["A", "B"], [0], [1], [-1], [1])
    with pytest.raises(ValueError, match="compared with itself"):
        PairCounts.from_arrays(["A", "B"], [0], [0], [1], [1])


def test_bootstrap_options():
    data = frame([("A", "B", 1.0), ("B", "A", 1.0), ("A", "B", 0.5)])
    with pytest.raises(ValueError, match="cluster column 'item' is not in the frame of comparisons"):
        bootstrap_bt(data, n_resamples=5, rng=0, cluster="item")
    with pytest.raises(ValueError, match="'n_resamples' must be a positive integer"):
        bootstrap_bt(data, n_resamples=0, rng=0)
    with pytest.raises(ValueError, match="rng must be"):
        bootstrap_bt(data, n_resamples=5, rng=None)
    with pytest.raises(ValueError, match="needs a seed"):
        leaderboard(data, interval="bootstrap")
