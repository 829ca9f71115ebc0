"""Local slopes, the 400-Elo-per-decade reference, the scaling inflection point and allocation.

Repeated sampling with fixed-length attempts gains exactly 400 Elo per decade of budget
(best of ``n`` beats best of ``m`` with probability ``n / (n + m)``). A session whose self-Elo
climbs more slowly learns less from its own history than a restart would; the last budget at
which the local slope still exceeds 400 per decade is the *scaling inflection point*
``b_inf``. Splitting a budget ``B`` into ``K = max(1, round(B / b_inf))`` independent
sessions then wins: ``K`` sessions of ``B/K`` rate ``r(B/K) + 400 log10 K``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit.budget.curves import CurveResult

__all__ = [
    "REFERENCE_SLOPE",
    "reference_line",
    "local_slopes",
    "InflectionResult",
    "inflection_point",
    "simultaneous_band",
    "allocate_sessions",
    "SplitAdvantage",
    "split_advantage",
    "split_table",
]

REFERENCE_SLOPE = 400.0
_ALIGN = ("centred", "trailing")


def reference_line(budgets: np.ndarray, *, b0: float, elo0: float = 1000.0, slope: float = REFERENCE_SLOPE) -> np.ndarray:
    """The repeated-sampling reference ``elo0 + slope * log10(b / b0)``."""
    return elo0 + slope * np.log10(np.asarray(budgets, dtype=float) / b0)


def local_slopes(budgets: np.ndarray, elo: np.ndarray, *, window: int = 5, align: str = "centred") -> np.ndarray:
    """Least-squares slope of Elo on ``log10(budget)`` over a moving window of checkpoints.

    Parameters
    ----------
    budgets : array_like
        ``(C,)`` checkpoint budgets.
    elo : array_like
        ``(..., C)`` Elo values (NaN entries are left out of each window).
    window : int
        Number of neighbouring checkpoints (5 in the paper); at least 2.
    align : {"centred", "trailing"}
        ``"centred"``: checkpoints ``k - window//2 .. k + window//2`` (cut at the ends of the
        grid); ``"trailing"``: ``k - window + 1 .. k``.

    Returns
    -------
    numpy.ndarray
        ``(..., C)`` slopes in Elo per decade; NaN where fewer than 3 points (2 if
        ``window == 2``) are available.
    """
    if align not in _ALIGN:
        raise ValueError(f"align must be one of {_ALIGN}; got {align!r}.")
    if not (isinstance(window, (int, np.integer)) and window >= 2):
        raise ValueError(f"window must be an integer >= 2; got {window!r}.")
    x = np.log10(np.asarray(budgets, dtype=float))
    y = np.asarray(elo, dtype=float)
    c = x.size
    if y.shape[-1] != c:
        raise ValueError(f"elo must have {c} values on its last axis (one per budget); got shape {y.shape}.")
    need = min(3, window)
    out = np.full(y.shape, np.nan)
    w_ok = np.isfinite(y)
    y0 = np.where(w_ok, y, 0.0)
    for k in range(c):
        lo, hi = (k - window // 2, k + window // 2 + 1) if align == "centred" else (k - window + 1, k + 1)
        lo, hi = max(lo, 0), min(hi, c)
        w = w_ok[..., lo:hi].astype(float)
        n = w.sum(axis=-1)
        xs = x[lo:hi]
        mx = (w * xs).sum(axis=-1) / np.maximum(n, 1)
        my = (w * y0[..., lo:hi]).sum(axis=-1) / np.maximum(n, 1)
        dx = xs - mx[..., None]
        sxx = (w * dx**2).sum(axis=-1)
        sxy = (w * dx * (y0[..., lo:hi] - my[..., None])).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[..., k] = np.where((n >= need) & (sxx > 0), sxy / sxx, np.nan)
    return out


def _last_above(budgets: np.ndarray, slopes: np.ndarray, reference: float) -> np.ndarray:
    """Index of the last checkpoint with slope > reference, -1 if none (vectorised)."""
    above = np.nan_to_num(slopes, nan=-np.inf) > reference
    c = slopes.shape[-1]
    rev = above[..., ::-1]
    return np.where(above.any(axis=-1), c - 1 - np.argmax(rev, axis=-1), -1)


@dataclass(frozen=True)
class InflectionResult:
    """The scaling inflection point of one system.

    Attributes
    ----------
    system : str
    b_inf : float
        Last checkpoint budget whose local slope exceeds ``reference``; NaN when no
        checkpoint does (``status == "never_above"``) or when the slope is nowhere
        distinguishable from the reference (``status == "indistinguishable"``).
    ci_low, ci_high : float
        Percentile bootstrap interval of ``b_inf``; a replicate with no such checkpoint
        counts as budget 0 (so ``ci_low == 0`` means "may never beat the reference").
    status : {"crossed", "above_at_end", "never_above", "indistinguishable"}
        ``"above_at_end"``: the slope still exceeds the reference at the last checkpoint, so
        ``b_inf`` is only a lower bound. ``"indistinguishable"``: the simultaneous bootstrap band
        of the local slope (``band_low``..``band_high``, which holds at every checkpoint at once
        with probability ``confidence_level``) covers ``reference`` everywhere it is defined, so
        any crossing would be one that noise picked; ``b_inf`` is NaN (see :attr:`note`). This is
        a test of "the slope is the reference over the whole range" whose error rate is the
        band's: a system at exactly 400 Elo/decade is called anything else in about 5 % of data
        sets or fewer. The band is widened by ``t_q(n - 1) / z_q`` (``q = (1 + confidence_level) / 2``)
        for the ``n`` sessions per task the bootstrap resamples: in the coverage study's design
        (best-of-n at exactly 400/decade, 14 tasks x 5 sessions) the bootstrap SD of the local slope
        is 1.08-1.36 times too small, more than the ``sqrt(n / (n - 1)) = 1.118`` of a bootstrap's
        ``(n - 1) / n`` variance, which left the test rejecting in 11-17 % of data sets; ``t_q(4) / z_q
        = 1.42`` brings that below 5 % (``scripts/coverage.py``, ``scripts/inflection_null.py``).
        (Earlier versions required every *pointwise* interval to cover, and a system at exactly
        400/decade came out "crossed" in 13 of 40 seeds.)
    slopes : pandas.DataFrame
        ``system, budget, slope, ci_low, ci_high`` (pointwise percentile interval) and ``band_low,
        band_high`` (the simultaneous band), in Elo per decade.
    reference : float
    window : int
    align : str
    replicates : numpy.ndarray
        Bootstrap ``b_inf`` values (0 = none above, NaN = failed replicate).
    confidence_level : float
    band_critical : float
        The band's critical value (max-|t| quantile over the checkpoints).
    """

    system: str
    b_inf: float
    ci_low: float
    ci_high: float
    status: str
    slopes: pd.DataFrame
    reference: float
    window: int
    align: str
    replicates: np.ndarray = field(repr=False)
    confidence_level: float = 0.95
    band_critical: float = float("nan")

    @property
    def statistic(self) -> float:
        """Alias of ``b_inf``."""
        return self.b_inf

    @property
    def note(self) -> str:
        """One sentence on what ``status`` means for this system."""
        return {
            "crossed": f"the local slope last exceeds {self.reference:g} Elo/decade at b_inf = {self.b_inf:.4g}",
            "above_at_end": "the slope still exceeds the reference at the last checkpoint: b_inf is a lower bound",
            "never_above": f"the local slope never exceeds {self.reference:g} Elo/decade",
            "indistinguishable": (f"not distinguishable from the reference: the simultaneous {self.confidence_level:.0%} "
                                  f"band of the local slope covers {self.reference:g} Elo/decade over the whole range"),
        }[self.status]

    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)`` of ``b_inf``."""
        return self.ci_low, self.ci_high


