"""Agreement between judges (or an evaluator and judges), rank correlation, position bias.

* :func:`percent_agreement` - share of items on which two raters give the same label,
  with a Wilson interval;
* :func:`cohen_kappa` - chance-corrected agreement with the asymptotic standard errors of
  Fleiss, Cohen & Everitt (1969), as statsmodels' ``cohens_kappa``;
* :func:`spearman` - Spearman's rank correlation (scipy) with a Fisher-z interval
  (Bonett & Wright 2000 standard error);
* :func:`fleiss_kappa` - Fleiss' kappa for a fixed number of raters per item (equals
  statsmodels' ``fleiss_kappa(table, method="fleiss")``);
* :func:`krippendorff_alpha` - Krippendorff's alpha for any number of raters with missing
  labels (nominal, ordinal, interval or ratio distance);
* :func:`position_bias_test` - does a pairwise judge prefer the answer shown first/left?
  Exact binomial test of left wins among decisive judgments (the GPT-3.5 judge of LLMFAO
  prefers the left answer about 2:1).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from evalkit.stats._result import Estimate, SignTestResult, TestResult
from evalkit.stats._validate import as_sample, check_alternative, check_confidence_level
from evalkit.stats.proportions import wilson_interval
from evalkit.stats.sign import sign_test_from_counts

__all__ = ["percent_agreement", "panel_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha",
           "krippendorff_alpha_counts", "spearman",
           "position_bias_test"]

_ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _labels(a: ArrayLike, b: ArrayLike) -> tuple[pd.Series, pd.Series]:
    sa = pd.Series(np.asarray(a, dtype=object).reshape(-1))
    sb = pd.Series(np.asarray(b, dtype=object).reshape(-1))
    if sa.size != sb.size:
        raise ValueError(f"The two raters must label the same items: got {sa.size} and {sb.size} labels.")
    missing = sa.isna() | sb.isna()
    if missing.any():
        raise ValueError(
            f"{int(missing.sum())} items lack a label from one rater (first at position "
            f"{int(np.flatnonzero(missing.to_numpy())[0])}); drop them explicitly first."
        )
    if sa.size < 2:
        raise ValueError(f"Agreement needs at least 2 items; got {sa.size}.")
    return sa, sb


def percent_agreement(a: ArrayLike, b: ArrayLike, *, confidence_level: float = 0.95) -> Estimate:
    """Share of items where raters ``a`` and ``b`` agree, with a Wilson interval."""
    sa, sb = _labels(a, b)
    k = int((sa.to_numpy() == sb.to_numpy()).sum())
    base = wilson_interval(k, sa.size, confidence_level=confidence_level)
    return Estimate(method="percent agreement with Wilson interval", estimate=base.estimate, se=base.se,
                    n=base.n, confidence_level=confidence_level, details={"agree": k}, _ci=base._ci)


def panel_agreement(
    evaluator: ArrayLike, panel: pd.DataFrame | ArrayLike, *, confidence_level: float = 0.95
) -> Estimate:
    """Agreement of an evaluator with the majority of a panel of judges (e.g. six external votes).

    Parameters
    ----------
    evaluator : array_like
        The evaluator's label per item.
    panel : DataFrame or 2-d array_like
        One column per judge, one row per item (missing votes allowed).

    Returns
    -------
    Estimate
        Share of items where the evaluator's label equals the panel's strict majority
        label, with a Wilson interval. Items without a strict majority (tied panel, or no
        votes) are left out and counted in ``details["no_majority"]``; ``details`` also
        holds each judge's agreement with the evaluator.
    """
    ev = pd.Series(np.asarray(evaluator, dtype=object).reshape(-1))
    votes = pd.DataFrame(cast(Any, panel)).reset_index(drop=True)  # the stubs take no 2-d ArrayLike
    if len(votes) != ev.size:
        raise ValueError(f"panel has {len(votes)} items (rows) but the evaluator labelled {ev.size}.")
    if votes.shape[1] < 1:
        raise ValueError("panel needs at least one judge (column).")
    long = votes.melt(ignore_index=False, var_name="judge", value_name="label").dropna(subset=["label"])
    counts = long.groupby([long.index, "label"]).size().unstack(fill_value=0).reindex(range(len(votes)), fill_value=0)
    top = counts.max(axis=1)
    strict = (counts.eq(top, axis=0).sum(axis=1) == 1) & (top > 0)
    majority = counts.idxmax(axis=1).where(strict)
    keep = strict.to_numpy() & ev.notna().to_numpy()
    if keep.sum() == 0:
        raise ValueError("No item has a strict panel majority and an evaluator label; agreement is undefined.")
    k = int((ev[keep].to_numpy() == majority[keep].to_numpy()).sum())
    base = wilson_interval(k, int(keep.sum()), confidence_level=confidence_level)
    per_judge = {str(j): float((votes[j] == ev).sum() / votes[j].notna().sum()) for j in votes.columns
                 if votes[j].notna().any()}
    return Estimate(
        method="agreement with the panel majority, Wilson interval", estimate=base.estimate, se=base.se,
        n=base.n, handling=f"{int((~strict).sum())} items without a strict panel majority left out",
        confidence_level=confidence_level,
        details={"agree": k, "no_majority": int((~strict).sum()), "per_judge": per_judge}, _ci=base._ci,
    )


def cohen_kappa(a: ArrayLike, b: ArrayLike, *, confidence_level: float = 0.95) -> TestResult:
    """Cohen's kappa between two raters' labels on the same items.

    Returns
    -------
    TestResult
        ``estimate`` kappa with an asymptotic normal interval (kappa +- z SE);
        ``statistic`` z = kappa / SE0 and ``pvalue`` for H0: kappa = 0 (SE0 is the SE
        under independence). Equals statsmodels
        ``cohens_kappa(pd.crosstab(a, b))`` (``kappa``, ``std_kappa``, ``z_value``,
        ``pvalue_two_sided``).
    """
    check_confidence_level(confidence_level)
    sa, sb = _labels(a, b)
    cats = pd.Index(sorted(set(sa) | set(sb), key=str))
    table = pd.crosstab(pd.Categorical(sa, categories=cats), pd.Categorical(sb, categories=cats),
                        dropna=False).to_numpy(dtype=float)
    n = table.sum()
    p = table / n
    row, col = p.sum(1), p.sum(0)
    pe = float(row @ col)
    po = float(np.trace(p))
    if pe == 1.0:
        raise ValueError("Both raters use a single, identical label for every item: kappa is undefined (0/0).")
    kappa = (po - pe) / (1 - pe)
    term_a = float((np.diag(p) * (1 - (row + col) * (1 - kappa)) ** 2).sum())
    off = p * (col[:, None] + row[None, :]) ** 2
    np.fill_diagonal(off, 0.0)
    term_b = (1 - kappa) ** 2 * float(off.sum())
    term_c = (kappa - pe * (1 - kappa)) ** 2
    se = float(np.sqrt((term_a + term_b - term_c) / (1 - pe) ** 2 / n))
    se0 = float(np.sqrt((pe + pe**2 - float((row * col * (row + col)).sum())) / ((1 - pe) ** 2 * n)))
    z = kappa / se0

    def ci(level: float) -> tuple[float, float]:
        q = stats.norm.ppf(0.5 + level / 2)
        return kappa - q * se, kappa + q * se

    return TestResult(
        method="Cohen's kappa (asymptotic SE, Fleiss-Cohen-Everitt)",
        statistic=float(z), statistic_name="z (kappa / SE under H0)",
        pvalue=float(2 * stats.norm.sf(abs(z))), alternative="two-sided", n=int(n),
        estimate=float(kappa), estimate_name="Cohen's kappa",
        effect_size=float(kappa), effect_size_name="Cohen's kappa",
        confidence_level=confidence_level,
        details={"percent_agreement": po, "expected_agreement": pe, "se": se, "se0": se0,
                 "categories": tuple(map(str, cats))},
        _ci=ci,
    )


def spearman(
    x: ArrayLike, y: ArrayLike, *, alternative: str = "two-sided", confidence_level: float = 0.95
) -> TestResult:
    """Spearman's rank correlation with scipy's p-value and a Fisher-z interval.

    The statistic and p-value equal ``scipy.stats.spearmanr(x, y, alternative=...)``; the
    interval is tanh(atanh(rho) +- z * sqrt((1 + rho^2 / 2) / (n - 3))) (Bonett & Wright).
    """
    check_alternative(alternative)
    check_confidence_level(confidence_level)
    a = as_sample(x, name="x", min_n=4)
    b = as_sample(y, name="y", min_n=4)
    if a.size != b.size:
        raise ValueError(f"x and y must be paired: got {a.size} and {b.size} values.")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise ValueError("One of the samples is constant (zero variance): the rank correlation is undefined.")
    res = stats.spearmanr(a, b, alternative=alternative)
    rho = float(res.statistic)
    n = a.size

    def ci(level: float) -> tuple[float, float]:
        if abs(rho) == 1.0:
            return rho, rho
        se = np.sqrt((1 + rho**2 / 2) / (n - 3))
        z = np.arctanh(rho)
        if alternative == "two-sided":
            q = stats.norm.ppf(0.5 + level / 2)
            return float(np.tanh(z - q * se)), float(np.tanh(z + q * se))
        q = stats.norm.ppf(level)
        return (-1.0, float(np.tanh(z + q * se))) if alternative == "less" else (float(np.tanh(z - q * se)), 1.0)

    return TestResult(
        method="Spearman rank correlation", statistic=rho, statistic_name="rho",
        pvalue=float(res.pvalue), alternative=alternative, n=int(n), df=float(n - 2),
        estimate=rho, estimate_name="Spearman's rho", effect_size=rho, effect_size_name="Spearman's rho",
        confidence_level=confidence_level, handling="tied values get average ranks", _ci=ci,
    )


def position_bias_test(
    winners: ArrayLike, *, left: str = "left", right: str = "right", tie: str | None = "tie",
    alternative: str = "two-sided", confidence_level: float = 0.95,
) -> SignTestResult:
    """Does a pairwise judge prefer the first-shown (left) answer?

    Parameters
    ----------
    winners : array_like of str
        Per judgment, which position won: ``left``, ``right`` or ``tie`` labels.
    left, right, tie : str
        The labels used (``tie=None`` if the data has no ties).
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: the left answer wins more than half of the decisive judgments.

    Returns
    -------
    SignTestResult
        Exact binomial test of left wins among decisive judgments (ties dropped and
        counted): ``estimate`` the left-win share with a Clopper-Pearson interval.

    Notes
    -----
    Without answer-order randomisation a left preference confounds model quality with
    position; with randomised order it measures the judge's bias directly.
    """
    w = pd.Series(np.asarray(winners, dtype=object).reshape(-1))
    allowed = {left, right} | ({tie} if tie is not None else set())
    bad = ~w.isin(allowed)
    if bad.any():
        raise ValueError(
            f"winners must be one of {sorted(allowed)}; got {w[bad].iloc[0]!r} in {int(bad.sum())} rows "
            f"(first at position {int(np.flatnonzero(bad.to_numpy())[0])}) instead."
        )
    n_left, n_right = int((w == left).sum()), int((w == right).sum())
    n_tie = int(w.size - n_left - n_right)
    res = sign_test_from_counts(n_left, n_right, n_tie, alternative=alternative,
                                confidence_level=confidence_level)
    return replace(res, method="Position-bias test (exact binomial on left vs right wins)",
                   estimate_name="share of decisive judgments won by the left answer",
                   statistic_name="left wins")


def fleiss_kappa(table: ArrayLike) -> float:
    """Fleiss' kappa from an items x categories table of counts (each row: how many raters chose each label).

    Every item must have the same number of raters (Fleiss 1971). Equals statsmodels
    ``statsmodels.stats.inter_rater.fleiss_kappa(table, method="fleiss")``; for items with
    different numbers of raters use :func:`krippendorff_alpha`.
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] < 2 or t.shape[1] < 2:
        raise ValueError(f"'table' must be items x categories with at least 2 of each; got shape {t.shape}.")
    if (t < 0).any() or not np.all(t == np.round(t)):
        raise ValueError("'table' must hold non-negative integer counts of raters per (item, category).")
    raters = t.sum(axis=1)
    if np.any(raters != raters[0]) or raters[0] < 2:
        raise ValueError(f"Fleiss' kappa needs the same number (>= 2) of raters on every item; got {int(raters.min())} "
                         f"to {int(raters.max())}. Use krippendorff_alpha for unequal numbers.")
    n = raters[0]
    p_cat = t.sum(axis=0) / t.sum()
    p_item = (np.sum(t * t, axis=1) - n) / (n * (n - 1))
    p_e = float(np.sum(p_cat**2))
    if p_e == 1.0:
        raise ValueError("All raters used one label on every item: Fleiss' kappa is undefined (0/0).")
    return float((p_item.mean() - p_e) / (1 - p_e))


