"""Style-controlled leaderboard (``evalkit rate --style``): covariates from per-answer columns, the fit of
:func:`evalkit.ratings.style.fit_style_bt`, and how far each model moved against the plain Bradley–Terry fit.

A pair of per-answer columns ``(a, b)`` (answer lengths, token counts, markdown header counts of
``player_a``'s and ``player_b``'s answers) becomes LMArena's covariate
:func:`~evalkit.ratings.style.length_feature`, the standardised ``(a - b) / (a + b)``; a column that
already holds an ``a - b`` difference is used as is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit._deprecate import renamed_keywords
from evalkit._errors import describe_bad, where
from evalkit.ratings.elo import ELO_SCALE
from evalkit.ratings.style import CovKind, StyleFit, fit_style_bt, length_feature

__all__ = ["StyleSpec", "StyleLeaderboard", "style_covariates", "fit_leaderboard", "style_leaderboard"]


@dataclass(frozen=True)
class StyleSpec:
    """Which columns make the style covariates.

    Attributes
    ----------
    pairs : tuple of (str, str)
        ``(a column, b column)`` of per-answer numbers (>= 0); each becomes the covariate ``"a:b"``,
        the standardised ``(a - b) / (a + b)``.
    diffs : tuple of str
        Columns already holding an ``a - b`` difference, used as is (covariate named as the column).
    """

    pairs: tuple[tuple[str, str], ...] = ()
    diffs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = self.names
        if not names:
            raise ValueError("Style control needs at least one covariate: a pair of per-answer columns or a "
                             "difference column.")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"Each style covariate may be given once; got {twice} more than once.")
        same = [f"{a}:{b}" for a, b in self.pairs if a == b]
        if same:
            raise ValueError(f"A style pair takes two different columns (player_a's answer, player_b's); got {same}.")

    @property
    def names(self) -> list[str]:
        """Covariate names: ``"a:b"`` per pair, then the difference columns."""
        return [f"{a}:{b}" for a, b in self.pairs] + list(self.diffs)

    @property
    def columns(self) -> list[str]:
        """Every data column the covariates read, once each, in order."""
        return list(dict.fromkeys([c for pair in self.pairs for c in pair] + list(self.diffs)))


def _finite(frame: pd.DataFrame, col: str, what: str, *, nonnegative: bool) -> np.ndarray:
    """The column as floats; a ValueError naming the first bad row's line and file otherwise."""
    if col not in frame.columns:
        raise ValueError(f"The style column {col!r} ({what}) is not in the comparisons; they have "
                         f"{list(frame.columns)}.")
    raw = frame[col]
    v = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(v) | ((v < 0) if nonnegative else False)
    if bad.any():
        lines = frame["line"].to_numpy() if "line" in frame.columns else None
        first = int(np.flatnonzero(bad)[0])
        src = str(frame["source"].iloc[first]) if "source" in frame.columns else None
        allowed = ("finite numbers >= 0 (a length or count per answer)" if nonnegative
                   else "finite numbers (an a - b difference)")
        raise ValueError(f"The {col!r} column ({what}) must hold {allowed}. Got {describe_bad(raw.to_numpy(), bad)} "
                         f"{where(bad, lines, source=src)} instead.")
    return v


def style_covariates(frame: pd.DataFrame, spec: StyleSpec) -> pd.DataFrame:
    """``frame`` with one float column per covariate of ``spec`` (named as :attr:`StyleSpec.names`).

    The standardisation of a pair uses the rows given (LMArena standardises over the battles rated).

    Raises
    ------
    ValueError
        On a missing column, or a value that is not a finite number (or a negative per-answer number),
        naming the column and the first bad row's line and file; on a covariate that is 0 on every row.
    """
    cols = {}
    for a, b in spec.pairs:
        what = f"style pair {a}:{b}"
        la, lb = (_finite(frame, c, what, nonnegative=True) for c in (a, b))
        cols[f"{a}:{b}"] = length_feature(la, lb)
    for d in spec.diffs:
        cols[d] = _finite(frame, d, f"style difference {d}", nonnegative=False)
    flat = [name for name, v in cols.items() if not np.any(v)]
    if flat:
        raise ValueError(f"The style covariate(s) {flat} are 0 on every row (the two answers never differ), so "
                         "their effect cannot be estimated; leave them out.")
    return frame.assign(**cols)