def _quantiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - level) / 2.0
    ok = ~np.all(np.isnan(values), axis=0)
    lo = np.full(values.shape[1:], np.nan)
    hi = np.full(values.shape[1:], np.nan)
    if values.shape[0] and ok.any():
        q = np.nanquantile(values[:, ok], [alpha, 1.0 - alpha], axis=0, method="inverted_cdf")
        lo[ok], hi[ok] = q
    return lo, hi


def simultaneous_band(estimate: np.ndarray, replicates: np.ndarray, level: float, *,
                      scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, float]:
    """A band that holds at every checkpoint at once: ``estimate +- c scale sd`` with ``sd`` the replicates'
    SD per checkpoint and ``c`` the ``level`` quantile of each replicate's largest
    ``|replicate - estimate| / sd`` (the sup-t band of Montiel Olea & Plagborg-Moller 2019).
    ``scale`` widens it (the small-sample factor of the bootstrap). Checkpoints without an estimate or
    with no spread get NaN; returns ``(low, high, c)``."""
    est = np.asarray(estimate, dtype=float)
    reps = np.asarray(replicates, dtype=float)
    low = np.full(est.shape, np.nan)
    high = np.full(est.shape, np.nan)
    if reps.shape[0] < 2:
        return low, high, float("nan")
    finite = np.isfinite(reps)
    count = finite.sum(axis=0)
    zero = np.where(finite, reps, 0.0)
    mean = zero.sum(axis=0) / np.maximum(count, 1)
    ss = (np.where(finite, reps - mean, 0.0) ** 2).sum(axis=0)
    sd = np.sqrt(ss / np.maximum(count - 1, 1))
    ok = np.isfinite(est) & (count >= 2) & (sd > 0)
    if not ok.any():
        return low, high, float("nan")
    dev = np.where(finite[:, ok], np.abs(reps[:, ok] - est[ok]) / sd[ok], -np.inf)
    m = dev.max(axis=1)
    m = m[np.isfinite(m)]
    if m.size == 0:
        return low, high, float("nan")
    c = float(np.quantile(m, level, method="higher"))
    low[ok], high[ok] = est[ok] - c * scale * sd[ok], est[ok] + c * scale * sd[ok]
    return low, high, c


