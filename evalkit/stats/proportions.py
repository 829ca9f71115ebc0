"""Pass rates and win rates with small-sample intervals (Wilson, Clopper-Pearson).

Never the Wald interval: statsmodels' ``proportion_confint`` defaults to it, and it gives
(1.0, 1.0) for 11 passes out of 11.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from evalkit.stats._result import Estimate
from evalkit.stats._validate import check_confidence_level

__all__ = ["WilsonCoverageWarning", "wilson_warning", "wilson_interval", "clopper_pearson_interval", "pass_rate", "win_rate", "win_rate_from_outcomes"]


def _check_counts(k: float, n: float, *, integer: bool) -> tuple[float, int]:
    if not np.isfinite(n) or n <= 0 or int(n) != n:
        raise ValueError(f"n must be a positive integer number of trials; got {n!r}.")
    if not np.isfinite(k) or k < 0 or k > n:
        raise ValueError(f"The count of successes must lie in [0, n] = [0, {int(n)}]; got {k!r}.")
    if integer and int(k) != k:
        raise ValueError(f"The Clopper-Pearson interval needs an integer count of successes; got {k!r}.")
    return float(k), int(n)


def _wilson(k: float, n: int, level: float) -> tuple[float, float]:
    z = stats.norm.ppf(0.5 + level / 2.0)
    p = k / n
    denom = 1.0 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)  # exact ends (rounding would cut them)
    return float(low), float(high)


def _proportion(k: float, n: float, method: str, ci, confidence_level: float) -> Estimate:
    """``k / n`` with its CLT standard error and the interval function ``ci(level)``."""
    return Estimate(
        method=method,
        estimate=k / n,
        se=float(np.sqrt(k / n * (1 - k / n) / n)),
        n=n,
        confidence_level=confidence_level,
        details={"successes": k},
        _ci=ci,
    )


class WilsonCoverageWarning(UserWarning):
    """The Wilson interval's coverage at a fixed rate falls well below its nominal level here."""


#: Below this many trials, or this many successes or failures, :func:`wilson_interval` warns.
WILSON_MIN_N, WILSON_MIN_COUNT = 30, 5


def wilson_warning(k: float, n: int) -> str | None:
    """Why the Wilson interval of ``k`` of ``n`` may under-cover, or None.

    Wilson's coverage is 0.95 on average over the true rate, but at a fixed rate it oscillates
    (Brown, Cai & DasGupta 2001); computed exactly: with fewer than 5 expected successes (or
    failures) it falls to 0.84 (n = 24, p = 0.007), and at n < 30 it dips to 0.92 even in the
    middle (n = 24, p = 0.31: 0.925). Clopper-Pearson covers at least 0.95 at every rate.
    """
    if min(k, n - k) >= WILSON_MIN_COUNT and n >= WILSON_MIN_N:
        return None
    why = (f"fewer than {WILSON_MIN_COUNT} {'successes' if k <= n - k else 'failures'}: near 0 or 1 its coverage "
           "falls to about 0.84" if min(k, n - k) < WILSON_MIN_COUNT else
           f"fewer than {WILSON_MIN_N} trials: its coverage at some rates is 0.92-0.93")
    return (f"Wilson interval of {k:g} of {n}: {why} against a nominal 95 % (0.95 on average over rates; "
            "evalkit's coverage study). The Clopper-Pearson interval (method='clopper-pearson') covers at "
            "least 95 % at every rate.")


def wilson_interval(successes: float, n: int, *, confidence_level: float = 0.95) -> Estimate:
    """Proportion ``successes / n`` with the Wilson score interval.

    ``successes`` may be fractional (ties counted as half a win).
    Equals ``statsmodels.stats.proportion.proportion_confint(k, n, method="wilson")``.
    Warns (:class:`WilsonCoverageWarning`, :func:`wilson_warning`) with fewer than 30 trials or
    fewer than 5 successes or failures, where its coverage at a fixed rate falls below 0.935.
    """
    check_confidence_level(confidence_level)
    k, n = _check_counts(successes, n, integer=False)
    if (note := wilson_warning(k, n)) is not None:
        warnings.warn(note, WilsonCoverageWarning, stacklevel=2)
    return _proportion(k, n, "proportion with Wilson score interval", lambda level: _wilson(k, n, level),
                       confidence_level)


