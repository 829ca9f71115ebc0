"""The options of one Elo-per-budget run, validated once and carried to the helpers.

:func:`evalkit.budget.elo_curves` keeps its keyword signature (and its defaults); it builds
a :class:`CurveSpec` from them so that the grid, game, fit and band helpers receive one frozen
object instead of a dozen keywords.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.budget.games import MISSING
from evalkit.ratings.bt import TiesMode

__all__ = ["MODES", "CurveSpec"]

MODES = ("self", "joint")


@dataclass(frozen=True)
class CurveSpec:
    """Options of :func:`evalkit.budget.elo_curves` (see its docstring for each field).

    No defaults here: ``elo_curves`` is the one place that sets them. Validation happens on
    construction, in the order and with the messages of ``elo_curves``.
    """

    mode: str
    grid: float
    budgets: np.ndarray | None
    start: float | None
    stop: float | None
    n_resamples: int
    confidence_level: float
    missing: str
    within_session: bool | None
    ties: TiesMode
    prior: float
    higher_is_better: bool
    anchor: str | None
    tie_warning: float

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {self.mode!r}.")
        if self.missing not in MISSING:
            raise ValueError(f"missing must be one of {MISSING}; got {self.missing!r}.")
        if not (isinstance(self.n_resamples, (int, np.integer)) and self.n_resamples >= 0):
            raise ValueError(f"n_resamples must be an integer >= 0; got {self.n_resamples!r}.")
        if not 0 < self.confidence_level < 1:
            raise ValueError(f"confidence_level must be in (0, 1); got {self.confidence_level!r}.")
        if not (np.isfinite(self.prior) and self.prior >= 0):
            raise ValueError(f"prior must be a number of pseudo-games >= 0; got {self.prior!r}.")

    @property
    def within(self) -> bool:
        """Whether checkpoints of one session play each other (``within_session``, default False)."""
        return False if self.within_session is None else bool(self.within_session)

    @property
    def options(self) -> dict:
        """The options recorded in :attr:`CurveResult.options`."""
        return {
            "grid": self.grid, "n_resamples": int(self.n_resamples), "missing": self.missing,
            "within_session": self.within, "ties": self.ties, "prior": self.prior,
            "higher_is_better": self.higher_is_better,
        }