def _band_scale(n_sessions: float, level: float) -> float:
    """``t_q(n - 1) / z_q``, ``q = (1 + level) / 2``: the band's small-sample widening for ``n`` sessions
    per task (1 when ``n`` is unknown, infinite or at most 1)."""
    if not np.isfinite(n_sessions) or n_sessions <= 1:
        return 1.0
    from scipy import stats

    q = (1.0 + level) / 2.0
    return float(stats.t.ppf(q, n_sessions - 1.0) / stats.norm.ppf(q))


def inflection_point(
    result: CurveResult,
    *,
    system: str | None = None,
    window: int = 5,
    align: str = "centred",
    reference: float = REFERENCE_SLOPE,
) -> InflectionResult:
    """The last budget at which a system's local Elo slope exceeds ``reference`` per decade.

    Parameters
    ----------
    result : CurveResult
        From :func:`evalkit.budget.elo_curves` (the paper uses self-Elo).
    system : str, optional
        Required when ``result`` has several systems.
    window, align
        Local-slope window (see :func:`local_slopes`).
    reference : float
        Elo per decade of the reference (400 = repeated sampling).

    Returns
    -------
    InflectionResult

    Examples
    --------
    >>> import evalkit
    >>> from evalkit.budget import elo_curves
    >>> res = elo_curves(evalkit.simulate(n_tasks=3, n_sessions=3, rng=0).traces, n_resamples=0)
    >>> inf = inflection_point(res, system="pass@1")
    >>> inf.status, round(inf.b_inf, 1)
    ('crossed', 575.5)
    """
    if system is None:
        if len(result.systems) != 1:
            raise ValueError(f"Pass system=...; the curves have {list(result.systems)}.")
        system = result.systems[0]
    rows = result.rows(system)
    budgets = result.curve["budget"].to_numpy()[rows]
    slope = local_slopes(budgets, result.curve["elo"].to_numpy()[rows], window=window, align=align)
    reps = result.replicates[:, rows]
    rep_slopes = local_slopes(budgets, reps, window=window, align=align)
    s_lo, s_hi = _quantiles(rep_slopes, result.confidence_level)
    scale = _band_scale(float(result.sessions_per_task.get(system, np.inf)), result.confidence_level)
    b_lo, b_hi, crit = simultaneous_band(slope, rep_slopes, result.confidence_level, scale=scale)
    k = int(_last_above(budgets, slope, reference))
    defined = np.isfinite(b_lo) & np.isfinite(b_hi)
    if defined.any() and np.all((b_lo[defined] <= reference) & (reference <= b_hi[defined])):
        status, b_inf = "indistinguishable", float("nan")
    elif k < 0:
        status, b_inf = "never_above", float("nan")
    else:
        status = "above_at_end" if k == budgets.size - 1 else "crossed"
        b_inf = float(budgets[k])
    failed = np.all(np.isnan(reps), axis=1)
    kr = _last_above(budgets, rep_slopes, reference)
    rep_b = np.where(kr >= 0, budgets[np.clip(kr, 0, None)], 0.0)
    rep_b = np.where(failed, np.nan, rep_b)
    lo, hi = _quantiles(rep_b[:, None], result.confidence_level)
    slopes = pd.DataFrame({"system": system, "budget": budgets, "slope": slope, "ci_low": s_lo, "ci_high": s_hi,
                           "band_low": b_lo, "band_high": b_hi})
    return InflectionResult(
        system=system, b_inf=b_inf, ci_low=float(lo[0]), ci_high=float(hi[0]), status=status,
        slopes=slopes, reference=float(reference), window=int(window), align=align,
        replicates=rep_b, confidence_level=result.confidence_level, band_critical=crit,
    )


