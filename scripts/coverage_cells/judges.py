"""Judge diagnostics under their null: position bias (one vote per comparison, and ~4 votes per comparison
with the answers in fixed places, as LLMFAO's crowd) and self-preference.

Votes follow Bradley-Terry on five players (``_sim.THETA``) with no position effect; which answer is shown
on the left is a fair coin per comparison. Repeated votes on a comparison repeat its latent verdict with
probability 0.6 (``_sim.clustered``), so the left answer's wins are correlated within a comparison. Two more
settings give the judge a position effect that varies by item (zero on average), the null that ``rate
--cluster item`` tests clustered by item. The cells call what :func:`evalkit.stats.judges.position_bias_table` calls (the exact binomial test, or
:func:`evalkit.stats.judge_warnings.clustered_share_test` by comparison) and
:func:`evalkit.stats.judges.self_preference_test`.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
from scipy.special import expit

from evalkit.stats.judge_warnings import binom_half_pvalue, clustered_share_test, comparison_units
from evalkit.stats.judges import self_preference_test

from ._sim import NAMES, THETA


def _votes(gen: np.random.Generator, n_comparisons: int, per: int, rho: float = 0.6) -> pd.DataFrame:
    """``n_comparisons`` comparisons (an item and an ordered pair each), ``per`` votes on each."""
    a = gen.integers(0, 5, n_comparisons)
    b = (a + gen.integers(1, 5, n_comparisons)) % 5
    p = expit(THETA[a] - THETA[b])
    latent = gen.random(n_comparisons) < p
    rep = np.repeat(np.arange(n_comparisons), per)
    y = np.where(gen.random(rep.size) < rho, latent[rep], gen.random(rep.size) < p[rep]).astype(float)
    return pd.DataFrame({"player_a": NAMES[a[rep]], "player_b": NAMES[b[rep]], "outcome": y, "weight": 1.0,
                         "item": np.char.add("q", rep.astype(str)).astype(object)})


def _by_item(gen: np.random.Generator, *, items: int, per_item: int, by: str) -> tuple[bool, float]:
    """``items`` items of ``per_item`` comparisons with 4 votes each; the judge's position effect varies by
    item (``N(0, 0.3^2)`` on the logit of the left answer, mean zero: H0 on average). ``by="item"`` is
    what ``rate --cluster item`` runs (the unit the intervals use); ``by="comparison"`` the item x pair
    units, which miss the dependence across one item's pairs."""
    a = gen.integers(0, 5, items * per_item)
    b = (a + gen.integers(1, 5, a.size)) % 5
    item = np.repeat(np.arange(items), per_item)
    p = expit(THETA[a] - THETA[b] + gen.normal(0.0, 0.3, items)[item])
    latent = gen.random(a.size) < p
    rep = np.repeat(np.arange(a.size), 4)
    y = np.where(gen.random(rep.size) < 0.6, latent[rep], gen.random(rep.size) < p[rep]).astype(float)
    groups = item[rep] if by == "item" else rep
    return bool(clustered_share_test(y, np.ones(y.size), groups)["pvalue"] < 0.05), float("nan")


def _position(gen: np.random.Generator, *, n_comparisons: int, per: int, clustered: bool) -> tuple[bool, float]:
    v = _votes(gen, n_comparisons, per)
    left = v["outcome"].to_numpy() == 1.0
    if clustered:
        units = comparison_units(v["player_a"].to_numpy(), v["player_b"].to_numpy(), v["item"].to_numpy())
        p = clustered_share_test(left.astype(float), np.ones(len(v)), units)["pvalue"]
    else:
        p = binom_half_pvalue(int(left.sum()), len(v))
    return bool(p < 0.05), float("nan")


def _self_preference(gen: np.random.Generator, *, items: int, judges: int) -> tuple[bool, float]:
    """``judges`` exchangeable judges rate every pair of every item once; judge 0 "is" player m0."""
    ua, ub = np.triu_indices(5, 1)
    frames = []
    for item in range(items):
        swap = gen.random(ua.size) < 0.5
        a, b = np.where(swap, ub, ua), np.where(swap, ua, ub)
        p = expit(THETA[a] - THETA[b])
        latent = gen.random(ua.size) < p  # the pair's answers on this item: judges agree with it often
        for j in range(judges):
            y = np.where(gen.random(ua.size) < 0.5, latent, gen.random(ua.size) < p).astype(float)
            frames.append(pd.DataFrame({"player_a": NAMES[a], "player_b": NAMES[b], "outcome": y, "weight": 1.0,
                                        "item": f"q{item}", "judge": f"j{j}"}))
    frame = pd.concat(frames, ignore_index=True)
    res = self_preference_test(frame, (frame["judge"] == "j0").to_numpy(), "m0")
    return bool(res["self_pvalue"] < 0.05), float("nan")


def _cell(method: str, setting: str, draw, *, reps: int = 4000, quick: int = 1000, hold: bool = True) -> dict:
    return {"family": "judges", "method": method, "setting": setting, "kind": "test", "nominal": 0.05,
            "draw": draw, "reps": reps, "quick_reps": quick, "assumptions_hold": hold}


CELLS = [
    _cell("position bias: exact binomial", "one vote per comparison, 500 comparisons, H0",
          partial(_position, n_comparisons=500, per=1, clustered=False)),
    _cell("position bias: CR1 t-test clustered by comparison (report default with repeats)",
          "4 votes per comparison, 500 comparisons, H0", partial(_position, n_comparisons=500, per=4, clustered=True)),
    _cell("position bias: exact binomial (votes taken as independent)", "4 votes per comparison, 500 comparisons, H0",
          partial(_position, n_comparisons=500, per=4, clustered=False), hold=False),
    _cell("position bias: CR1 t-test clustered by item (rate --cluster item)",
          "13 items (as LLMFAO) x 40 comparisons x 4 votes, item-level position effects, H0",
          partial(_by_item, items=13, per_item=40, by="item")),
    _cell("position bias: CR1 t-test clustered by item (rate --cluster item)",
          "50 items x 20 comparisons x 4 votes, item-level position effects, H0",
          partial(_by_item, items=50, per_item=20, by="item")),
    _cell("position bias: CR1 t-test clustered by comparison (ignores the items)",
          "50 items x 20 comparisons x 4 votes, item-level position effects, H0",
          partial(_by_item, items=50, per_item=20, by="comparison"), hold=False),
    _cell("self-preference: paired judge-vs-others test, CR1 by item", "3 exchangeable judges, 20 items x 10 pairs, H0",
          partial(_self_preference, items=20, judges=3), reps=2000, quick=0),
]
