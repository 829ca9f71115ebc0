"""Bradley–Terry / Elo ratings from pairwise comparisons.

Fits run on aggregated pair counts (:func:`aggregate` -> :class:`PairCounts`), check that
the ratings exist before fitting, and carry their uncertainty.
"""

from evalkit.ratings.bt import BTFit, fit_bt
from evalkit.ratings.counts import PairCounts, aggregate
from evalkit.ratings.existence import check_existence

__all__ = ["PairCounts", "aggregate", "BTFit", "fit_bt", "check_existence"]
