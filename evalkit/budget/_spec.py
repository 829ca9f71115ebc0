"""The options of one Elo-per-budget run, validated once and carried to the helpers.

:func:`evalkit.budget.elo_curves` keeps its keyword signature (and its defaults); it builds
a :class:`CurveSpec` from them so that the grid, game, fit and band helpers receive one frozen
object instead of a dozen keywords.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.budget.games import MISSING

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
    bootstrap: int
    confidence_level: float
    missing: str
    within_session: bool | None
    ties: str
    prior: float
    higher_is_better: bool
    anchor: str | None
    tie_warning: float

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {self.mode!r}.")
        if self.missing not in MISSING:
            raise ValueError(f"missing must be one of {MISSING}; got {self.missing!r}.")
        if not (isinstance(self.bootstrap, (int, np.integer)) and self.bootstrap >= 0):
            raise ValueError(f"bootstrap must be an integer >= 0; got {self.bootstrap!r}.")
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
            "grid": self.grid, "bootstrap": int(self.bootstrap), "missing": self.missing,
            "within_session": self.within, "ties": self.ties, "prior": self.prior,
            "higher_is_better": self.higher_is_better,
        }
