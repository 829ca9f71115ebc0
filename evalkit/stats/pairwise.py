"""Paired comparisons between many systems on shared items, with a multiplicity correction.

One call tests every requested pair of systems on the items both were scored on (mean
difference, its SE and t interval, the correlation between the two systems, a paired test,
Cohen's d_z), reports how many items each pair could not use, and adjusts the family of
p-values (Holm by default). Pairs whose differences are all zero (e.g. a duplicated
submission) cannot be tested; they are listed with a note and left out of the family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.stats._validate import named_pairs
from evalkit.stats.means import paired_difference
from evalkit.stats.multiplicity import MultiplicityResult, _adjust_pair_table
from evalkit.stats.paired import wilcoxon_test
from evalkit.stats.scores import check_columns
from evalkit.stats.sign import sign_test
from evalkit.stats.ttest import paired_ttest

__all__ = ["PAIRED_TESTS", "PairwiseComparison", "compare_systems"]

PAIRED_TESTS = {
    "paired_t": lambda a, b: paired_ttest(a, b),
    "wilcoxon": lambda a, b: wilcoxon_test(a, b),
    "sign": lambda a, b: sign_test(a, b),
}


@dataclass(frozen=True)
class PairwiseComparison:
    """Result of :func:`compare_systems`.

    Attributes
    ----------
    table : DataFrame
        One row per pair: ``a, b, n_items, only_a, only_b, mean_a, mean_b, diff, se, ci_low,
        ci_high, correlation, effect_size, test, statistic, df, pvalue, pvalue_adjusted,
        reject, note``. ``diff = mean_a - mean_b`` over shared items.
    multiplicity : MultiplicityResult or None
        The adjustment of the tested pairs (None if no pair could be tested).
    test : str
        Method name of the paired test.
    confidence_level : float
    """

    table: pd.DataFrame
    multiplicity: MultiplicityResult | None
    test: str
    confidence_level: float

    @property
    def unmatched_report(self) -> str:
        """Sentence on the items each pair could not use (nothing is dropped silently)."""
        t = self.table
        bad = t[(t["only_a"] > 0) | (t["only_b"] > 0)]
        if bad.empty:
            return "Every pair was compared on all items of both systems."
        worst = bad.assign(m=bad["only_a"] + bad["only_b"]).sort_values("m", ascending=False).iloc[0]
        return (f"{len(bad)} of {len(t)} pairs had items scored for only one system (left out of that pair's "
                f"test); most: {worst['a']} vs {worst['b']} ({int(worst['only_a'])} items only for "
                f"{worst['a']}, {int(worst['only_b'])} only for {worst['b']}).")


def _pairs(wide: pd.DataFrame, pairs: str | Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    systems = list(wide.columns)
    if isinstance(pairs, str):
        order = wide.mean(axis=0).sort_values(ascending=False).index.tolist()
        if pairs == "all":
            return [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
        if pairs == "adjacent":
            return list(zip(order[:-1], order[1:], strict=True))
        raise ValueError(f"pairs must be 'all', 'adjacent' or a list of (a, b) tuples; got {pairs!r}.")
    out, unknown = named_pairs(pairs, systems)
    if unknown:
        raise ValueError(f"Unknown systems in pairs: {unknown}; the scores have {systems[:10]}.")
    return out


def compare_systems(
    scores: pd.DataFrame, *, pairs: str | Sequence[tuple[str, str]] = "all", system: str = "system",
    item: str = "item", score: str = "score", test: str = "paired_t", adjust: str = "holm",
    family: str | None = None, alpha: float = 0.05, confidence_level: float = 0.95,
) -> PairwiseComparison:
    """Paired comparisons of systems on shared items, adjusted for multiplicity.

    Parameters
    ----------
    scores : DataFrame
        Long table, one score per (system, item) (see :func:`evalkit.stats.item_scores` to
        build it from comparisons).
    pairs : {"all", "adjacent"} or list of (a, b)
        All pairs (ordered by mean score, higher first), neighbours in that order, or given pairs.
    system, item, score : str
        Column names.
    test : {"paired_t", "wilcoxon", "sign"}
        The paired test per pair.
    adjust : {"holm", "bh", "bonferroni", "none"}
        Multiplicity correction over the tested pairs.
    family : str, optional
        Name of the family for the report (default: "<k> paired comparisons (<pairs>)").
    alpha, confidence_level : float

    Returns
    -------
    PairwiseComparison
    """
    check_columns(scores, {"system": system, "item": item, "score": score})
    if test not in PAIRED_TESTS:
        raise ValueError(f"test must be one of {tuple(PAIRED_TESTS)}; got {test!r}.")
    wide = _wide_scores(scores, system=system, item=item, score=score)
    rows = [_pair_row(wide, a, b, test=test, confidence_level=confidence_level) for a, b in _pairs(wide, pairs)]
    cols = ["a", "b", "n_items", "only_a", "only_b", "mean_a", "mean_b", "diff", "se", "ci_low", "ci_high",
            "correlation", "effect_size", "test", "statistic", "df", "pvalue", "pvalue_adjusted", "reject", "note"]
    table = pd.DataFrame(rows).reindex(columns=cols)
    label = pairs if isinstance(pairs, str) else "given pairs"
    mult = _adjust_pair_table(table, method=adjust, alpha=alpha, family=family,
                              describe=f"paired comparisons ({label}) on shared items")
    name = {"paired_t": "Paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "Exact sign test"}[test]
    return PairwiseComparison(table=table, multiplicity=mult, test=name, confidence_level=confidence_level)


def _wide_scores(scores: pd.DataFrame, *, system: str, item: str, score: str) -> pd.DataFrame:
    """Items x systems table of scores (NaN where a system lacks an item); rejects duplicated (system, item)."""
    frame = scores[[system, item, score]].copy()
    frame[system] = frame[system].astype(str)
    frame[item] = frame[item].astype(str)
    dup = frame.duplicated([system, item])
    if dup.any():
        raise ValueError(f"{int(dup.sum())} rows repeat a (system, item) pair; average or deduplicate first.")
    wide = frame.pivot(index=item, columns=system, values=score)
    if wide.shape[1] < 2:
        raise ValueError(f"Need at least two systems to compare; found {list(wide.columns)}.")
    return wide


def _pair_row(wide: pd.DataFrame, a: str, b: str, *, test: str, confidence_level: float) -> dict[str, object]:
    """One row of the table: item counts, the paired difference with its interval, the test (or a note)."""
    xa, xb = wide[a].to_numpy(float), wide[b].to_numpy(float)
    ok = ~np.isnan(xa) & ~np.isnan(xb)
    row: dict[str, object] = {"a": a, "b": b, "n_items": int(ok.sum()),
                              "only_a": int((~np.isnan(xa) & np.isnan(xb)).sum()),
                              "only_b": int((np.isnan(xa) & ~np.isnan(xb)).sum())}
    x, y = xa[ok], xb[ok]
    try:
        est = paired_difference(x, y, confidence_level=confidence_level)
        res = PAIRED_TESTS[test](x, y)
    except ValueError as exc:
        row.update(mean_a=float(np.mean(x)) if x.size else np.nan,
                   mean_b=float(np.mean(y)) if y.size else np.nan, note=f"not tested: {exc}")
        return row
    lo, hi = est.confidence_interval()
    row.update(mean_a=est.details["mean_x"], mean_b=est.details["mean_y"], diff=est.estimate, se=est.se,
               ci_low=lo, ci_high=hi, correlation=est.details["correlation"],
               effect_size=float(np.mean(x - y) / np.std(x - y, ddof=1)),
               test=res.method, statistic=res.statistic, df=res.df, pvalue=res.pvalue, note="")
    return row
