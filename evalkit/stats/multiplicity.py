"""Multiplicity: adjust a named family of p-values (Holm by default, Benjamini-Hochberg on request).

statsmodels' ``multipletests`` defaults to Holm-Sidak (``"hs"``), not Holm; evalkit's
``"holm"`` is Holm's step-down Bonferroni procedure, and every result says which family
of tests was corrected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from evalkit.stats._validate import check_pvalues

__all__ = ["MULTIPLICITY_METHODS", "MultiplicityResult", "adjust_pvalues"]

MULTIPLICITY_METHODS = {
    "holm": "Holm step-down (family-wise error rate)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "bonferroni": "Bonferroni (family-wise error rate)",
    "none": "no correction",
}


@dataclass(frozen=True)
class MultiplicityResult:
    """Adjusted p-values of one family of tests.

    Attributes
    ----------
    names : tuple of str
        Test names in input order.
    pvalues, adjusted : tuple of float
        Raw and adjusted p-values (input order).
    reject : tuple of bool
        ``adjusted <= alpha``.
    method : str
        Key of :data:`MULTIPLICITY_METHODS`.
    family : str
        What the family is (printed in reports).
    alpha : float
    """

    names: tuple[str, ...]
    pvalues: tuple[float, ...]
    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    method: str
    family: str
    alpha: float

    @property
    def description(self) -> str:
        """One line for a report: method, family size and family."""
        fam = f" over the family '{self.family}'" if self.family else ""
        return f"{MULTIPLICITY_METHODS[self.method]}, {len(self.names)} tests{fam}, alpha = {self.alpha:g}"

    def to_frame(self) -> pd.DataFrame:
        """Tidy frame: test, pvalue, pvalue_adjusted, reject, method, family."""
        return pd.DataFrame({
            "test": list(self.names), "pvalue": list(self.pvalues),
            "pvalue_adjusted": list(self.adjusted), "reject": list(self.reject),
            "method": self.method, "family": self.family,
        })


def _holm(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="stable")
    adj_sorted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj_sorted
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adj_sorted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = adj_sorted
    return out


def adjust_pvalues(
    pvalues: Mapping[str, float] | pd.Series | Sequence[float] | ArrayLike,
    *, method: str = "holm", family: str = "", alpha: float = 0.05,
    names: Sequence[str] | None = None,
) -> MultiplicityResult:
    """Adjust a family of p-values for multiple testing.

    Parameters
    ----------
    pvalues : mapping name -> p, Series, or sequence of p-values in [0, 1]
    method : {"holm", "bh", "bonferroni", "none"}
        ``"holm"`` (default) equals statsmodels ``multipletests(p, method="holm")``;
        ``"bh"`` equals ``method="fdr_bh"``.
    family : str
        Name of the family (e.g. "pairwise model comparisons, AlpacaEval 1"); reports print it.
    alpha : float
        Level for ``reject``.
    names : sequence of str, optional
        Test names for a plain sequence (default "test 1", "test 2", ...).

    Raises
    ------
    ValueError
        For p-values outside [0, 1] or NaN, an unknown method, alpha outside (0, 1).
    """
    if method not in MULTIPLICITY_METHODS:
        raise ValueError(f"method must be one of {tuple(MULTIPLICITY_METHODS)}; got {method!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    if isinstance(pvalues, Mapping):
        keys, vals = [str(k) for k in pvalues], list(pvalues.values())
    elif isinstance(pvalues, pd.Series):
        keys, vals = [str(k) for k in pvalues.index], pvalues.to_list()
    else:
        vals = list(np.asarray(pvalues, dtype=float).reshape(-1))
        keys = [str(k) for k in names] if names is not None else [f"test {i + 1}" for i in range(len(vals))]
    if len(keys) != len(vals):
        raise ValueError(f"names has {len(keys)} entries for {len(vals)} p-values.")
    p = check_pvalues(vals)
    adj = {"holm": _holm, "bh": _bh, "bonferroni": lambda q: np.minimum(1.0, q * q.size),
           "none": lambda q: q.copy()}[method](p)
    return MultiplicityResult(
        names=tuple(keys), pvalues=tuple(float(v) for v in p), adjusted=tuple(float(v) for v in adj),
        reject=tuple(bool(v) for v in adj <= alpha), method=method, family=family, alpha=float(alpha),
    )


def _adjust_pair_table(
    table: pd.DataFrame, *, method: str, alpha: float, family: str | None, describe: str,
) -> MultiplicityResult | None:
    """Adjust the tested rows (non-missing ``pvalue``) of a pair table ``a, b, ...`` in place.

    Fills ``pvalue_adjusted`` on the tested rows and sets a nullable boolean ``reject`` column
    (NA for untested rows). The family is ``family`` or ``f"{k} {describe}"`` with ``k`` the
    number of tested pairs; returns None when no row was tested.
    """
    tested = table["pvalue"].notna()
    mult = None
    reject = pd.array([pd.NA] * len(table), dtype="boolean")
    if tested.any():
        fam = family or f"{int(tested.sum())} {describe}"
        names = [f"{a} vs {b}" for a, b in zip(table.loc[tested, "a"], table.loc[tested, "b"], strict=True)]
        mult = adjust_pvalues(table.loc[tested, "pvalue"].to_numpy(float), method=method, alpha=alpha, family=fam,
                              names=names)
        table.loc[tested, "pvalue_adjusted"] = np.asarray(mult.adjusted, dtype=float)
        reject[np.flatnonzero(tested.to_numpy())] = np.asarray(mult.reject, dtype=bool)
    table["reject"] = reject
    return mult
