"""Headline findings of the standard results: a leaderboard, a family of paired comparisons,
the rows a reader could not read.

Each function adds to a :class:`~evalkit.report.headline.Headline` and is used both by the
report's sections and by commands that print a headline without a report (``evalkit rate``).
They read plain columns (a DataFrame, or a column table such as
:class:`evalkit.ratings.leaderboard.Leaderboard`), so they never need pandas themselves.

Thin rows: a model with fewer than :data:`THIN_N` comparisons is *preliminary* (as LMArena
flags new models): its interval is wide and its rank can move far with a few more votes. The
report's tables tag it and the headline counts it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from evalkit._cluster import MIN_CLUSTERS
from evalkit._format import decimals_for, format_count, format_estimate, format_number, format_p
from evalkit.plots._layout import THIN_N
from evalkit.report.document import plain
from evalkit.report.headline import Headline

__all__ = ["THIN_N", "MIN_CLUSTERS", "thin_mask", "leaderboard_findings", "comparison_findings", "read_caveats",
           "test_name"]


def _col(table: Any, name: str) -> np.ndarray | None:
    """A column of a DataFrame or column table as a numpy array (None when absent or all missing)."""
    cols = getattr(table, "columns", None)
    try:
        values = cols[name] if isinstance(cols, dict) else table[name]  # a column table, or a DataFrame
    except (KeyError, IndexError, TypeError):
        return None
    arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=object)
    return None if arr.size and all(v is None for v in arr) else arr


def _flag(value: Any) -> bool | None:
    """A boolean cell as True/False, or None when missing (None, pandas NA, NaN)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return None
    try:
        if isinstance(value, float) and np.isnan(value):
            return None
        return bool(value)
    except (TypeError, ValueError):
        return None


def _num(arr: np.ndarray | None) -> np.ndarray | None:
    if arr is None:
        return None
    out = np.array([np.nan if v is None or (not isinstance(v, (int, float, np.number))) else float(v)
                    for v in arr], dtype=float)
    return None if not np.isfinite(out).any() else out


def thin_mask(n: Sequence[float] | np.ndarray, threshold: int = THIN_N) -> np.ndarray:
    """True where a row has fewer than ``threshold`` comparisons."""
    arr = np.asarray(n, dtype=float)
    return np.isfinite(arr) & (arr < threshold)


def _rank_interval(lo: np.ndarray | None, hi: np.ndarray | None, i: int) -> str | None:
    if lo is None or hi is None or not (np.isfinite(lo[i]) and np.isfinite(hi[i])):
        return None
    return f"{int(lo[i])}–{int(hi[i])}"


