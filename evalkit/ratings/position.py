"""Position-adjusted Bradley–Terry: the answer shown first (left) gets a home advantage.

In the canonical frame of a log with positions (``left_right``: ``player_a`` is the left
answer; Arena: ``model_a`` is shown first), the model is::

    logit P(a beats b) = theta_a - theta_b + gamma

``gamma`` is the log-odds advantage of the first / left position, as home advantage enters
sports models; ``exp(gamma)`` multiplies the odds of the left answer winning a game between
equals. The strengths ``theta`` then do not depend on which side a model was shown on.
Without a cluster the fit runs on aggregated counts per ordered pair and outcome (frequency
weights: exact, including the HC0 sandwich); with a cluster it runs on the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit

from evalkit._cluster import t_quantile, t_two_sided_pvalue
from evalkit._deprecate import renamed_keywords
from evalkit.io.schema import validate_comparisons
from evalkit.ratings.counts import aggregate, encode_players
from evalkit.ratings.existence import check_existence
from evalkit.ratings.style import (
    CovKind,
    StyleFit,
    design,
    finish,
    fit_logit,
    fit_style_bt,
    not_converged,
)

__all__ = ["PositionEffect", "fit_position_bt", "position_effect", "position_leaderboard"]


def fit_position_bt(
    frame: pd.DataFrame, *, kind: CovKind = "sandwich", cluster: str | None = None, cr1: bool = True,
    tol: float = 1e-10,
) -> StyleFit:
    """Fit ``theta_a - theta_b + gamma`` with ``gamma`` the advantage of ``player_a`` (the left / first answer).

    Parameters
    ----------
    frame : pandas.DataFrame
        Canonical comparisons with ``player_a`` the answer shown first (ties as 0.5).
    kind, cluster, cr1, tol
        As in :func:`evalkit.ratings.style.fit_style_bt`.

    Returns
    -------
    StyleFit
        ``coef["player_a"]`` is ``gamma``.
    """
    if cluster is not None:
        return fit_style_bt(frame, [], intercept=True, kind=kind, cluster=cluster, cr1=cr1, tol=tol)
    frame = validate_comparisons(frame)
    check_existence(aggregate(frame, validate=False), ties="half")
    players, a, b = encode_players(frame["player_a"], frame["player_b"])
    agg = (pd.DataFrame({"a": a, "b": b, "y": frame["outcome"].to_numpy(float),
                         "w": frame["weight"].to_numpy(float)})
           .groupby(["a", "b", "y"], sort=True, as_index=False)["w"].sum())
    agg = agg[agg["w"] > 0]
    x = sparse.hstack([design(agg["a"].to_numpy(), agg["b"].to_numpy(), len(players)),
                       sparse.csr_matrix(np.ones((len(agg), 1)))]).tocsr()
    lf = fit_logit(x, agg["y"].to_numpy(), agg["w"].to_numpy(), tol=tol)
    if not lf.converged:
        not_converged(frame, lf.n_iter, "position-adjusted")
    return finish(lf, players, ["player_a"], kind=kind, groups=None, cluster=None, cr1=cr1)


@dataclass(frozen=True)
class PositionEffect:
    """The first-position (left) advantage ``gamma`` of a position-adjusted fit.

    Attributes
    ----------
    gamma, se : float
        Log-odds advantage of the left answer and its standard error.
    odds_ratio : float
        ``exp(gamma)``: odds of the left answer winning a game between equals.
    p_left : float
        ``expit(gamma)``: probability that the left one of two equal answers wins.
    pvalue : float
        Wald test of ``gamma = 0`` (``t(df)``).
    cov_kind : str
    df : float
        ``G - 1`` for a cluster-robust fit, infinite otherwise.
    """

    gamma: float
    se: float
    odds_ratio: float
    p_left: float
    pvalue: float
    cov_kind: str
    level: float = 0.95
    df: float = float("inf")

    def confidence_interval(self, level: float | None = None) -> tuple[float, float]:
        """Wald interval of ``gamma`` (exponentiate it for the odds ratio); ``t(df)`` quantile
        (``df = G - 1`` for a cluster-robust fit, the normal otherwise)."""
        q = t_quantile(0.5 + (level or self.level) / 2, self.df)
        return self.gamma - q * self.se, self.gamma + q * self.se

    def describe(self) -> str:
        lo, hi = np.exp(self.confidence_interval())
        side = "left (first)" if self.gamma > 0 else "right (second)"
        return (f"bias-adjusted odds of the left answer between equals: {self.odds_ratio:.3g} "
                f"({self.level:.0%} CI {lo:.3g}..{hi:.3g}, {self.cov_kind}); favours the {side} position, "
                f"Wald p = {self.pvalue:.2g}")


def position_effect(fit: StyleFit, level: float = 0.95) -> PositionEffect:
    """The ``player_a`` coefficient of a position-adjusted fit as a :class:`PositionEffect`."""
    n = len(fit.players)
    k = list(fit.coef.index).index("player_a")
    g, se = float(fit.coef.iloc[k]), float(fit.se()[n + k])
    return PositionEffect(gamma=g, se=se, odds_ratio=float(np.exp(g)), p_left=float(expit(g)),
                          pvalue=t_two_sided_pvalue(g / se, fit.df), cov_kind=fit.cov_kind, level=level,
                          df=fit.df)


@renamed_keywords(level="confidence_level")
def position_leaderboard(
    frame: pd.DataFrame, *, base: float = 1000.0, confidence_level: float = 0.95, kind: CovKind = "sandwich",
    cluster: str | None = None,
) -> pd.DataFrame:
    """Position-adjusted Elo leaderboard (``rate --adjust-position``): ``rank, model, elo, ci_low, ci_high``,
    the raw tallies and the rank columns of :func:`evalkit.ratings.ranks.add_rank_columns` (from 2000 seeded
    Gaussian draws of the fit's covariance); ``attrs`` carries the interval description and the position effect."""
    from evalkit.ratings.style_board import fit_leaderboard

    fit = fit_position_bt(frame, kind=kind, cluster=cluster)
    out = fit_leaderboard(fit, frame, base=base, level=confidence_level)
    eff = position_effect(fit, confidence_level)
    out.attrs.update(position=eff.describe(), position_gamma=eff.gamma)
    out.attrs["interval"] = "position-adjusted, " + out.attrs["interval"]
    return out
