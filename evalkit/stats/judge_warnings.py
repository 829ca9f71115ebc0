"""Who judged, and the warnings a leaderboard prints from its counts alone (no rows, no pandas).

* :func:`judge_from_source` - the judge named by a log's file name (``gpt3-comparisons.csv``
  -> ``gpt-3.5-turbo``).
* :func:`match_contestants` - contestants that are the judge model itself, or variants of it.
* :func:`count_warnings` - position bias (exact binomial test of the left answer's wins among
  decisive votes, per judge panel; clustered by the counts' cluster (``--cluster``) when a cluster
  holds several votes, :func:`clustered_share_test`) and self-rating, from a ``ComparisonCounts``.

:mod:`evalkit.stats.judges` (the judge report's tables) re-exports these names.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

__all__ = ["POSITION_FORMATS", "normalise_name", "judge_from_source", "match_contestants", "position_warning",
           "self_rating_warnings", "binom_half_pvalue", "count_warnings", "clustered_share_test", "comparison_units"]

# Formats whose player_a is the answer shown first / on the left.
POSITION_FORMATS = ("left_right", "arena")
# File-name stems of known judge logs -> judge model (LLMFAO names its GPT-3.5 Turbo judge file "gpt3").
_ALIASES = {"gpt3": "gpt-3.5-turbo", "gpt35": "gpt-3.5-turbo", "chatgpt": "gpt-3.5-turbo", "gpt4": "gpt-4"}
# Annotator configurations named after their model: AlpacaEval's "alpaca_eval_gpt4", "weighted_alpaca_eval_gpt4_turbo".
# Model names with a dated alias (normalised): AlpacaEval 2's "gpt4_turbo" annotator is gpt-4-1106-preview.
_SYNONYMS = {"gpt4turbo": ("gpt41106preview",)}
_JUDGE_PREFIX = re.compile(r"^(weighted_)?alpaca_eval_", re.IGNORECASE)


def normalise_name(name: str) -> str:
    """Lower case, punctuation and spaces dropped: ``"GPT 3.5 Turbo"`` -> ``"gpt35turbo"``."""
    return re.sub(r"[^a-z0-9]+", "", str(name).lower())


def judge_from_source(source: str) -> str:
    """Judge name from a log's file name: the stem without ``-comparisons`` etc., known aliases resolved."""
    stem = Path(str(source)).name.split(".")[0]
    stem = re.sub(r"[-_](comparisons|judgments|judgements|votes|annotations|preferences)$", "", stem)
    return _ALIASES.get(normalise_name(stem), stem)


def match_contestants(judge: str, players: list[str] | tuple[str, ...]) -> tuple[list[str], list[str]]:
    """``(same, variants)``: contestants whose normalised name equals the judge's, and those whose name
    tokens extend the judge's (``GPT 3.5 Turbo (16k)`` for ``gpt-3.5-turbo``; not ``gpt-4o`` for ``gpt-4``)."""
    judge = _JUDGE_PREFIX.sub("", str(judge))
    key = normalise_name(judge)
    if not key:
        return [], []
    tokens = re.findall(r"[a-z0-9]+", judge.lower())
    same = [p for p in players if normalise_name(p) == key or normalise_name(p) in _SYNONYMS.get(key, ())]
    variants = [p for p in players if p not in same
                and re.findall(r"[a-z0-9]+", str(p).lower())[: len(tokens)] == tokens]
    return same, variants


def position_warning(name: str, left: float, right: float, pvalue: float, test: str = "exact binomial") -> str:
    """The stderr line for a judge whose decisive votes favour one side (``pvalue`` of ``test``)."""
    favours, share = ("left", left / (left + right)) if left > right else ("right", right / (left + right))
    return (f"warning: judge {name} favours the {favours} answer in {share:.1%} of {left + right:.0f} decisive "
            f"votes ({test} p = {pvalue:.2g}); plain ratings absorb this bias: use "
            "`evalkit rate --adjust-position`.")