def fit_leaderboard(fit: StyleFit, frame: pd.DataFrame, *, base: float, level: float) -> pd.DataFrame:
    """Elo table of a covariate-controlled fit with the raw tallies of ``frame`` and the rank columns of
    :func:`evalkit.ratings.ranks.add_rank_columns` (2000 seeded Gaussian draws of the fit's covariance)."""
    from evalkit.io.schema import validate_comparisons
    from evalkit.ratings.ranks import add_rank_columns
    from evalkit.summary import summarize

    table = fit.table(base=base, level=level)
    counts = summarize(validate_comparisons(frame)).set_index("model")[["n", "wins", "losses", "ties", "win_rate"]]
    out = table.join(counts, on="model")
    out.attrs.update(table.attrs, ties="half", converged=fit.converged, n_iter=fit.logit.n_iter)
    n = len(fit.players)
    return add_rank_columns(out, fit.players, ELO_SCALE * fit.theta, cov=fit.cov[:n, :n] * ELO_SCALE**2,
                            how=fit.cov_kind, level=level, df=fit.df)


@dataclass(frozen=True)
class StyleLeaderboard:
    """A style-controlled leaderboard.

    Attributes
    ----------
    table : pandas.DataFrame
        Style-controlled ``rank, model, elo, ci_low, ci_high``, tallies and rank columns, then the plain
        fit's ``elo_plain``, ``elo_change`` = ``elo - elo_plain``, ``rank_plain`` and ``rank_change`` = plain rank -
        controlled rank (positive: the covariates had pushed the model down).
    coefficients : pandas.DataFrame
        :meth:`~evalkit.ratings.style.StyleFit.coef_table` (coef, se, ci_low, ci_high, z, pvalue, odds_ratio).
    fit : StyleFit
    """

    table: pd.DataFrame
    coefficients: pd.DataFrame
    fit: StyleFit = field(repr=False)

    def moved(self) -> str:
        """One sentence: how far style control moved the ratings against the plain fit."""
        t = self.table
        k = int(np.argmax(np.abs(t["elo_change"].to_numpy())))
        row = t.iloc[k]
        return (f"style control moved the Elo by up to {abs(row['elo_change']):.1f} points ({row['model']}: "
                f"{row['elo_plain']:.1f} plain -> {row['elo']:.1f}, rank {int(row['rank_plain'])} -> "
                f"{int(row['rank'])}); {int((t['rank_change'] != 0).sum())} of {len(t)} models changed rank")


@renamed_keywords(level="confidence_level")
def style_leaderboard(
    frame: pd.DataFrame, spec: StyleSpec, *, base: float = 1000.0, confidence_level: float = 0.95,
    kind: CovKind = "sandwich", cluster: str | None = None, cr1: bool = True, position: bool = False,
) -> StyleLeaderboard:
    """Style-controlled Bradley–Terry Elo next to the plain Elo, and the style coefficients.

    Parameters
    ----------
    frame : pandas.DataFrame
        Canonical comparisons with the columns ``spec`` reads.
    spec : StyleSpec
    base, confidence_level
        Mean Elo and interval confidence_level.
    kind, cluster, cr1
        As in :func:`evalkit.ratings.style.fit_style_bt` (intervals: HC0 sandwich, cluster-robust, or
        model-based).
    position : bool, default False
        Also control for the first (left) position (the covariate ``"player_a"``).

    Returns
    -------
    StyleLeaderboard
    """
    from evalkit.ratings.leaderboard import leaderboard

    data = style_covariates(frame, spec)
    fit = fit_style_bt(data, spec.names, intercept=position, kind=kind, cluster=cluster, cr1=cr1)
    table = fit_leaderboard(fit, data, base=base, level=confidence_level)
    plain = leaderboard(frame, base=base, confidence_level=confidence_level).set_index("model")
    table["elo_plain"] = table["model"].map(plain["elo"]).to_numpy(dtype=float)
    table["elo_change"] = table["elo"] - table["elo_plain"]
    table["rank_plain"] = table["model"].map(plain["rank"]).to_numpy(dtype=int)
    table["rank_change"] = table["rank_plain"] - table["rank"]
    table.attrs["interval"] = ("style- and position-controlled, " if position else "style-controlled, ") + \
        table.attrs["interval"]
    return StyleLeaderboard(table=table, coefficients=fit.coef_table(confidence_level), fit=fit)