def krippendorff_alpha(reliability_data: ArrayLike, *, level: str = "nominal") -> float:
    """Krippendorff's alpha from a raters x units array (NaN = not rated).

    Units with fewer than two labels are left out (as Krippendorff prescribes). Built on the
    coincidence matrix: ``alpha = 1 - D_o / D_e``. On the worked example of Krippendorff (2011,
    "Computing Krippendorff's alpha-reliability", 4 coders x 12 units) it gives 0.743 (nominal),
    0.815 (ordinal), 0.849 (interval), 0.797 (ratio), as the paper and the ``krippendorff``
    package do.

    Parameters
    ----------
    reliability_data : 2-d array_like
        One row per rater, one column per unit; numeric labels (categorical labels: code them
        first, e.g. with ``pandas.factorize``), NaN where a rater did not rate a unit.
    level : {"nominal", "ordinal", "interval", "ratio"}
    """
    d = np.asarray(reliability_data, dtype=float)
    if d.ndim != 2:
        raise ValueError(f"'reliability_data' must be raters x units (2-d); got {d.ndim} dimensions.")
    values = np.unique(d[np.isfinite(d)])
    if values.size < 2:
        raise ValueError("Krippendorff's alpha needs at least two different labels in the data.")
    idx = np.searchsorted(values, np.where(np.isfinite(d), d, values[0]))
    counts = np.zeros((d.shape[1], values.size))  # units x values
    for r in range(d.shape[0]):
        ok = np.isfinite(d[r])
        np.add.at(counts, (np.flatnonzero(ok), idx[r, ok]), 1.0)
    return krippendorff_alpha_counts(counts, values, level=level)


