"""The cost-accuracy frontier: HAL's rule pinned to HAL's code, the Pareto set, frontier probabilities."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.metrics import frontier, hal_frontier, pareto_set, read_prices, read_run_table
from evalkit.metrics._frontier import bootstrap_frontier
from evalkit.metrics.cost import apply_prices

ROOT = Path(__file__).resolve().parents[1]
# HAL's compute_pareto_frontier (fsndzomga/hal-frontend @ e15c50e, utils/pareto.py) run by
# `python scripts/hal_reference.py --pareto <its pareto.py> --out tests/data/hal/pareto_reference.json`
HAL = json.loads((ROOT / "tests" / "data" / "hal" / "pareto_reference.json").read_text())


def test_hal_rule_equals_hals_code_on_every_point_set() -> None:
    assert len(HAL["cases"]) == 141
    for i, case in enumerate(HAL["cases"]):
        assert hal_frontier(case["cost"], case["accuracy"]).tolist() == case["on_frontier"], i


def test_hull_rule_drops_a_dent_and_collinear_middles() -> None:
    assert hal_frontier([1, 2, 3, 4], [0.2, 0.5, 0.6, 0.9]).tolist() == [True, True, False, True]
    assert pareto_set([1, 2, 3, 4], [0.2, 0.5, 0.6, 0.9]).tolist() == [True] * 4
    assert hal_frontier([1, 2, 3], [0.25, 0.5, 0.75]).tolist() == [True, False, True]  # exactly collinear
    assert hal_frontier([1, 2, 3], [0.2, 0.4, 0.6]).tolist() == [True, True, True]  # 0.4 rounds above the chord, as in HAL


def test_pareto_set_is_the_non_dominated_points() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        c, a = rng.integers(0, 5, n).astype(float), rng.integers(0, 5, n).astype(float)
        brute = [not any(c[j] <= c[i] and a[j] >= a[i] and (c[j] < c[i] or a[j] > a[i]) for j in range(n))
                 for i in range(n)]
        assert pareto_set(c, a).tolist() == brute
        assert set(itertools.compress(range(n), hal_frontier(c, a))) <= set(itertools.compress(range(n), brute))


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return apply_prices(read_run_table(str(ROOT / "data" / "cost" / "runs.csv")),
                        read_prices(str(ROOT / "data" / "cost" / "prices.csv")))


def test_frontier_on_the_shipped_runs(runs: pd.DataFrame) -> None:
    res = frontier(runs, n_resamples=400, rng=0)
    t = res.table.set_index("system")
    assert t["on_frontier"].sum() >= 2
    assert ((t["p_frontier"] >= 0) & (t["p_frontier"] <= 1)).all()
    assert (t["cost_low"] <= t["cost"]).all() and (t["cost"] <= t["cost_high"]).all()
    assert (t["accuracy_low"] <= t["accuracy"]).all() and (t["accuracy"] <= t["accuracy_high"]).all()
    # accuracy counts an errored run as 0; cost is the total of the task means
    g = runs[runs.system == "large-agent-retry"]
    assert t.at["large-agent-retry", "accuracy"] == pytest.approx(g["score"].fillna(0).mean())
    assert t.at["large-agent-retry", "cost"] == pytest.approx(g.groupby("task")["cost"].mean().sum())
    again = frontier(runs, n_resamples=400, rng=0)
    pd.testing.assert_frame_equal(res.table, again.table)


def test_min_completion_says_whom_it_drops_and_why(runs: pd.DataFrame) -> None:
    res = frontier(runs, n_resamples=100, rng=0, min_completion=0.8)
    assert res.dropped["system"].tolist() == ["large-agent-retry"]
    assert "completed 65% of its runs, below --min-completion 80%" in res.dropped.at[0, "reason"]
    assert any("large-agent-retry was left out" in s for s in res.sentences())
    assert "large-agent-retry" not in set(res.table["system"])


def test_frontier_probabilities_share_one_resample() -> None:
    """Two systems with identical per-task scores and costs are on or off together in every replicate."""
    acc = np.array([[1, 0, 1, 1, 0.0], [1, 0, 1, 1, 0.0], [0, 0, 1, 0, 0.0]])
    cost = np.array([[1, 1, 1, 1, 1.0], [1, 1, 1, 1, 1.0], [2, 2, 2, 2, 2.0]])
    _, _, p = bootstrap_frontier(acc, cost, method="pareto", n_resamples=300, rng=3)
    assert p[0] == p[1] == 1.0 and p[2] == 0.0


def test_near_tie_warning() -> None:
    """Nested successes (a solves the 9 easiest of 30 tasks, b the 11 easiest, c the 21 easiest) at costs
    1, 2, 3: b (0.37) is under the chord of a and c (0.5) in nearly every replicate, because the three
    move together, yet b's own upper bound (0.54) is above it. evalkit flags that exclusion as a near-tie."""
    rows = [{"system": name, "task": f"t{t:02d}", "score": float(t < k), "cost": cost}
            for t in range(30) for name, k, cost in (("a", 9, 1.0), ("b", 11, 2.0), ("c", 21, 3.0))]
    res = frontier(pd.DataFrame(rows), n_resamples=1000, rng=0)
    t = res.table.set_index("system")
    assert t.at["b", "p_frontier"] < 0.05 and not t.at["b", "on_frontier"]
    assert t.at["b", "accuracy_high"] > 0.5
    assert t.at["b", "near_tie"] and not t.at["a", "near_tie"]
    assert len(res.warnings) == 1 and res.warnings[0].startswith("b: frontier probability")
    assert not any("Off the frontier at 95% confidence" in s and "b" in s for s in res.sentences())


def test_plot_frontier_draws_intervals_both_ways(runs: pd.DataFrame) -> None:
    from matplotlib.figure import Figure

    from evalkit.plots.metrics import plot_frontier

    res = frontier(runs, n_resamples=100, rng=0)
    ax = plot_frontier(res)
    assert isinstance(ax.figure, Figure) and ax.get_xscale() == "log"
    containers = ax.containers
    assert containers and all(c.has_xerr and c.has_yerr for c in containers)
    given = Figure().add_subplot()
    assert plot_frontier(res, log_cost=False, ax=given) is given


def test_bad_inputs() -> None:
    runs = pd.DataFrame({"system": ["a"], "task": ["t"], "score": [1.0], "cost": [1.0]})
    with pytest.raises(ValueError, match="method must be one of"):
        frontier(runs, method="hull")
    with pytest.raises(ValueError, match="no 'dollars' column"):
        frontier(runs, cost="dollars")
    with pytest.raises(ValueError, match="min_completion must be a share"):
        frontier(runs, min_completion=80)