def clopper_pearson_interval(successes: int, n: int, *, confidence_level: float = 0.95) -> Estimate:
    """Proportion ``successes / n`` with the exact Clopper-Pearson interval.

    Equals ``proportion_confint(k, n, method="beta")`` and
    ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``.
    """
    check_confidence_level(confidence_level)
    k, n = _check_counts(successes, n, integer=True)

    def ci(level: float) -> tuple[float, float]:
        a = 1 - level
        low = 0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1)
        high = 1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k)
        return float(low), float(high)

    return _proportion(k, n, "proportion with Clopper-Pearson (exact) interval", ci, confidence_level)


def pass_rate(
    passed: ArrayLike, *, method: str = "wilson", confidence_level: float = 0.95
) -> Estimate:
    """Pass rate of a 0/1 (or bool) array with a Wilson or Clopper-Pearson interval.

    Parameters
    ----------
    passed : array_like of bool or 0/1
    method : {"wilson", "clopper-pearson"}
    """
    arr = np.asarray(passed, dtype=float).reshape(-1)
    bad = ~np.isin(arr, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"passed must be 0/1 or bool; got {float(arr[np.flatnonzero(bad)[0]])!r} in {int(bad.sum())} values."
        )
    if arr.size == 0:
        raise ValueError("passed is empty; a pass rate needs at least one item.")
    k = int(arr.sum())
    if method == "wilson":
        return wilson_interval(k, arr.size, confidence_level=confidence_level)
    if method == "clopper-pearson":
        return clopper_pearson_interval(k, arr.size, confidence_level=confidence_level)
    raise ValueError(f"method must be 'wilson' or 'clopper-pearson'; got {method!r}.")


def win_rate(
    wins: int, losses: int, ties: int = 0, *, ties_as: str = "half", confidence_level: float = 0.95
) -> Estimate:
    """Win rate from counts, ties counted as half a win (default) or dropped, with a Wilson interval.

    Seed 002: 352 wins, 306 losses, 2 ties -> 53.485 % (half) or 53.495 % (dropped); both
    print as 53.5 %.

    Parameters
    ----------
    wins, losses, ties : int
    ties_as : {"half", "drop"}

    Returns
    -------
    Estimate
        ``estimate`` the win rate, ``se`` sqrt(p(1 - p)/n), interval Wilson (with the
        fractional count wins + ties/2 when ``ties_as="half"``); ``handling`` says which.
    """
    for name, v in (("wins", wins), ("losses", losses), ("ties", ties)):
        if int(v) != v or v < 0:
            raise ValueError(f"{name} must be a non-negative integer count; got {v!r}.")
    if ties_as == "half":
        k, n = wins + ties / 2.0, wins + losses + ties
        handling = f"{ties} ties counted as half a win each"
    elif ties_as == "drop":
        k, n = float(wins), wins + losses
        handling = f"{ties} ties dropped"
    else:
        raise ValueError(f"ties_as must be 'half' or 'drop'; got {ties_as!r}.")
    if n == 0:
        raise ValueError(f"No games to rate: wins={wins}, losses={losses}, ties={ties} with ties_as={ties_as!r}.")
    base = wilson_interval(k, n, confidence_level=confidence_level)
    return Estimate(
        method=f"win rate (ties {'as half' if ties_as == 'half' else 'dropped'}) with Wilson interval",
        estimate=base.estimate,
        se=base.se,
        n=int(n),
        handling=handling,
        confidence_level=confidence_level,
        details={"wins": int(wins), "losses": int(losses), "ties": int(ties), "ties_as": ties_as},
        _ci=base._ci,
    )


def win_rate_from_outcomes(
    outcomes: ArrayLike, *, ties_as: str = "half", confidence_level: float = 0.95
) -> Estimate:
    """:func:`win_rate` from outcomes in {0, 0.5, 1} (1 win, 0.5 tie, 0 loss)."""
    o = np.asarray(outcomes, dtype=float).reshape(-1)
    bad = ~np.isin(o, (0.0, 0.5, 1.0))
    if bad.any():
        raise ValueError(
            f"outcomes must be 0, 0.5 or 1; got {float(o[np.flatnonzero(bad)[0]])!r} in {int(bad.sum())} values "
            "(use evalkit.stats.mean_se for continuous scores)."
        )
    return win_rate(int((o == 1).sum()), int((o == 0).sum()), int((o == 0.5).sum()),
                    ties_as=ties_as, confidence_level=confidence_level)