def clustered_share_test(y: np.ndarray, weight: np.ndarray, groups: np.ndarray, *,
                         level: float = 0.95) -> dict[str, float]:
    """Is the weighted share of ``y == 1`` one half, when the votes come in dependent groups?

    The share ``sum(w y) / sum(w)`` with a CR1 cluster-robust test of ``share = 1/2`` (score form: the
    group sums of ``w (y - 1/2)``, factor ``G / (G - 1)``, ``t(G - 1)``; :mod:`evalkit._cluster`) and a
    Korn-Graubard interval (Clopper-Pearson on the effective number of votes ``share (1 - share) / SE^2``,
    shrunk by ``(z / t_{G-1})^2``, at most the votes). Used for position bias when several judges vote on
    the same comparison with the answers in the same places: their votes are not independent (on
    LLMFAO's crowd file, ~4 votes per comparison, p = 1e-6 as if independent, 1.7e-5 clustered).

    Returns
    -------
    dict
        ``share, ci_low, ci_high, pvalue, n_clusters, n_eff``.
    """
    from scipy.special import betaincinv, ndtri, stdtrit

    from evalkit._cluster import cr1_factor, t_two_sided_pvalue

    y, w = np.asarray(y, dtype=float), np.asarray(weight, dtype=float)
    codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)[1].ravel()
    g = int(codes.max()) + 1 if codes.size else 0
    if g < 2:
        raise ValueError(f"a clustered test needs votes in at least 2 groups; got {g}")
    total = float(w.sum())
    share = float(np.sum(w * y)) / total
    factor = cr1_factor(g, total, 1)
    e0 = np.bincount(codes, weights=w * (y - 0.5), minlength=g)  # under H0: share = 1/2
    se0 = float(np.sqrt(factor * np.sum(e0 * e0))) / total
    p = t_two_sided_pvalue((share - 0.5) / se0, g - 1.0) if se0 > 0 else 1.0
    e = np.bincount(codes, weights=w * (y - share), minlength=g)
    var = factor * float(np.sum(e * e)) / total**2
    alpha = 1.0 - level
    n_eff = total if var <= 0 or share in (0.0, 1.0) else min(total, share * (1 - share) / var)
    n_eff *= float((ndtri(1 - alpha / 2) / stdtrit(g - 1.0, 1 - alpha / 2)) ** 2)
    x = share * n_eff
    lo = 0.0 if x <= 0 else float(betaincinv(x, n_eff - x + 1, alpha / 2))
    hi = 1.0 if x >= n_eff else float(betaincinv(x + 1, n_eff - x, 1 - alpha / 2))
    return {"share": share, "ci_low": lo, "ci_high": hi, "pvalue": float(p), "n_clusters": g, "n_eff": n_eff}


def comparison_units(player_a: np.ndarray, player_b: np.ndarray, item: np.ndarray) -> np.ndarray:
    """One label per vote for its comparison: the item and the unordered pair (the same two answers)."""
    a, b = np.asarray(player_a).astype(str), np.asarray(player_b).astype(str)
    lo, hi = np.where(a < b, a, b), np.where(a < b, b, a)
    return np.char.add(np.char.add(np.char.add(np.asarray(item).astype(str), "\x1f"), lo), np.char.add("\x1f", hi))


def self_rating_warnings(judges, players) -> list[str]:
    """The stderr lines for judges whose name matches a contestant (:func:`match_contestants`)."""
    out = []
    for name in sorted(judges):
        same, variants = match_contestants(name, list(players))
        if same or variants:
            out.append(f"warning: judge {name} is also a contestant ({', '.join(same + variants)}): it rates itself; "
                       "`evalkit report` shows its rating with and without its own votes.")
    return out


def _stirlerr(n: float) -> float:
    """``log(n!) - log(sqrt(2 pi n) (n/e)^n)`` (Loader 2000; R's ``stirlerr``)."""
    if n <= 15:
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - 0.5 * math.log(2 * math.pi)
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    nn = n * n
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _bd0(x: float, mean: float) -> float:
    """``x log(x / mean) + mean - x`` without cancellation (Loader 2000; R's ``bd0``)."""
    if abs(x - mean) >= 0.1 * (x + mean):
        return x * math.log(x / mean) + mean - x
    v = (x - mean) / (x + mean)
    s, ej, v2 = (x - mean) * v, 2 * x * v, v * v
    for j in range(1, 1000):
        ej *= v2
        s1 = s + ej / (2 * j + 1)
        if s1 == s:
            return s1
        s = s1
    return s


def _log_binom_half_pmf(k: int, n: int) -> float:
    """``log P(X = k)``, ``X ~ Binomial(n, 1/2)``, by Loader's saddle-point form (R's
    ``dbinom``): accurate to a few ulps for any ``n``, where a difference of ``lgamma``
    values loses ~8 digits at ``n = 1e7``."""
    if k in (0, n):
        return n * math.log(0.5)
    half = 0.5 * n
    lc = _stirlerr(n) - _stirlerr(k) - _stirlerr(n - k) - _bd0(k, half) - _bd0(n - k, half)
    return lc - 0.5 * (math.log(2 * math.pi) + math.log(k) + math.log1p(-k / n))


def binom_half_pvalue(k: int, n: int) -> float:
    """Two-sided exact binomial p-value of ``k`` of ``n`` at p = 1/2 (``scipy.stats.binomtest``).

    ``2 P(X <= min(k, n - k))``, summed from the largest term down with the ratio
    ``pmf(x - 1) / pmf(x) = x / (n - x + 1)``; terms more than ``8 sqrt(n)`` (16 standard
    deviations) below ``k`` are below ``exp(-128)`` of the largest and are left out.
    """
    if 2 * k == n:
        return 1.0
    k = min(k, n - k)
    m = min(k + 1, int(8 * math.sqrt(n)) + 64)
    x = np.arange(k, k - m + 1, -1, dtype=float)  # the m - 1 steps down from k
    logs = np.concatenate([[0.0], np.cumsum(np.log(x / (n - x + 1.0)))])
    return float(min(1.0, 2.0 * math.exp(_log_binom_half_pmf(k, n)) * float(np.sum(np.exp(logs)))))


