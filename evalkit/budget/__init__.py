"""Elo per budget: best-so-far curves, self-Elo and joint Elo, the 400-Elo-per-decade
reference, the scaling inflection point, and repeated-sampling estimators.

Typical use::

    from evalkit.io import read_traces
    from evalkit.budget import elo_curves, inflection_point

    traces = read_traces("sessions.csv")
    res = elo_curves(traces, mode="self", grid=1.5, n_resamples=500, rng=0)
    res.curve                      # system, budget, elo, ci_low, ci_high, n_games, ...
    inflection_point(res, system="agent-a").b_inf
"""

from evalkit.budget.composite import best_of_groups, best_of_sessions
from evalkit.budget.curves import CurveResult, TiesWarning, elo_curves, session_multiplicity
from evalkit.budget.games import GameCounts, count_games
from evalkit.budget.grid import Checkpoints, best_so_far, geometric_grid
from evalkit.budget.sampling import best_of_k, best_of_k_win_probability, pass_at_k
from evalkit.budget.slopes import (
    REFERENCE_SLOPE,
    InflectionResult,
    SplitAdvantage,
    allocate_sessions,
    inflection_point,
    local_slopes,
    reference_line,
    split_advantage,
    split_table,
)

__all__ = [
    "geometric_grid",
    "best_so_far",
    "Checkpoints",
    "count_games",
    "GameCounts",
    "elo_curves",
    "CurveResult",
    "TiesWarning",
    "session_multiplicity",
    "REFERENCE_SLOPE",
    "reference_line",
    "local_slopes",
    "inflection_point",
    "InflectionResult",
    "allocate_sessions",
    "split_advantage",
    "SplitAdvantage",
    "split_table",
    "pass_at_k",
    "best_of_k",
    "best_of_k_win_probability",
    "best_of_sessions",
    "best_of_groups",
]