def krippendorff_alpha_counts(counts: ArrayLike, values: ArrayLike, *, level: str = "nominal") -> float:
    """Krippendorff's alpha from a units x values table of how many raters gave each value to each unit.

    The same statistic as :func:`krippendorff_alpha` without a raters x units matrix (for a crowd
    of thousands of raters, or long-format data: ``groupby([unit, label]).size().unstack()``).
    ``values`` are the (sorted, numeric) labels of the columns.
    """
    if level not in _ALPHA_LEVELS:
        raise ValueError(f"'level' must be one of {_ALPHA_LEVELS}; got {level!r}.")
    table = np.asarray(counts, dtype=float)
    vals = np.asarray(values, dtype=float)
    if table.ndim != 2 or table.shape[1] != vals.size or vals.size < 2:
        raise ValueError(f"'counts' must be units x {vals.size} values (>= 2); got shape {table.shape}.")
    m = table.sum(axis=1)
    table, m = table[m >= 2], m[m >= 2]
    coinc = (table[:, :, None] * table[:, None, :]) / (m - 1)[:, None, None]
    coinc = coinc.sum(axis=0) - np.diag((table / (m - 1)[:, None]).sum(axis=0))
    n_c = coinc.sum(axis=1)
    n = n_c.sum()
    c, k = np.meshgrid(vals, vals, indexing="ij")
    if level == "nominal":
        delta = (c != k).astype(float)
    elif level == "interval":
        delta = (c - k) ** 2
    elif level == "ratio":
        delta = np.divide((c - k) ** 2, (c + k) ** 2, out=np.zeros_like(c), where=(c + k) != 0)
    else:
        cum = np.cumsum(n_c)
        gi, gk = np.meshgrid(np.arange(vals.size), np.arange(vals.size), indexing="ij")
        lo, hi = np.minimum(gi, gk), np.maximum(gi, gk)
        delta = (cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0) - (n_c[gi] + n_c[gk]) / 2) ** 2
    d_o = float(np.sum(coinc * delta)) / n
    d_e = float(np.sum(np.outer(n_c, n_c) * delta)) / (n * (n - 1))
    if d_e == 0:
        raise ValueError("Expected disagreement is 0 (one label used): Krippendorff's alpha is undefined.")
    return 1.0 - d_o / d_e
