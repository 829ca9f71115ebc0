"""The exact sign test, with an explicit tie policy and the counts it rests on.

On seed 002's twelve task means (8 wins, 3 losses, 1 tie) the policies give: ties dropped
(the default, and the usual textbook convention) p = 0.2266; a tie counted as a loss
p = 0.388; as a win p = 0.146. statsmodels' ``sign_test`` drops zeros without saying so and
reports M = (N+ - N-)/2 as its statistic; evalkit reports the wins and says what it did.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from evalkit.stats._result import SignTestResult
from evalkit.stats._validate import as_pairs, check_alternative, check_confidence_level

__all__ = ["TIE_POLICIES", "sign_test", "sign_test_from_counts"]

TIE_POLICIES = ("drop", "loss", "win")


def sign_test(
    x: ArrayLike, y: ArrayLike | None = None, *, ties: str = "drop", alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> SignTestResult:
    """Exact sign test of paired samples (``x`` vs ``y``) or of differences ``x``.

    Parameters
    ----------
    x, y : array_like
        Paired observations (e.g. per-task means of two systems), or the differences.
    ties : {"drop", "loss", "win"}
        What to do with zero differences: drop them (default), count them against ``x``
        (conservative for a claim that x is better) or for ``x``.
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: x tends to beat y (P(win) > 1/2).
    confidence_level : float
        Level of the Clopper-Pearson interval for the win probability.

    Returns
    -------
    SignTestResult
        ``statistic`` = wins counted, ``n`` = wins + losses counted, ``estimate`` the win
        proportion, ``effect_size`` its distance from 1/2; ``wins``, ``losses``, ``ties`` are
        the raw counts. The p-value is ``scipy.stats.binomtest(wins, n, 0.5)``.

    Raises
    ------
    ValueError
        For fewer than two pairs, unknown ``ties``, or when every pair is tied and
        ``ties="drop"`` leaves nothing to test.
    """
    d = as_pairs(x, y)
    wins = int(np.count_nonzero(d > 0))
    losses = int(np.count_nonzero(d < 0))
    n_ties = int(d.size - wins - losses)
    return sign_test_from_counts(
        wins, losses, n_ties, tie_policy=ties, alternative=alternative, confidence_level=confidence_level
    )


def sign_test_from_counts(
    wins: int, losses: int, ties: int = 0, *, tie_policy: str = "drop", alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> SignTestResult:
    """Exact sign test from counts of wins, losses and ties (see :func:`sign_test`).

    ``tie_policy`` is the ``ties`` option of :func:`sign_test` ("drop", "loss" or "win").
    """
    check_alternative(alternative)
    check_confidence_level(confidence_level)
    wins, losses, ties = _checked_counts(wins, losses, ties, tie_policy)
    k, n = _counted(wins, losses, ties, tie_policy)
    res = stats.binomtest(k, n, 0.5, alternative=alternative)
    handling = _HANDLING[tie_policy].format(ties=ties)

    def ci(level: float) -> tuple[float, float]:
        return tuple(res.proportion_ci(confidence_level=level, method="exact"))

    return SignTestResult(
        method="Exact sign test (binomial, p = 1/2)",
        statistic=float(k),
        statistic_name="wins",
        pvalue=float(res.pvalue),
        alternative=alternative,
        n=n,
        df=None,
        estimate=k / n,
        estimate_name="win proportion of the first sample",
        effect_size=k / n - 0.5,
        effect_size_name="win proportion - 1/2",
        handling=handling,
        confidence_level=confidence_level,
        wins=wins,
        losses=losses,
        ties=ties,
        tie_policy=tie_policy,
        _ci=ci,
    )


_HANDLING = {
    "drop": "{ties} tied pairs dropped (ties='drop')",
    "loss": "{ties} tied pairs counted as losses of the first sample (ties='loss')",
    "win": "{ties} tied pairs counted as wins of the first sample (ties='win')",
}


def _checked_counts(wins: int, losses: int, ties: int, tie_policy: str) -> tuple[int, int, int]:
    """Validate the tie policy and the counts (non-negative integers); return them as ints."""
    if tie_policy not in TIE_POLICIES:
        raise ValueError(f"ties (tie_policy) must be one of {TIE_POLICIES}; got {tie_policy!r} instead.")
    for name, v in (("wins", wins), ("losses", losses), ("ties", ties)):
        if int(v) != v or v < 0:
            raise ValueError(f"{name} must be a non-negative integer count; got {v!r}.")
    return int(wins), int(losses), int(ties)


def _counted(wins: int, losses: int, ties: int, tie_policy: str) -> tuple[int, int]:
    """(wins counted, pairs counted) under the tie policy; ValueError if nothing or too little to test."""
    k, n = wins, wins + losses
    if tie_policy == "loss":
        n += ties
    elif tie_policy == "win":
        k += ties
        n += ties
    if n == 0:
        raise ValueError(
            f"All {ties} pairs are ties, so the sign test has nothing to test with ties='drop'. "
            "The samples do not differ in any pair; report that instead of a p-value."
        )
    if wins + losses + ties < 2:
        raise ValueError(f"The sign test needs at least 2 pairs; got {wins + losses + ties}.")
    return k, n
