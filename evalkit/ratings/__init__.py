"""Bradley–Terry / Elo ratings from pairwise comparisons.

Fits run on aggregated pair counts (:func:`aggregate` -> :class:`PairCounts`), check that
the ratings exist before fitting (and name the models when they do not), report their
convergence, and carry their uncertainty: sandwich (robust, optionally cluster-robust) or
inverse-Hessian standard errors, or a seeded bootstrap over comparisons or clusters.

Examples
--------
>>> import pandas as pd
>>> from evalkit.ratings import aggregate, fit_bt, elo_table
>>> frame = pd.DataFrame({"player_a": ["a", "b", "c", "a", "b"], "player_b": ["b", "c", "a", "c", "a"],
...                       "outcome": [1.0, 1.0, 1.0, 0.5, 0.0]})
>>> fit = fit_bt(aggregate(frame), ties="half")
>>> fit.converged, fit.players
(True, ('a', 'b', 'c'))
>>> list(elo_table(fit, anchor="c")["interval"])[0]
'difference with c'
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

# exports load on first use (PEP 562): a fast path importing one module of the package
# does not pay for pandas / scipy through the others
_EXPORTS: dict[str, str] = {
    "BTBootstrap": "bootstrap",
    "bootstrap_bt": "bootstrap",
    "BTFit": "bt",
    "fit_bt": "bt",
    "PairCounts": "counts",
    "aggregate": "counts",
    "ELO_SCALE": "elo",
    "elo_table": "elo",
    "theta_to_elo": "elo",
    "check_existence": "existence",
    "LEADERBOARD_COLUMNS": "leaderboard",
    "leaderboard": "leaderboard",
    "online_elo": "online",
    "average_win_rate": "tallies",
    "counting": "tallies",
    "win_rate_matrix": "tallies",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from evalkit.ratings.bootstrap import BTBootstrap, bootstrap_bt
    from evalkit.ratings.bt import BTFit, fit_bt
    from evalkit.ratings.counts import PairCounts, aggregate
    from evalkit.ratings.elo import ELO_SCALE, elo_table, theta_to_elo
    from evalkit.ratings.existence import check_existence
    from evalkit.ratings.leaderboard import LEADERBOARD_COLUMNS, leaderboard
    from evalkit.ratings.online import online_elo
    from evalkit.ratings.tallies import average_win_rate, counting, win_rate_matrix

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

# A name that is also a submodule must be bound now: once any code imports the submodule
# evalkit.ratings.leaderboard, the import system sets the package attribute to the module, and
# a lazy __getattr__ would never be asked again. (This module imports neither pandas nor scipy.)
from evalkit.ratings.leaderboard import LEADERBOARD_COLUMNS, leaderboard  # noqa: E402

__all__ = [
    "PairCounts",
    "aggregate",
    "BTFit",
    "fit_bt",
    "check_existence",
    "ELO_SCALE",
    "theta_to_elo",
    "elo_table",
    "BTBootstrap",
    "bootstrap_bt",
    "online_elo",
    "counting",
    "win_rate_matrix",
    "average_win_rate",
    "LEADERBOARD_COLUMNS",
    "leaderboard",
]