def leaderboard_findings(headline: Headline, table: Any, attrs: Mapping[str, Any] | None = None, *,
                         section: str | None = "Leaderboard", thin_n: int = THIN_N,
                         what: str = "models", cluster: str | None = None, source: str = "leaderboard") -> None:
    """The leader, whether it is separable from the runner-up, thin rows, and the caveats of the
    fit (not converged, degenerate bootstrap replicates, few clusters).

    Parameters
    ----------
    table : DataFrame or column table
        A leaderboard, best first (``model, elo, ci_low, ci_high, n``, optionally
        ``rank_low, rank_high``).
    attrs : mapping, optional
        Its method record (default ``table.attrs``).
    """
    attrs = dict(attrs if attrs is not None else getattr(table, "attrs", {}) or {})
    models = _col(table, "model")
    elo, lo, hi = (_num(_col(table, c)) for c in ("elo", "ci_low", "ci_high"))
    if models is None or elo is None or len(models) == 0:
        return
    n = _num(_col(table, "n"))
    r_lo, r_hi = _num(_col(table, "rank_low")), _num(_col(table, "rank_high"))
    level = float(attrs.get("level", 0.95))
    total = len(models)
    anchored = str(attrs.get("parametrisation", "")).startswith("difference with")
    ci_what = f"{level:.0%} CI of the difference with the anchor" if anchored else f"{level:.0%} CI"
    lead = (f"**{plain(models[0])}** leads {total} {what} with Elo "
            f"{format_number(elo[0], 0)}" + (f" ({ci_what} {format_number(lo[0], 0)} to {format_number(hi[0], 0)})"
                                             if lo is not None and hi is not None and np.isfinite(lo[0]) else ""))
    ranks = _rank_interval(r_lo, r_hi, 0)
    if total == 1:
        headline.finding(lead + ".", section=section, severity="high", source=source)
    else:
        runner = f"the runner-up **{plain(models[1])}** (Elo {format_number(elo[1], 0)})"
        if ranks is not None:
            verdict = ("separable from every other model" if r_hi is not None and r_hi[0] <= 1
                       else f"not separable from {runner}")
            text = f"{lead}; its simultaneous {level:.0%} rank interval is {ranks} of {total}: {verdict}."
        elif lo is not None and hi is not None and np.isfinite(lo[0]) and np.isfinite(hi[1]):
            verdict = ("its interval lies above that of " if lo[0] > hi[1] else "its interval overlaps that of ")
            text = f"{lead}; {verdict}{runner} (no rank intervals at this size)."
        else:
            text = f"{lead}, ahead of {runner}."
        headline.finding(text, section=section, severity="high", source=source)
    if not attrs.get("converged", True):
        headline.caveat(f"The Bradley-Terry fit did NOT converge (gradient norm {attrs.get('grad_norm', float('nan')):.1e}"
                        f" after {attrs.get('n_iter', '?')} iterations): the ratings are not a maximum.",
                        section=section, severity="high", source=source)
    if n is not None:
        thin = np.flatnonzero(thin_mask(n, thin_n))
        if thin.size:
            shown = []
            for i in thin[:3]:
                ri = _rank_interval(r_lo, r_hi, int(i))
                shown.append(f"{plain(models[i])} (rank {i + 1}, n = {format_count(n[i])}"
                             + (f", rank interval {ri}" if ri else "") + ")")
            more = f" and {thin.size - 3} more" if thin.size > 3 else ""
            head = (f"all {total} {what} have" if thin.size == total else
                    f"{thin.size} of {total} {what} {'has' if thin.size == 1 else 'have'}")
            headline.caveat(f"{head[0].upper()}{head[1:]} fewer than {thin_n} comparisons and "
                            f"{'is' if thin.size == 1 else 'are'} flagged preliminary: {', '.join(shown)}{more}.",
                            section=section, source=source)
    n_boot, n_bad = attrs.get("n_resamples", attrs.get("n_boot")), attrs.get("n_degenerate")
    if n_boot and n_bad:
        share = n_bad / n_boot
        bad = (f"{format_count(n_bad)} of {format_count(n_boot)} bootstrap replicates had no finite ratings "
               f"(a model never won or never lost in them)")
        if attrs.get("fallback"):  # more than one tail holds: the leaderboard used the sandwich instead
            what = str(attrs.get("interval", "sandwich")).rsplit(", ", 1)[0]  # without its ", centred"
            text = f"{bad}, more than one tail of the interval holds: the intervals are the {what} instead."
        elif attrs.get("degenerate_handling", "penalise") == "penalise":
            text = f"{bad}; they are kept, each refitted with a small L2 penalty."
        else:
            text = f"{bad} and were left out: the intervals rest on {format_count(n_boot - n_bad)}."
        headline.caveat(text, section=section, severity="high" if share > 0.1 else "medium", source=source)
    g = attrs.get("n_clusters")
    if g is not None and int(g) < MIN_CLUSTERS:
        unit = f"clusters of {plain(repr(cluster))}" if cluster else "clusters"
        headline.caveat(f"The intervals rest on only {int(g)} {unit} (fewer than about {MIN_CLUSTERS}): cluster-robust "
                        "and cluster-bootstrap intervals are then too narrow and unstable; read them as rough.",
                        section=section, severity="high", source=source)


#: How the headline names a multiplicity correction.
ADJUST_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "bonferroni": "Bonferroni", "none": "no correction",
                "sidak": "Šidák"}