def count_warnings(counts, fmt: str | None, *, judge: str, alpha: float = 0.05) -> list[str]:
    """Position-bias and self-rating warnings from aggregated cells (a ``ComparisonCounts``), without the rows.

    The panels are the values of the cells' ``judge`` cluster when the counts were
    aggregated with ``cluster="judge"``, else one panel named ``judge`` (the ``--judge``
    flag or the file name). Position bias is the exact binomial test of the left (first)
    answer's wins among decisive votes, as in :func:`position_bias_table`; panels with
    fractional weights are not tested. Counts aggregated with another cluster (``--cluster item``)
    are tested clustered by it (CR1, ``t(G - 1)``: :func:`clustered_share_test`), the unit the
    intervals use: votes in one cluster are not independent, across pairs as within one.
    """
    by = counts.cluster if counts.cluster not in (None, "judge") else None  # the user's cluster: --cluster
    sums = None
    if getattr(counts, "collapsed", False) and by is not None and fmt in POSITION_FORMATS:
        sums = counts.unit_sums()  # collapsed over the clusters: DuckDB sums the votes per cluster
    elif hasattr(counts, "expand") and counts.cluster == "judge":
        counts.expand()  # counts collapsed over their cluster (DuckDB): the judge panels need it
    if counts.cluster == "judge":
        names, codes = np.unique(np.asarray(counts.column("judge")).astype(str), return_inverse=True)
        codes = codes.ravel()
    else:  # one panel: no string array to sort (2e6 cells at 2,000 models)
        names, codes = np.array([str(judge)]), np.zeros(len(counts), dtype=np.intp)
    out = []
    if fmt in POSITION_FORMATS:
        w, o = counts.column("weight").astype(float), counts.column("outcome").astype(float)
        lefts = np.bincount(codes, weights=w * (o == 1.0), minlength=len(names))
        rights = np.bincount(codes, weights=w * (o == 0.0), minlength=len(names))
        # votes in one cluster are dependent (the user said so): the test is clustered by it, as the intervals are
        units = None if by is None or sums is not None else np.asarray(counts.column(by)).astype(str)
        clustered = f"CR1 t-test clustered by {by}"
        for k, (name, left, right) in enumerate(zip(names, lefts.tolist(), rights.tolist(), strict=True)):
            if left + right == 0 or left != round(left) or right != round(right):
                continue
            test, pvalue = "exact binomial", binom_half_pvalue(int(left), int(left + right))
            decisive = (codes == k) & ((o == 1.0) | (o == 0.0))
            if sums is not None:  # one panel; the clusters' sums from DuckDB
                if sums[1] > 1 and sums[0] >= 2:
                    test, pvalue = clustered, _share_pvalue(left, left + right, sums[0], sums[2])
            elif units is None:
                test += ", votes taken as independent (`evalkit report` clusters repeated votes on one comparison)"
            elif _repeats(units[decisive], w[decisive]) and len(np.unique(units[decisive])) >= 2:
                res = clustered_share_test((o[decisive] == 1.0).astype(float), w[decisive], units[decisive])
                test, pvalue = clustered, res["pvalue"]
            if by is not None and test == "exact binomial":
                test += f", not clustered (fewer than 2 values of {by}, or one vote in each)"
            if pvalue < alpha:
                out.append(position_warning(str(name), left, right, pvalue, test))
    return out + self_rating_warnings(names.tolist(), counts.players)


def _share_pvalue(left: float, total: float, g: int, e0sq: float) -> float:
    """The p-value of :func:`clustered_share_test` from sums: ``left`` of ``total`` decisive votes for
    the first answer, ``g`` units and ``sum_g (sum w (y - 1/2))^2``."""
    from evalkit._cluster import cr1_factor, t_two_sided_pvalue

    if g < 2:
        raise ValueError(f"a clustered test needs votes in at least 2 groups; got {g}")
    se0 = float(np.sqrt(cr1_factor(g, total, 1) * e0sq)) / total
    return float(t_two_sided_pvalue((left / total - 0.5) / se0, g - 1.0)) if se0 > 0 else 1.0


def _repeats(units: np.ndarray, weight: np.ndarray) -> bool:
    """Whether some comparison unit holds more than one vote (then the votes are clustered)."""
    if units.size == 0:
        return False
    _, inv = np.unique(units, return_inverse=True)
    return bool(np.bincount(inv.ravel(), weights=weight).max() > 1)