def allocate_sessions(budget: float, b_inf: float) -> int:
    """The allocation rule ``K = max(1, round(B / b_inf))`` (halves round up).

    Parameters
    ----------
    budget : float
        Total budget ``B`` (> 0).
    b_inf : float
        Scaling inflection point (> 0). A system that never beats the reference has none
        (NaN): this raises, compare splits with :func:`split_advantage` instead.
    """
    if not (np.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be a finite number > 0; got {budget!r}.")
    if not (np.isfinite(b_inf) and b_inf > 0):
        raise ValueError(
            f"b_inf must be a finite budget > 0; got {b_inf!r} (a system that never beats the "
            "reference has no inflection point: compare splits with split_advantage)."
        )
    return max(1, int(np.floor(budget / b_inf + 0.5)))


@dataclass(frozen=True)
class SplitAdvantage:
    """Joint-scale advantage of K sessions of B/K over one session of B.

    ``statistic = r(B/K) + 400 log10 K - r(B)``, with ``r`` the system's Elo curve
    interpolated linearly in log budget; positive means splitting wins.
    """

    system: str
    budget: float
    k: int
    statistic: float
    ci_low: float
    ci_high: float
    confidence_level: float

    def confidence_interval(self) -> tuple[float, float]:
        """Percentile bootstrap interval of the advantage."""
        return self.ci_low, self.ci_high


def split_advantage(result: CurveResult, *, system: str, budget: float, k: int) -> SplitAdvantage:
    """How much better (in Elo) ``k`` independent sessions of ``budget / k`` are than one.

    Under independence the best of ``k`` sessions at ``b`` rates ``r(b) + 400 log10 k`` on
    the scale of ``r`` (exact when a session's score is its rating plus a Gumbel offset).
    ``budget`` and ``budget / k`` must lie within the grid.
    """
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    rows = result.rows(system)
    x = np.log10(result.curve["budget"].to_numpy()[rows])
    lo_b, hi_b = budget / k, budget
    if np.log10(lo_b) < x[0] - 1e-12 or np.log10(hi_b) > x[-1] + 1e-12:
        raise ValueError(
            f"budget/k = {lo_b:g} and budget = {hi_b:g} must lie within the grid "
            f"[{10 ** x[0]:g}, {10 ** x[-1]:g}]."
        )

    def adv(y: np.ndarray) -> np.ndarray:
        y = np.atleast_2d(y)
        r_lo = np.array([np.interp(np.log10(lo_b), x, row) for row in y])
        r_hi = np.array([np.interp(np.log10(hi_b), x, row) for row in y])
        return r_lo + REFERENCE_SLOPE * np.log10(k) - r_hi

    stat = float(adv(result.curve["elo"].to_numpy()[rows])[0])
    reps = result.replicates[:, rows]
    good = ~np.any(np.isnan(reps), axis=1)
    alpha = (1.0 - result.confidence_level) / 2.0
    if good.any():
        lo, hi = np.quantile(adv(reps[good]), [alpha, 1 - alpha])
    else:
        lo = hi = float("nan")
    return SplitAdvantage(
        system=system, budget=float(budget), k=int(k), statistic=stat, ci_low=float(lo),
        ci_high=float(hi), confidence_level=result.confidence_level,
    )


def split_table(result: CurveResult, *, system: str, budget: float, ks: tuple[int, ...] | None = None) -> pd.DataFrame:
    """:func:`split_advantage` for several ``k``: which split of ``budget`` rates best.

    Parameters
    ----------
    result : CurveResult
    system : str
    budget : float
    ks : tuple of int, optional
        Default: every ``k`` with ``budget / k`` still on the grid.

    Returns
    -------
    pandas.DataFrame
        ``k, budget_per_session, advantage, ci_low, ci_high`` (advantage over ``k = 1``).
    """
    if ks is None:
        lo = float(result.curve["budget"].to_numpy()[result.rows(system)][0])
        ks = tuple(range(1, int(np.floor(budget / lo * (1 + 1e-12))) + 1))
    rows = []
    for k in ks:
        adv = split_advantage(result, system=system, budget=budget, k=k)
        rows.append({"k": k, "budget_per_session": budget / k, "advantage": adv.statistic,
                     "ci_low": adv.ci_low, "ci_high": adv.ci_high})
    return pd.DataFrame(rows)