def test_name(test: object) -> str:
    """A short name of a test's description (``permutation``, ``McNemar``, ``paired t``, ...)."""
    t = str(test or "").lower()
    for key, name in (("permutation", "permutation"), ("mcnemar", "McNemar"), ("wilcoxon", "Wilcoxon"),
                      ("sign test", "sign test"), ("sign_test", "sign test"), ("bootstrap", "bootstrap"),
                      ("welch", "Welch"), ("paired", "paired t"), ("t-test", "t"), ("binomial", "exact binomial")):
        if key in t:
            return name
    return ""


def comparison_findings(headline: Headline, table: Any, *, section: str | None, alpha: float = 0.05,
                        level: float = 0.95, adjust: str = "holm", unit: str = "tasks", n_col: str = "n_tasks",
                        what: str = "mean difference", max_pairs: int = 3, source: str = "comparison") -> None:
    """One finding per paired comparison (``a − b``): the difference with its interval, the
    p-value (and the adjusted one when the family has several pairs) and the verdict.

    With more than ``max_pairs`` pairs, the pairs with the smallest p-values are shown and one
    more finding counts the significant ones.
    """
    a, b = _col(table, "a"), _col(table, "b")
    diff, lo, hi = (_num(_col(table, c)) for c in ("diff", "ci_low", "ci_high"))
    if a is None or b is None or diff is None:
        return
    p, padj, n = _num(_col(table, "pvalue")), _num(_col(table, "pvalue_adjusted")), _num(_col(table, n_col))
    reject = _col(table, "reject")
    tests = _col(table, "test")
    order = [i for i in np.argsort(np.where(np.isfinite(p), p, np.inf), kind="stable")] if p is not None \
        else list(range(len(a)))
    order = [i for i in order if np.isfinite(diff[i])]
    family = len(order)
    adjust = ADJUST_NAMES.get(adjust, adjust)
    for rank, i in enumerate(order[:max_pairs]):
        d = decimals_for([diff[i], lo[i] if lo is not None else np.nan, hi[i] if hi is not None else np.nan])
        est = (format_estimate(diff[i], lo[i], hi[i], level=level, sign=True, decimals=d)
               if lo is not None and hi is not None else format_number(diff[i], d, sign=True))
        text = f"**{plain(a[i])}** − **{plain(b[i])}**: {what} {est}"
        if n is not None and np.isfinite(n[i]):
            text += f" over {format_count(n[i])} {unit}"
        if p is not None and np.isfinite(p[i]):
            name = test_name(tests[i]) if tests is not None else ""
            text += f"; {name + ' ' if name else ''}p = {format_p(p[i])}"
            if family > 1 and padj is not None and np.isfinite(padj[i]):
                text += f" ({adjust} over {family} pairs: {format_p(padj[i])})"
            flag = _flag(reject[i]) if reject is not None else None
            sig = flag if flag is not None else bool(
                (padj[i] if family > 1 and padj is not None else p[i]) < alpha)
            text += (f": **significant** at alpha = {alpha:g}" if sig else f": not significant at alpha = {alpha:g}")
        headline.finding(text + ".", section=section, severity="high" if rank == 0 else "medium", source=source)
    if family > max_pairs and reject is not None:
        k = sum(1 for r in reject if _flag(r))
        headline.finding(f"{k} of {family} pairs differ significantly after {adjust} (alpha = {alpha:g}).",
                         section=section, severity="medium", source=source)


def read_caveats(headline: Headline, reports: Sequence[Any], *, section: str | None = "Inputs",
                 source: str = "inputs") -> None:
    """A caveat per read that dropped rows, with the count and the reasons."""
    for r in reports:
        dropped = dict(getattr(r, "dropped", {}) or {})
        total = sum(int(v) for v in dropped.values())
        if total:
            reasons = ", ".join(f"{format_count(v)} {plain(k)}" for k, v in dropped.items() if v)
            headline.caveat(f"{format_count(total)} of {format_count(r.rows_read)} rows of "
                            f"{plain(getattr(r, 'source', 'the input'))} were dropped ({reasons}).",
                            section=section, source=source)
