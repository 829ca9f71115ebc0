"""Anytime-valid comparisons: betting confidence sequences for bounded means, and the paired
difference of two systems monitored task by task.

A *confidence sequence* ``(L_t, U_t)`` covers the mean at every ``t`` simultaneously with
probability at least ``1 - alpha``: the user may look after every task and stop whenever the
answer is settled, and the error rate stays ``alpha``. Checking a fixed-n test (McNemar, t)
after every batch does not: with a look every 20 tasks up to 400 its size under the null is
near 19 % (``scripts/sequential_null.py``).

The construction is the hedged capital process of Waudby-Smith & Ramdas (2024, "Estimating means
of bounded random variables by betting", JRSS-B 86(1)), as tensorzero implements it
(``evaluations/src/betting_confidence_sequences.rs``, removed in tensorzero@552cb47; read at its
parent commit): for every candidate mean ``m`` on a grid, two gamblers bet that the mean is above
(``K+``) or below (``K-``) ``m``; ``m`` leaves the set once ``max(h K+, (1-h) K-) >= 1/alpha``.

**The bets (named, as the method requires):** predictable plug-in empirical-Bernstein bets
``lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(t+1)))`` with the regularised running
variance ``sigma2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t+1)`` and regularised mean
``mu_t = (1/2 + sum_{i<=t} x_i) / (t+1)``, truncated at ``c/m`` (``K+``) and ``c/(1-m)`` (``K-``)
with ``c = 1/2``; hedge weight ``h = 1/2``. Bounds are the outer grid points; the reported set is
the running intersection (it never widens), kept to contain the point estimate.

Order matters: the sequence is valid when the observations arrive in an order independent of
their values (i.i.d. draws from the task population, or a random permutation). Files are often
sorted (by source, difficulty, date), so :func:`sequential_comparison` shuffles the tasks with a
recorded seed by default and warns when asked to keep the file order.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from evalkit._rng import RNGLike, as_generator
from evalkit.stats._result import ConfidenceInterval
from evalkit.stats._validate import check_confidence_level

__all__ = ["BettingCS", "ConfidenceSequence", "betting_confidence_sequence", "SequentialComparison",
           "sequential_comparison", "fixed_n_equal_power", "BET_TRUNCATION", "DEFAULT_GRID"]

#: The truncation ``c`` of the bets: ``lambda <= c / m`` (upper gambler), ``c / (1 - m)`` (lower).
BET_TRUNCATION = 0.5
#: Grid points on [0, 1] (tensorzero's default resolution).
DEFAULT_GRID = 1001

_METHOD = ("betting confidence sequence (Waudby-Smith & Ramdas 2024 hedged capital process, predictable "
           "plug-in empirical-Bernstein bets truncated at 1/2, hedge weight 1/2)")


def _grid(grid: int | ArrayLike) -> np.ndarray:
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        if grid < 2:
            raise ValueError(f"grid must have at least 2 points; got {grid}.")
        return np.arange(int(grid), dtype=float) / (int(grid) - 1)
    m = np.asarray(grid, dtype=float).reshape(-1)
    if m.size < 2 or not np.all(np.diff(m) > 0) or m[0] < 0 or m[-1] > 1:
        raise ValueError("grid must be an increasing sequence of at least 2 points in [0, 1] (or a number of "
                         "equally spaced points, e.g. 1001).")
    return m


def _bets(t: np.ndarray, prev_variance: np.ndarray, alpha: float) -> np.ndarray:
    """``sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(t+1)))`` (tensorzero ``compute_bet``)."""
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (prev_variance * t * np.log(t + 1.0)))


def _first_index(mask: np.ndarray) -> np.ndarray:
    """Per row, the first True column (the row length when there is none)."""
    hit = mask.any(axis=1)
    return np.where(hit, mask.argmax(axis=1), mask.shape[1])


@dataclass
class BettingCS:
    """The state of a betting confidence sequence on [0, 1], updated batch by batch.

    ``update(x)`` adds observations and returns the bounds after each of them. The state holds
    the log-wealth of both gamblers on the grid, so a run that stops and resumes (``evalkit
    judge --stop-when-settled``) continues the same sequence.

    Attributes
    ----------
    alpha : float
    grid : numpy.ndarray
        Candidate means.
    hedge_weight : float
        ``h`` in ``max(h K+, (1 - h) K-)``.
    mean_regularized, variance_regularized : float
        ``mu_t`` and ``sigma2_t`` (start 1/2 and 1/4).
    count : int
    lower, upper, estimate : float
        The current (running-intersection) bounds and the grid point minimising the wealth.
    """

    alpha: float
    grid: np.ndarray
    hedge_weight: float = 0.5
    truncation: float = BET_TRUNCATION
    mean_regularized: float = 0.5
    variance_regularized: float = 0.25
    count: int = 0
    lower: float = 0.0
    upper: float = 1.0
    estimate: float = 0.5
    log_wealth_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    log_wealth_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def start(cls, *, confidence_level: float = 0.95, grid: int | ArrayLike = DEFAULT_GRID,
              hedge_weight: float = 0.5, truncation: float = BET_TRUNCATION) -> BettingCS:
        """A sequence with no observations yet (bounds [0, 1])."""
        level = check_confidence_level(confidence_level)
        if not 0.0 <= hedge_weight <= 1.0:
            raise ValueError(f"hedge_weight must be in [0, 1]; got {hedge_weight!r}.")
        if not 0.0 < truncation < 1.0:
            raise ValueError(f"truncation must be in (0, 1); got {truncation!r}.")
        m = _grid(grid)
        return cls(alpha=1.0 - level, grid=m, hedge_weight=float(hedge_weight), truncation=float(truncation),
                   log_wealth_upper=np.zeros(m.size), log_wealth_lower=np.zeros(m.size))

    def update(self, x: ArrayLike) -> dict[str, np.ndarray]:
        """Add observations in [0, 1], in order; return per observation ``lower``, ``upper`` (running
        intersection), ``lower_raw``, ``upper_raw`` (that step's set alone), ``estimate`` and ``bet``."""
        obs = np.asarray(x, dtype=float).reshape(-1)
        if obs.size == 0:
            return {k: np.zeros(0) for k in ("lower", "upper", "lower_raw", "upper_raw", "estimate", "bet")}
        bad = ~((obs >= 0.0) & (obs <= 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"Observations of a betting confidence sequence must lie in [0, 1]; got {obs[i]!r} at "
                             f"position {self.count + i} (rescale bounded scores first).")
        n, c0 = obs.size, self.count
        t = np.arange(c0 + 1, c0 + n + 1, dtype=float)
        means = (self.mean_regularized * (c0 + 1) + np.cumsum(obs)) / (t + 1.0)
        variances = (self.variance_regularized * (c0 + 1) + np.cumsum((obs - means) ** 2)) / (t + 1.0)
        lagged = np.concatenate(([self.variance_regularized], variances[:-1]))
        bets = _bets(t, lagged, self.alpha)
        m = self.grid
        with np.errstate(divide="ignore"):
            cap_up = np.where(m == 0.0, np.inf, self.truncation / m)
            cap_lo = np.where(m == 1.0, np.inf, self.truncation / (1.0 - m))
        dev = obs[:, None] - m[None, :]
        log_up = self.log_wealth_upper + np.cumsum(np.log1p(np.minimum(bets[:, None], cap_up) * dev), axis=0)
        log_lo = self.log_wealth_lower + np.cumsum(np.log1p(-np.minimum(bets[:, None], cap_lo) * dev), axis=0)
        h = self.hedge_weight
        with np.errstate(divide="ignore"):
            hedged = np.maximum(np.log(h) + log_up, np.log1p(-h) + log_lo) if 0 < h < 1 else (
                log_up if h == 1 else log_lo)
        threshold = math.log(1.0 / self.alpha)
        outside = hedged >= threshold
        est_idx = hedged.argmin(axis=1)
        rows = np.arange(n)
        cols = np.arange(m.size)[None, :]
        # lower: the last grid point outside below the first inside one at or left of the minimum (outer bound)
        inside_left = ~outside & (cols <= est_idx[:, None])
        first_in = _first_index(inside_left)
        lo_idx = np.where(outside[:, 0], np.maximum(first_in - 1, 0), 0)
        # upper: the first grid point outside at or right of the minimum
        out_right = outside & (cols >= est_idx[:, None])
        first_out = _first_index(out_right)
        hi_idx = np.where(outside[:, -1], np.minimum(first_out, m.size - 1), m.size - 1)
        lower_raw, upper_raw, est = m[lo_idx], m[hi_idx], m[est_idx]
        lower, upper = np.empty(n), np.empty(n)
        lo_prev, hi_prev = self.lower, self.upper
        for k in range(n):  # running intersection, kept to contain the estimate
            lo_prev = min(max(lower_raw[k], lo_prev), est[k])
            hi_prev = max(min(upper_raw[k], hi_prev), est[k])
            lower[k], upper[k] = lo_prev, hi_prev
        self.mean_regularized, self.variance_regularized = float(means[-1]), float(variances[-1])
        self.count = c0 + n
        self.lower, self.upper, self.estimate = float(lower[-1]), float(upper[-1]), float(est[-1])
        self.log_wealth_upper, self.log_wealth_lower = log_up[-1].copy(), log_lo[-1].copy()
        del rows
        return {"lower": lower, "upper": upper, "lower_raw": lower_raw, "upper_raw": upper_raw, "estimate": est,
                "bet": bets}

    def interval(self) -> ConfidenceInterval:
        """The current bounds."""
        return ConfidenceInterval(self.lower, self.upper)


@dataclass(frozen=True)
class ConfidenceSequence:
    """A betting confidence sequence over a sequence of bounded observations.

    Attributes
    ----------
    method : str
    lower, upper : numpy.ndarray
        Bounds after each observation (running intersection: valid simultaneously for all ``t``),
        on the scale of the data (``bounds``).
    lower_raw, upper_raw : numpy.ndarray
        Each step's confidence set alone, before intersecting with the earlier ones.
    estimate : numpy.ndarray
        The grid point minimising the hedged wealth at each step.
    mean : numpy.ndarray
        Running sample mean.
    n : int
    confidence_level : float
    bounds : (float, float)
        The range the observations are known to lie in (rescaled to [0, 1] for the bets).
    mean_regularized, variance_regularized : float
        The final regularised mean and variance on the [0, 1] scale (tensorzero's state).
    """

    method: str
    lower: np.ndarray
    upper: np.ndarray
    lower_raw: np.ndarray
    upper_raw: np.ndarray
    estimate: np.ndarray
    mean: np.ndarray
    n: int
    confidence_level: float
    bounds: tuple[float, float]
    mean_regularized: float
    variance_regularized: float

    def at(self, t: int) -> ConfidenceInterval:
        """The interval after ``t`` observations (1-based)."""
        if not 1 <= t <= self.n:
            raise ValueError(f"t must be between 1 and {self.n}; got {t}.")
        return ConfidenceInterval(float(self.lower[t - 1]), float(self.upper[t - 1]))

    def first_excluding(self, value: float) -> int | None:
        """The first ``t`` whose interval excludes ``value`` (None if none does)."""
        hit = (self.lower > value) | (self.upper < value)
        return int(np.argmax(hit)) + 1 if hit.any() else None


def betting_confidence_sequence(
    x: ArrayLike, *, bounds: tuple[float, float] = (0.0, 1.0), confidence_level: float = 0.95,
    grid: int | ArrayLike = DEFAULT_GRID, hedge_weight: float = 0.5, truncation: float = BET_TRUNCATION,
) -> ConfidenceSequence:
    """Betting confidence sequence for the mean of bounded observations, in the order given.

    Parameters
    ----------
    x : array_like
        Observations, each in ``bounds``; their order is the order of the looks.
    bounds : (float, float)
        Known range of an observation (default [0, 1]); the data are rescaled to [0, 1].
    confidence_level : float
        ``1 - alpha``: the probability that every interval of the sequence covers the mean.
    grid : int or array_like
        Candidate means: a number of equally spaced points on [0, 1] (default 1001) or the points.
        Bounds are grid points (outer: conservative by at most one grid step).
    hedge_weight, truncation : float
        ``h`` and ``c`` of the hedged capital process (defaults 1/2, 1/2).

    Returns
    -------
    ConfidenceSequence

    Examples
    --------
    tensorzero's known-value test (101 grid points, alpha = 0.05):

    >>> cs = betting_confidence_sequence([0.5, 0.9, 0.6, 0.8, 0.7, 0.75, 0.65, 0.72, 0.68, 0.7], grid=101)
    >>> float(cs.lower_raw[-1]), float(cs.upper_raw[-1]), round(cs.variance_regularized, 15)
    (0.36, 0.86, 0.031827712868268)
    """
    lo, hi = (float(bounds[0]), float(bounds[1]))
    if not hi > lo:
        raise ValueError(f"bounds must be (low, high) with high > low; got {bounds!r}.")
    obs = np.asarray(x, dtype=float).reshape(-1)
    if obs.size == 0:
        raise ValueError("A confidence sequence needs at least one observation.")
    if not np.all(np.isfinite(obs)):
        raise ValueError("Observations must be finite numbers (drop or score missing ones explicitly).")
    out = (obs < lo) | (obs > hi)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(f"Observation {obs[i]!r} at position {i} lies outside bounds=({lo:g}, {hi:g}); the betting "
                         "construction needs the range the values are known to lie in.")
    state = BettingCS.start(confidence_level=confidence_level, grid=grid, hedge_weight=hedge_weight,
                            truncation=truncation)
    path = state.update((obs - lo) / (hi - lo))
    scale = hi - lo
    n = obs.size
    return ConfidenceSequence(
        method=_METHOD, lower=lo + scale * path["lower"], upper=lo + scale * path["upper"],
        lower_raw=lo + scale * path["lower_raw"], upper_raw=lo + scale * path["upper_raw"],
        estimate=lo + scale * path["estimate"], mean=np.cumsum(obs) / np.arange(1, n + 1), n=n,
        confidence_level=float(confidence_level), bounds=(lo, hi), mean_regularized=state.mean_regularized,
        variance_regularized=state.variance_regularized,
    )


# --------------------------------------------------------------------------------------------
# the paired comparison of two systems


@dataclass(frozen=True)
class SequentialComparison:
    """Anytime-valid comparison of two systems on shared tasks (difference = second - first).

    Attributes
    ----------
    sequence : ConfidenceSequence
        On the per-task difference ``b - a`` (bounds ``[low - high, high - low]``).
    order : numpy.ndarray
        The task order the sequence used (indices into the input).
    order_kind : {"random", "file"}
    seed : int or None
        Seed of the random order (recorded in the report).
    settled_at : int or None
        The first look whose interval excludes 0 (the number of tasks used), or None.
    direction : str
        "b > a", "b < a" or "" (not settled).
    looks : numpy.ndarray
        The task counts at which the sequence was inspected.
    table : pandas.DataFrame
        One row per look: ``tasks, mean_diff, cs_low, cs_high, excludes_0``.
    mean_diff, sd_diff : float
        Over all tasks.
    trend_pvalue : float
        Spearman test of a trend of the differences along the order used (a drift check).
    plan : dict
        :func:`fixed_n_equal_power` at the full-sample effect (empty when not computed).
    """

    sequence: ConfidenceSequence
    order: np.ndarray
    order_kind: str
    seed: int | None
    settled_at: int | None
    direction: str
    looks: np.ndarray
    table: Any
    mean_diff: float
    sd_diff: float
    trend_pvalue: float
    plan: dict[str, Any]
    n: int
    confidence_level: float

    def statement(self, *, unit: str = "tasks", per_task_cost: float | None = None, cost_unit: str = "") -> str:
        """A sentence: when the answer settled and what that saved against a fixed-n design."""
        level = f"{self.confidence_level:.0%}"
        order = (f"tasks in a random order (seed {self.seed})" if self.order_kind == "random"
                 else "tasks in file order")
        if self.settled_at is None:
            final = self.sequence.at(self.n)
            text = (f"Not settled after {self.n} {unit}: the {level} confidence sequence on the difference "
                    f"(second - first) still holds 0, [{final.low:.3g}, {final.high:.3g}] ({order}).")
        else:
            ci = self.sequence.at(self.settled_at)
            text = (f"Settled at {unit[:-1] if unit.endswith('s') else unit} {self.settled_at} of {self.n}: "
                    f"{self.direction} (the {level} confidence sequence on second - first excludes 0 from then "
                    f"on, [{ci.low:.3g}, {ci.high:.3g}] at that look; {order}).")
        plan = self.plan
        if plan.get("n_fixed") is not None:
            text += (f" A fixed-n paired t-test of equal power ({plan['power']:.0%}, the sequential procedure's own "
                     f"power at the observed effect, by {plan['n_boot']} bootstrap sequences) needs "
                     f"{plan['n_fixed']} {unit}")
            if self.settled_at is not None:
                saved = plan["n_fixed"] - self.settled_at
                text += f"; stopping here {'saved' if saved >= 0 else 'cost'} {abs(saved)} {unit}"
                if per_task_cost:
                    text += f" ({abs(saved) * per_task_cost:.0f} {cost_unit})"
            text += (f". Expected stopping time of the sequential procedure at this effect: "
                     f"{plan['expected_stop']:.1f} {unit}.")
        elif plan.get("note"):
            text += " " + plan["note"]
        return text


def _looks(n: int, every: int | None) -> np.ndarray:
    if every is None or every <= 1:
        return np.arange(1, n + 1)
    looks = np.arange(every, n + 1, every)
    return looks if looks.size and looks[-1] == n else np.append(looks, n)


def sequential_comparison(
    a: ArrayLike, b: ArrayLike, *, bounds: tuple[float, float] = (0.0, 1.0), confidence_level: float = 0.95,
    order: str = "random", rng: RNGLike | None = None, look_every: int | None = None,
    grid: int = DEFAULT_GRID, power_boot: int = 200, plan: bool = True,
) -> SequentialComparison:
    """Monitor the paired difference ``b - a`` task by task with a betting confidence sequence.

    Parameters
    ----------
    a, b : array_like
        Per-task scores of the two systems (paired by position), each in ``bounds``.
    bounds : (float, float)
        Range of a score (default [0, 1]); the difference lies in ``[low - high, high - low]``.
    confidence_level : float
    order : {"random", "file"}
        Shuffle the tasks with ``rng`` (default; the seed is recorded), or keep the given order
        (warned about: sorted files drift, and the sequence then need not cover the mean).
    rng : int or numpy.random.Generator
        Required for ``order="random"`` and for the power plan.
    look_every : int, optional
        Inspect the sequence every this many tasks (default: after every task). The sequence is
        valid at every task, so looking more often costs nothing.
    grid : int
        Grid points of the candidate means.
    power_boot : int
        Bootstrap sequences for the sequential procedure's power and expected stopping time at the
        full-sample effect (the fixed-n design of equal power is solved with statsmodels).
    plan : bool
        Compute the fixed-n comparison (:func:`fixed_n_equal_power`).

    Returns
    -------
    SequentialComparison
    """
    import pandas as pd
    from scipy import stats

    level = check_confidence_level(confidence_level)
    xa, xb = np.asarray(a, dtype=float).reshape(-1), np.asarray(b, dtype=float).reshape(-1)
    if xa.size != xb.size:
        raise ValueError(f"a and b must be paired per task: got {xa.size} and {xb.size} scores.")
    if xa.size < 2:
        raise ValueError(f"A sequential comparison needs at least 2 shared tasks; got {xa.size}.")
    lo, hi = float(bounds[0]), float(bounds[1])
    for name, v in (("a", xa), ("b", xb)):
        if not np.all(np.isfinite(v)) or ((v < lo) | (v > hi)).any():
            raise ValueError(f"The scores of {name} must be finite and within bounds=({lo:g}, {hi:g}) (the betting "
                             "construction needs bounded outcomes); rescale them or pass the right bounds.")
    if order not in ("random", "file"):
        raise ValueError(f"order must be 'random' or 'file'; got {order!r}.")
    seed: int | None = None
    if order == "random":
        if rng is None:
            raise ValueError("order='random' needs rng= (a seed, recorded in the report).")
        seed = int(rng) if isinstance(rng, (int, np.integer)) else None
        perm = as_generator(rng).permutation(xa.size)
    else:
        perm = np.arange(xa.size)
        warnings.warn("The tasks are taken in file order: a confidence sequence assumes an order independent of "
                      "the outcomes, and files are often sorted (by source, difficulty or date), so the sequence "
                      "can drift away from the full-sample mean. Shuffle them with a recorded seed (the default, "
                      "order='random').", UserWarning, stacklevel=2)
    d = (xb - xa)[perm]
    span = hi - lo
    cs = betting_confidence_sequence(d, bounds=(-span, span), confidence_level=level, grid=grid)
    looks = _looks(d.size, look_every)
    excl = (cs.lower[looks - 1] > 0) | (cs.upper[looks - 1] < 0)
    settled = int(looks[np.argmax(excl)]) if excl.any() else None
    direction = "" if settled is None else ("b > a" if cs.lower[settled - 1] > 0 else "b < a")
    table = pd.DataFrame({"tasks": looks, "mean_diff": cs.mean[looks - 1], "cs_low": cs.lower[looks - 1],
                          "cs_high": cs.upper[looks - 1], "excludes_0": excl})
    sd = float(np.std(d, ddof=1))
    trend = float(stats.spearmanr(np.arange(d.size), d).pvalue) if np.ptp(d) > 0 else 1.0
    info: dict[str, Any] = {}
    if plan:
        info = fixed_n_equal_power(d, bounds=(-span, span), confidence_level=level, look_every=look_every,
                                   n_boot=power_boot, rng=as_generator(rng) if rng is not None else 0, grid=grid)
    return SequentialComparison(sequence=cs, order=perm, order_kind=order, seed=seed, settled_at=settled,
                                direction=direction, looks=looks, table=table, mean_diff=float(d.mean()),
                                sd_diff=sd, trend_pvalue=trend, plan=info, n=int(d.size), confidence_level=level)


def fixed_n_equal_power(
    d: ArrayLike, *, bounds: tuple[float, float], confidence_level: float = 0.95, look_every: int | None = None,
    n_boot: int = 200, rng: RNGLike = 0, grid: int = DEFAULT_GRID, horizon: int | None = None,
) -> dict[str, Any]:
    """The fixed-n paired design with the power of the sequential procedure, at the observed effect.

    The sequential procedure's power (the share of bootstrap sequences, tasks drawn with replacement
    from the observed differences ``d``, that settle within ``len(d)`` tasks) and its expected stopping
    time are estimated by simulation (sequences of ``horizon`` tasks, default ``len(d)``: e.g. every task
    available when judging stopped early); the fixed-n two-sided paired t-test with that power at the
    observed standardised effect ``mean(d) / sd(d)`` needs ``n_fixed`` tasks
    (``statsmodels.stats.power.TTestPower().solve_power``).

    Returns
    -------
    dict
        ``power``, ``expected_stop``, ``n_fixed`` (None when the effect is 0 or the power too low
        to plan for), ``effect_size``, ``n_boot``, ``horizon`` and ``note``.
    """
    x = np.asarray(d, dtype=float).reshape(-1)
    n = x.size if horizon is None else int(horizon)
    sd = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    out: dict[str, Any] = {"n_boot": int(n_boot), "horizon": int(n), "n_fixed": None, "note": ""}
    if sd == 0.0 or x.mean() == 0.0:
        out.update(power=float("nan"), expected_stop=float("nan"), effect_size=0.0,
                   note="No fixed-n comparison: the observed effect is 0 (or every difference is equal).")
        return out
    gen = as_generator(rng)
    looks = _looks(n, look_every)
    stops = np.empty(n_boot)
    for r in range(n_boot):
        cs = betting_confidence_sequence(x[gen.integers(0, x.size, n)], bounds=bounds, confidence_level=confidence_level,
                                         grid=grid)
        hit = (cs.lower[looks - 1] > 0) | (cs.upper[looks - 1] < 0)
        stops[r] = looks[np.argmax(hit)] if hit.any() else np.inf
    settled = np.isfinite(stops)
    power = float(settled.mean())
    effect = float(x.mean() / sd)
    out.update(power=power, expected_stop=float(np.minimum(stops, n).mean()), effect_size=effect)
    alpha = 1.0 - confidence_level
    if power <= alpha or power >= 1.0 - 1e-9:
        power_used = min(max(power, alpha + 1e-3), 0.999)
        if power <= alpha:
            out["note"] = (f"No fixed-n comparison: the sequential procedure's power at this effect within {n} tasks "
                           f"is {power:.2f}, no more than alpha.")
            return out
        out["power_used"] = power_used
    from statsmodels.stats.power import TTestPower

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_fixed = TTestPower().solve_power(effect_size=abs(effect), alpha=alpha,
                                           power=min(power, 0.999), alternative="two-sided")
    out["n_fixed"] = int(math.ceil(float(np.asarray(n_fixed).reshape(-1)[0])))
    return out
