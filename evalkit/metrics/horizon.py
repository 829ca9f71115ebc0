"""METR's time horizon: the human task length at which an agent succeeds with probability q.

The method is METR's (``METR/eval-analysis-public``; Kwa et al. 2025, *Measuring AI Ability to
Complete Long Tasks*), reimplemented and pinned to their code run on their data
(``tests/test_metrics_horizon.py``):

1. **Weights** (``weights=``, METR's ``compute_task_weights.py``), per agent:
   ``"invsqrt"`` gives each run ``1 / (runs of the agent on the task * sqrt(tasks of the agent
   in the family))``, ``"equal"`` ``1 / (runs on the task)``, both normalised to sum 1 per
   agent; ``"none"`` gives every run weight 1 (METR's ``weighting: null``).
2. **Fit**: for each agent, the logistic regression of success on ``log2(human minutes)`` with
   an L2 penalty ``regularization / 2 * slope**2`` (sklearn's ``C = 1 / regularization``;
   the intercept is not penalised), solved exactly (:mod:`evalkit.metrics._logistic`).
3. **Horizon**: ``h_q = 2 ** ((logit(q) - intercept) / slope)`` minutes.
4. **Bootstrap** (``bootstrap.py``): hierarchical, task family -> task -> run. Families are
   resampled with replacement; within each drawn family, its tasks; then within each
   (task, agent) the agent's runs. One resample is shared by all agents, so the horizons of
   different agents (and the trend across them) vary together. The draws are made in METR's
   order (:func:`hierarchical_resample`), so the same generator gives METR's replicate; runs
   keep their original weights (METR does not renormalise).
5. **Trend** (``--dates``): ordinary least squares of ``ln(max(h_50, 1e-3))`` on the release
   date in days; doubling time ``ln 2 / slope`` (METR's ``fit_trendline``), with the
   interval from the same bootstrap replicates.

Two deliberate differences from METR's scripts, both reported: a replicate in which an agent
has no success (or no failure) counts as horizon 0 (or infinite), where METR drops it; and the
percentile interval is at ``confidence_level`` (METR plots 80 %: pass 0.8 to match).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._progress import ProgressFn, tick
from evalkit._rng import RNGLike, as_generator
from evalkit.metrics._logistic import LogisticFit, fit_many, lbfgs_horizon_slack, logit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WEIGHTS", "HorizonResult", "DoublingTime", "time_horizon", "task_weights", "hierarchical_resample",
           "doubling_time", "MIN_TASKS", "TREND_RULES"]

WEIGHTS: tuple[str, ...] = ("invsqrt", "equal", "none")
MIN_TASKS = 10  # an agent with fewer tasks gets a warning (its horizon rests on few lengths)
TREND_FLOOR = 1e-3  # minutes: METR clips horizons here before taking the log for the trend
_BATCH = 64  # bootstrap replicates fitted per vectorised batch


def task_weights(runs: pd.DataFrame, scheme: str = "invsqrt") -> np.ndarray:
    """Per-run weights of METR's ``compute_sample_weights`` (module docstring, step 1).

    Parameters
    ----------
    runs : DataFrame
        Columns ``agent, task, family``.
    scheme : {"invsqrt", "equal", "none"}
    """
    if scheme not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS} (METR's default is 'invsqrt'); got {scheme!r}.")
    if scheme == "none":
        return np.ones(len(runs))
    per_task = runs.groupby(["agent", "task"], sort=False)["task"].transform("size").to_numpy(float)
    w = 1.0 / per_task
    if scheme == "invsqrt":
        fam_size = (runs.drop_duplicates(["agent", "task"]).groupby(["agent", "family"], sort=False).size()
                    .rename("n").reset_index())
        n = runs[["agent", "family"]].merge(fam_size, on=["agent", "family"], how="left")["n"].to_numpy(float)
        w = w / np.sqrt(n)
    total = _group_total(runs["agent"].to_numpy(object), w)
    return w / total


def _group_total(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row's group total of ``values`` (groups by ``keys``)."""
    _, inv = np.unique(keys.astype(str), return_inverse=True)
    return np.bincount(inv, weights=values)[inv]


@dataclass(frozen=True)
class _Design:
    """A runs table's hierarchy as integer codes in METR's sort orders (sorted names)."""

    agent: np.ndarray  # (n,) agent code of each row
    task: np.ndarray  # (n,) task code of each row
    agents: tuple[str, ...]
    tasks_of_family: tuple[np.ndarray, ...]  # task codes of each family (sorted by name)
    family_of_task: np.ndarray  # (T,)
    rows_of_task: tuple[np.ndarray, ...]  # row indices of each task, in table order
    key_task: np.ndarray  # (K,) task of each (task, agent) key, keys sorted as METR: task + "|||" + agent
    key_rows: tuple[np.ndarray, ...]  # rows of each key, in table order
    key_n: np.ndarray  # (K,) rows of each key
    key_start: np.ndarray  # (K,) where each key's rows start in key_flat
    key_flat: np.ndarray  # the rows of all keys, key by key

    @classmethod
    def of(cls, runs: pd.DataFrame) -> _Design:
        _, fam = np.unique(runs["family"].to_numpy(str), return_inverse=True)
        _, task = np.unique(runs["task"].to_numpy(str), return_inverse=True)
        agent_names, agent = np.unique(runs["agent"].to_numpy(str), return_inverse=True)
        key = np.char.add(np.char.add(runs["task"].to_numpy(str), "|||"), runs["agent"].to_numpy(str))
        _, key_code = np.unique(key, return_inverse=True)
        n_tasks = int(task.max()) + 1
        family_of_task = np.zeros(n_tasks, dtype=np.int64)
        family_of_task[task] = fam
        tasks_of_family = tuple(np.flatnonzero(family_of_task == f) for f in range(int(fam.max()) + 1))
        rows_of_task = tuple(np.flatnonzero(task == t) for t in range(n_tasks))
        key_rows = tuple(np.flatnonzero(key_code == k) for k in range(int(key_code.max()) + 1))
        key_task = np.array([task[r[0]] for r in key_rows], dtype=np.int64)
        key_n = np.array([r.size for r in key_rows], dtype=np.int64)
        return cls(agent=agent, task=task, agents=tuple(str(a) for a in agent_names), tasks_of_family=tasks_of_family,
                   family_of_task=family_of_task, rows_of_task=rows_of_task, key_task=key_task, key_rows=key_rows,
                   key_n=key_n, key_start=np.concatenate([[0], np.cumsum(key_n)[:-1]]).astype(np.int64),
                   key_flat=np.concatenate(key_rows))

    @property
    def n_rows(self) -> int:
        return int(self.task.size)


LEVELS: tuple[str, ...] = ("family", "task", "run")


def _check_levels(levels: Sequence[str]) -> tuple[str, ...]:
    out = tuple(levels)
    if any(lv not in LEVELS for lv in out) or list(out) != [lv for lv in LEVELS if lv in out]:
        raise ValueError(f"levels must be some of {LEVELS}, outermost first (e.g. family,task,run or task,run); got "
                         f"{list(out)}.")
    return out


def _task_copies(d: _Design, rng: np.random.Generator, levels: tuple[str, ...]) -> np.ndarray:
    """The task codes of one replicate, one entry per drawn copy, in METR's order of draws.

    ``rng.integers(0, n, size=n)`` is the draw ``rng.choice(n, size=n, replace=True)`` makes
    (METR's call), without its overhead; the test against METR's own code pins the equality."""
    n_fam = len(d.tasks_of_family)
    if "family" in levels:
        families = rng.integers(0, n_fam, size=n_fam)
        if "task" not in levels:
            return np.concatenate([d.tasks_of_family[f] for f in families])
        out = []
        for f in families:
            tasks = d.tasks_of_family[f]
            out.append(tasks[rng.integers(0, tasks.size, size=tasks.size)])
        return np.concatenate(out)
    n_tasks = d.family_of_task.size
    if "task" in levels:
        return rng.integers(0, n_tasks, size=n_tasks)
    return np.arange(n_tasks)


def _run_draw(d: _Design, copies: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows after resampling runs within each (task, agent) of the drawn tasks (METR's
    ``bootstrap_runs_by_task_agent``: one ``rng.random`` vector over the keys in sorted order)."""
    c = np.bincount(copies, minlength=d.family_of_task.size)
    m = c[d.key_task] * d.key_n
    u = rng.random(int(m.sum()))
    group = np.repeat(np.arange(m.size), m)
    pick = (u * m[group]).astype(np.int64) % d.key_n[group]  # copies are identical: position k is row k mod n
    return d.key_flat[d.key_start[group] + pick]


def hierarchical_resample(design: _Design | pd.DataFrame, rng: np.random.Generator,
                          levels: Sequence[str] = LEVELS) -> np.ndarray:
    """Row indices of one hierarchical bootstrap replicate (METR's ``bootstrap_sample``).

    With the family level, the families (sorted by name) are drawn with replacement,
    ``rng.choice(F, size=F)``; then, with the task level, within each drawn family copy in turn
    its tasks (sorted), ``rng.choice(n, size=n)``; every drawn task brings the rows of all
    agents. Then, with the run level, within each (task, agent), taken in the order of the
    string ``task + "|||" + agent``, the rows drawn so far are resampled with replacement using
    one ``rng.random(n_rows)`` vector (row ``floor(u * count)`` of the group). The draws and
    their order are METR's, so ``numpy.random.default_rng(42 + i)`` gives METR's replicate
    ``i``; the indices come back in METR's order.

    Parameters
    ----------
    design : DataFrame
        Columns ``agent, task, family``.
    rng : numpy.random.Generator
    levels : sequence of {"family", "task", "run"}
        Outermost first (default all three).
    """
    d = design if isinstance(design, _Design) else _Design.of(_check_runs(design, scores=False))
    lv = _check_levels(levels)
    copies = _task_copies(d, rng, lv)
    if "run" in lv:
        return _run_draw(d, copies, rng)
    return np.concatenate([d.rows_of_task[t] for t in copies])


@dataclass(frozen=True)
class DoublingTime:
    """The trend of the 50 % horizon across agents' release dates.

    Attributes
    ----------
    days : float
        Doubling time, ``ln 2 / slope`` of ``ln(h_50)`` on the date (days); inf if the slope <= 0.
    ci : (float, float)
        Bootstrap percentile interval at ``confidence_level`` (from the slope's interval; the
        upper end is inf when the slope's lower end is <= 0).
    slope_per_year : float
        ``ln(h_50)`` per year (``365.25 * slope``).
    r_squared : float
    agents : tuple of str
        The agents in the fit (those with a date and a finite horizon).
    n_resamples, n_used : int
        Replicates drawn, and those used (at least two agents to fit; with rule "metr", a
        positive doubling time).
    replicate_days : tuple of float
        The used replicates' doubling times (inf for a slope <= 0).
    rule : {"clip", "metr"}
        See :func:`doubling_time`.
    """

    days: float
    ci: tuple[float, float]
    slope_per_year: float
    intercept: float
    r_squared: float
    agents: tuple[str, ...]
    confidence_level: float
    n_resamples: int
    n_used: int
    replicate_days: tuple[float, ...] = ()
    rule: str = "clip"

    def predict(self, ordinal_days: np.ndarray) -> np.ndarray:
        """Fitted h_50 (minutes) at dates given as days since 0001-01-01 (``date.toordinal()``)."""
        return np.exp(self.intercept + self.slope_per_year / 365.25 * np.asarray(ordinal_days, dtype=float))

    def sentence(self) -> str:
        lo, hi = self.ci
        hi_text = "no upper bound (the trend may be flat)" if not math.isfinite(hi) else f"{hi:.0f}"
        return (f"The 50% horizon doubles every {self.days:.0f} days ({100 * self.confidence_level:g}% bootstrap "
                f"interval {lo:.0f} to {hi_text}), over {len(self.agents)} agents' release dates.")


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    xm, ym = x.mean(), y.mean()
    sxx = ((x - xm) ** 2).sum()
    slope = ((x - xm) * (y - ym)).sum() / sxx
    intercept = ym - slope * xm
    resid = y - intercept - slope * x
    tss = ((y - ym) ** 2).sum()
    r2 = 1 - (resid**2).sum() / tss if tss > 0 else float("nan")
    return float(slope), float(intercept), float(r2)


TREND_RULES: tuple[str, ...] = ("clip", "metr")


def doubling_time(p50: Mapping[str, float], dates: Mapping[str, Any], replicates: pd.DataFrame | None = None, *,
                  confidence_level: float = 0.95, rule: str = "clip") -> DoublingTime:
    """Doubling time of the 50 % horizon (module docstring, step 5).

    Parameters
    ----------
    p50 : mapping agent -> minutes
    dates : mapping agent -> date (``datetime.date``, ``datetime`` or ISO text)
        Agents without a date are left out.
    replicates : DataFrame, optional
        Bootstrap replicates of p50: one row per replicate, one column per agent.
    rule : {"clip", "metr"}
        How replicates treat horizons below 1e-3 minutes. ``"clip"`` (default) clips them to
        1e-3, as the point fit does, and takes the interval of the slope. ``"metr"`` is METR's
        ``add_bootstrap_confidence_region``: an agent whose replicate horizon is below 1e-3 (or
        not finite) is left out of that replicate's fit, replicates with a doubling time <= 0
        are dropped, and the interval is that of the remaining doubling times; the point fit
        still clips, so the two can disagree (on METR's runs the point estimate is 72 days and
        the median replicate 132).
    """
    from evalkit.stats._validate import check_confidence_level

    level = check_confidence_level(confidence_level)
    if rule not in TREND_RULES:
        raise ValueError(f"rule must be one of {TREND_RULES}; got {rule!r}.")
    days = {a: _ordinal(d, a) for a, d in dates.items()}
    agents = tuple(a for a in p50 if a in days and math.isfinite(p50[a]) and p50[a] >= 0)
    if len(agents) < 2:
        raise ValueError(f"The doubling time needs at least two agents with a release date and a finite horizon; "
                         f"got {len(agents)} ({list(agents)}). Check that the dates file names the agents as the runs "
                         "do.")
    x = np.array([days[a] for a in agents], dtype=float)
    if np.ptp(x) == 0:
        raise ValueError("All agents in the trend have the same release date; the doubling time is undefined.")
    y = np.log(np.maximum([p50[a] for a in agents], TREND_FLOOR))
    slope, intercept, r2 = _ols(x, y)
    ci = (float("nan"), float("nan"))
    n_used, n_rep = 0, 0
    doubling: list[float] = []
    if replicates is not None and len(replicates):
        n_rep = len(replicates)
        cols = [a for a in agents if a in replicates.columns]
        vals = replicates[cols].to_numpy(float)
        xs = np.array([days[a] for a in cols], dtype=float)
        slopes = []
        for row in vals:
            ok = np.isfinite(row) & (row >= (TREND_FLOOR if rule == "metr" else 0))
            if ok.sum() >= 2 and np.ptp(xs[ok]) > 0:
                slopes.append(_ols(xs[ok], np.log(np.maximum(row[ok], TREND_FLOOR)))[0])
        lo_p, hi_p = (1 - level) / 2, (1 + level) / 2
        if rule == "metr":
            doubling = [math.log(2) / s for s in slopes if s > 0]
            n_used = len(doubling)
            if doubling:
                lo, hi = np.percentile(doubling, [100 * lo_p, 100 * hi_p])
                ci = (float(lo), float(hi))
        else:
            n_used = len(slopes)
            doubling = [math.log(2) / s if s > 0 else math.inf for s in slopes]
            if slopes:
                lo_s, hi_s = np.quantile(slopes, [lo_p, hi_p])
                ci = (float(math.log(2) / hi_s) if hi_s > 0 else math.inf,
                      float(math.log(2) / lo_s) if lo_s > 0 else math.inf)
    return DoublingTime(days=math.log(2) / slope if slope > 0 else math.inf, ci=ci, slope_per_year=365.25 * slope,
                        intercept=intercept, r_squared=r2, agents=agents, confidence_level=level, n_resamples=n_rep,
                        n_used=n_used, replicate_days=tuple(doubling), rule=rule)


def _ordinal(value: Any, agent: str) -> int:
    import datetime as dt

    if isinstance(value, dt.datetime):
        return value.date().toordinal()
    if isinstance(value, dt.date):
        return value.toordinal()
    try:
        return dt.date.fromisoformat(str(value).strip()[:10]).toordinal()
    except ValueError:
        raise ValueError(f"The release date of {agent!r} must be a date like 2024-06-20; got {value!r}.") from None


@dataclass(frozen=True)
class HorizonResult:
    """What :func:`time_horizon` found.

    Attributes
    ----------
    table : DataFrame
        One row per agent: ``agent, n_runs, n_tasks, n_families, success_rate`` (weighted),
        ``slope`` (per doubling of minutes), ``intercept``, and for each q in ``quantiles``
        ``p{100q}`` with ``p{100q}_low, p{100q}_high`` (bootstrap percentile interval),
        ``max_abs_gradient`` (first-order conditions at the optimum), ``lbfgs_slack_p50``
        (relative change of p50 that sklearn's lbfgs default tolerance allows), ``min_minutes``,
        ``max_minutes`` (its task lengths), ``degenerate_replicates`` and ``warning``.
    fits : mapping agent -> LogisticFit
    curves : DataFrame
        ``agent, minutes, p_success``: the fitted curves on a grid over the task lengths.
    replicates : DataFrame
        ``replicate, agent`` and one column per quantile: every bootstrap replicate's horizons.
    trend : DoublingTime or None
    warnings : tuple of str
    """

    table: pd.DataFrame
    fits: Mapping[str, LogisticFit]
    curves: pd.DataFrame
    replicates: pd.DataFrame
    trend: DoublingTime | None
    warnings: tuple[str, ...]
    quantiles: tuple[float, ...]
    weights: str
    regularization: float
    confidence_level: float
    n_resamples: int
    levels: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)

    def horizon(self, agent: str, q: float = 0.5) -> float:
        """The fitted q horizon of ``agent`` in minutes."""
        return self.fits[agent].horizon(q)

    def method(self) -> str:
        """One paragraph naming exactly what was computed."""
        worst = float(np.nanmax(self.table["max_abs_gradient"].to_numpy(float))) if len(self.table) else float("nan")
        slack = self.table["lbfgs_slack_p50"].to_numpy(float)
        slack_text = (f"{100 * float(np.nanmedian(slack)):.2g} % (median; up to {100 * float(np.nanmax(slack)):.2g} %)"
                      if np.isfinite(slack).any() else "n/a")
        return (
            f"METR's time horizon: per agent, a logistic regression of success on log2(human minutes), weights "
            f"'{self.weights}', L2 penalty {self.regularization:g}/2 * slope^2 on the slope only (sklearn's "
            f"C = {1 / self.regularization:g}), solved exactly by Newton's method (largest first-order-condition "
            f"residual {worst:.1e}). sklearn's lbfgs stops at its default tol=1e-4, which allows p50 to move by about "
            f"{slack_text} from this optimum. Intervals: {100 * self.confidence_level:g}% percentile, "
            f"{self.n_resamples} hierarchical bootstrap replicates ({' -> '.join(self.levels)}), one resample shared "
            "by all agents; a replicate where an agent has no success counts as horizon 0 (METR drops it)."
        )


def _q_name(q: float) -> str:
    pct = 100 * q
    return f"p{pct:g}".replace(".", "_")


def _check_quantiles(quantiles: Sequence[float]) -> tuple[float, ...]:
    out = tuple(float(q) for q in quantiles)
    if not out or any(not 0 < q < 1 for q in out):
        raise ValueError(f"quantiles must be success probabilities strictly between 0 and 1 (e.g. 0.5, 0.8); got "
                         f"{list(quantiles)}.")
    return out


def _aggregate(design: _Design, x_code: np.ndarray, idx: np.ndarray, w: np.ndarray, y: np.ndarray,
               n_agents: int, n_x: int) -> tuple[np.ndarray, np.ndarray]:
    cell = design.agent[idx] * n_x + x_code[idx]
    size = n_agents * n_x
    ww = np.bincount(cell, weights=w[idx], minlength=size).reshape(n_agents, n_x)
    wy = np.bincount(cell, weights=w[idx] * y[idx], minlength=size).reshape(n_agents, n_x)
    return ww, wy


def _horizons(a: np.ndarray, b: np.ndarray, quantiles: tuple[float, ...]) -> np.ndarray:
    """(F, Q) horizons in minutes; -inf slope -> 0, +inf -> inf."""
    out = np.empty((a.size, len(quantiles)))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for k, q in enumerate(quantiles):
            xq = (logit(q) - a) / b
            out[:, k] = np.exp2(xq)
    out[np.isneginf(b)] = 0.0
    out[np.isposinf(b)] = np.inf
    return out


def time_horizon(
    runs: pd.DataFrame,
    *,
    quantiles: Sequence[float] = (0.5, 0.8),
    weights: str = "invsqrt",
    regularization: float = 0.1,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    levels: Sequence[str] | None = None,
    dates: Mapping[str, Any] | None = None,
    min_tasks: int = MIN_TASKS,
    trend_rule: str = "clip",
    rng: RNGLike = 0,
    progress: ProgressFn | None = None,
) -> HorizonResult:
    """Time horizons of agents, with hierarchical bootstrap intervals (module docstring).

    Parameters
    ----------
    runs : DataFrame
        One row per run: ``agent, task, minutes, score`` (success in [0, 1]) and optionally
        ``family`` (default: each task its own family). :func:`evalkit.metrics.read_horizon_runs`
        reads METR's runs file, tables and harness logs into this shape.
    quantiles : sequence of float
        Success probabilities of the horizons (0.5 and 0.8 give p50 and p80).
    weights : {"invsqrt", "equal", "none"}
    regularization : float
        L2 penalty on the slope (METR's headline 0.1).
    n_resamples : int
        Bootstrap replicates (0: no intervals).
    levels : sequence, optional
        Bootstrap levels, outermost first (default family -> task -> run).
    dates : mapping agent -> date, optional
        Release dates: adds the doubling time of the 50 % horizon.
    min_tasks : int
        Agents with fewer distinct tasks are flagged.
    trend_rule : {"clip", "metr"}
        How the trend's replicates treat horizons below 1e-3 minutes (:func:`doubling_time`).
    rng : seed or numpy Generator
        One stream for all replicates (pass ``numpy.random.default_rng(42 + i)`` to
        :func:`hierarchical_resample` yourself to redraw METR's replicate ``i``).
    """
    import pandas as pd

    from evalkit.stats._validate import check_confidence_level

    qs = _check_quantiles(quantiles)
    level = check_confidence_level(confidence_level)
    if not (isinstance(n_resamples, (int, np.integer)) and n_resamples >= 0):
        raise ValueError(f"n_resamples must be a non-negative integer; got {n_resamples!r}.")
    if not (isinstance(regularization, (int, float)) and regularization > 0 and math.isfinite(regularization)):
        raise ValueError(f"regularization must be a positive number (METR's headline setting is 0.1); got "
                         f"{regularization!r}.")
    runs = _check_runs(runs)
    levels_t = _check_levels(levels if levels is not None else LEVELS)
    generator = as_generator(rng)
    w = task_weights(runs, weights)
    y = runs["score"].to_numpy(float)
    x_all = np.log2(runs["minutes"].to_numpy(float))
    ux, x_code = np.unique(x_all, return_inverse=True)
    design = _Design.of(runs)
    n_agents = len(design.agents)
    full = np.arange(len(runs))
    W, WY = _aggregate(design, x_code, full, w, y, n_agents, ux.size)
    a, b, grad, iters = fit_many(ux, W, WY, regularization=regularization)
    point = _horizons(a, b, qs)
    fits = {name: LogisticFit(intercept=float(a[i]), slope=float(b[i]), regularization=float(regularization),
                              gradient=(float(grad[i, 0]), float(grad[i, 1])), iterations=int(iters[i]),
                              weight_sum=float(W[i].sum())) for i, name in enumerate(design.agents)}
    # bootstrap
    reps = np.full((n_resamples, n_agents, len(qs)), np.nan)
    tick(progress, "bootstrap", 0, n_resamples)
    done = 0
    while done < n_resamples:
        batch = min(_BATCH, n_resamples - done)
        Wb = np.zeros((batch, n_agents, ux.size))
        WYb = np.zeros_like(Wb)
        for r in range(batch):
            idx = hierarchical_resample(design, generator, levels_t)
            Wb[r], WYb[r] = _aggregate(design, x_code, idx, w, y, n_agents, ux.size)
        ab, bb, _, _ = fit_many(ux, Wb.reshape(-1, ux.size), WYb.reshape(-1, ux.size), regularization=regularization)
        h = _horizons(ab, bb, qs).reshape(batch, n_agents, len(qs))
        h[(Wb.sum(axis=2) <= 0)] = np.nan  # the agent drew no run at all (cannot happen with shared tasks)
        reps[done:done + batch] = h
        done += batch
        tick(progress, "bootstrap", done, n_resamples)
    replicates = pd.DataFrame(
        {"replicate": np.repeat(np.arange(n_resamples), n_agents),
         "agent": np.tile(np.array(design.agents, dtype=object), n_resamples),
         **{_q_name(q): reps[:, :, k].ravel() for k, q in enumerate(qs)}})
    table, notes = _table(runs, design, fits, point, reps, qs, level, W, ux, w, min_tasks)
    trend = None
    if dates is not None:
        p50 = {name: float(fits[name].horizon(0.5)) for name in design.agents}
        wide = pd.DataFrame(reps[:, :, 0] if qs[0] == 0.5 else
                            _horizons_for(reps, qs, 0.5, n_resamples, n_agents), columns=list(design.agents))
        missing = sorted(set(design.agents) - set(dates))
        if missing:
            notes.append(f"No release date for {len(missing)} agent(s), left out of the trend: {missing}.")
        trend = doubling_time(p50, dates, wide if n_resamples else None, confidence_level=level, rule=trend_rule)
    curves = _curves(runs, fits)
    return HorizonResult(table=table, fits=fits, curves=curves, replicates=replicates, trend=trend,
                         warnings=tuple(notes), quantiles=qs, weights=weights, regularization=float(regularization),
                         confidence_level=level, n_resamples=int(n_resamples), levels=levels_t,
                         settings={"min_tasks": min_tasks})


def _horizons_for(reps: np.ndarray, qs: tuple[float, ...], q: float, n_resamples: int, n_agents: int) -> np.ndarray:
    if q in qs:
        return reps[:, :, qs.index(q)]
    raise ValueError("The doubling time uses the 50% horizon: include 0.5 in quantiles.")


def _check_runs(runs: pd.DataFrame, *, scores: bool = True) -> pd.DataFrame:
    need = [c for c in (("agent", "task", "minutes", "score") if scores else ("agent", "task"))
            if c not in runs.columns]
    if need:
        raise ValueError(f"The runs table needs the columns agent, task, minutes and score; missing {need} (it has "
                         f"{list(runs.columns)}).")
    out = runs.copy()
    if "family" not in out.columns:
        out["family"] = out["task"]
    out["family"] = out["family"].where(out["family"].notna(), out["task"])
    for col in ("agent", "task", "family"):
        out[col] = out[col].astype(str)
    if not scores:
        return out.reset_index(drop=True)
    minutes = out["minutes"].to_numpy(float)
    score = out["score"].to_numpy(float)
    bad = ~np.isfinite(minutes) | (minutes <= 0)
    if bad.any():
        raise ValueError(f"{_where(out, bad, 'minutes')}: minutes must be positive human minutes; found "
                         f"{minutes[bad][0]!r} ({int(bad.sum())} row(s)).")
    bad = ~np.isfinite(score) | (score < 0) | (score > 1)
    if bad.any():
        raise ValueError(f"{_where(out, bad, 'score')}: score must be a success in [0, 1]; found {score[bad][0]!r} "
                         f"({int(bad.sum())} row(s)).")
    fam = out.groupby("task")["family"].nunique()
    if (fam > 1).any():
        t = fam.index[fam > 1][0]
        raise ValueError(f"Task {t!r} is in several families ({sorted(out.loc[out['task'] == t, 'family'].unique())}); "
                         "each task must belong to one family.")
    mins = out.groupby("task")["minutes"].nunique()
    if (mins > 1).any():
        t = mins.index[mins > 1][0]
        raise ValueError(f"Task {t!r} has several human-minute values ({sorted(out.loc[out['task'] == t, 'minutes'].unique())}); "
                         "give each task one length.")
    return out.reset_index(drop=True)


def _outside(name: str, point: float, low: float, high: float, lo_m: float, hi_m: float) -> list[str]:
    """Which of a horizon and its interval bounds lie outside the task lengths [lo_m, hi_m]."""
    if not np.isnan(point) and not lo_m <= point <= hi_m:
        return [f"{name} {'below the shortest' if point < lo_m else 'above the longest'} task"]
    out = []
    if not np.isnan(low) and low < lo_m:
        out.append(f"{name}'s lower bound below the shortest")
    if not np.isnan(high) and high > hi_m:
        out.append(f"{name}'s upper bound above the longest")
    return out


def _where(frame: pd.DataFrame, bad: np.ndarray, column: str) -> str:
    """``"runs.csv, line 7, column 'minutes'"`` for the first bad row (its position without source/line)."""
    i = int(np.flatnonzero(bad)[0])
    if "source" in frame.columns and "line" in frame.columns:
        return f"{frame['source'].to_numpy()[i]}, line {int(frame['line'].to_numpy()[i])}, column '{column}'"
    return f"row {i}, column '{column}'"


def _table(runs: pd.DataFrame, design: _Design, fits: Mapping[str, LogisticFit], point: np.ndarray,
           reps: np.ndarray, qs: tuple[float, ...], level: float, W: np.ndarray, ux: np.ndarray, w: np.ndarray,
           min_tasks: int) -> tuple[pd.DataFrame, list[str]]:
    import pandas as pd

    notes: list[str] = []
    rows = []
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    for i, name in enumerate(design.agents):
        mine = runs[design.agent == i]
        fit = fits[name]
        lo_m, hi_m = float(mine["minutes"].min()), float(mine["minutes"].max())
        row: dict[str, Any] = {
            "agent": name, "n_runs": len(mine), "n_tasks": mine["task"].nunique(),
            "n_families": mine["family"].nunique(),
            "success_rate": float((w[design.agent == i] * mine["score"].to_numpy(float)).sum()
                                  / w[design.agent == i].sum()),
            "slope": fit.slope, "intercept": fit.intercept,
        }
        warn: list[str] = []
        outside: list[str] = []
        for k, q in enumerate(qs):
            name_q = _q_name(q)
            row[name_q] = point[i, k]
            r = reps[:, i, k]
            r = r[~np.isnan(r)]
            if r.size:
                row[f"{name_q}_low"], row[f"{name_q}_high"] = (float(v) for v in np.quantile(r, [lo_q, hi_q]))
            else:
                row[f"{name_q}_low"] = row[f"{name_q}_high"] = float("nan")
            outside += _outside(name_q, row[name_q], row[f"{name_q}_low"], row[f"{name_q}_high"], lo_m, hi_m)
        if outside:
            warn.append(f"extrapolated beyond its task lengths ({lo_m:g} to {hi_m:g} min): {', '.join(outside)}")
        row["max_abs_gradient"] = fit.max_abs_gradient
        mask = design.agent == i
        row["lbfgs_slack_p50"] = lbfgs_horizon_slack(fit, np.log2(mine["minutes"].to_numpy(float)), w[mask], 0.5)
        row["min_minutes"], row["max_minutes"] = lo_m, hi_m
        deg = int((~np.isfinite(reps[:, i, 0]) | (reps[:, i, 0] == 0)).sum()) if reps.shape[0] else 0
        row["degenerate_replicates"] = deg
        if not np.isfinite(fit.slope):
            warn.append("every run failed: horizon 0 (no finite fit)" if fit.slope < 0 else
                        "every run succeeded: horizon unbounded (no finite fit)")
        elif fit.slope >= 0:
            warn.append("the success rate does not fall with task length (slope >= 0): the horizon is not meaningful")
        if row["n_tasks"] < min_tasks:
            warn.append(f"only {row['n_tasks']} tasks (fewer than {min_tasks}): thin evidence")
        if deg and reps.shape[0]:
            warn.append(f"{deg} of {reps.shape[0]} replicates had no success or no failure (horizon 0 or inf)")
        row["warning"] = "; ".join(warn)
        for text in warn:
            notes.append(f"{name}: {text}.")
        rows.append(row)
    return pd.DataFrame(rows), notes


def _curves(runs: pd.DataFrame, fits: Mapping[str, LogisticFit], n: int = 60) -> pd.DataFrame:
    import pandas as pd

    lo, hi = float(runs["minutes"].min()), float(runs["minutes"].max())
    grid = np.geomspace(lo, hi, n)
    parts = [pd.DataFrame({"agent": name, "minutes": grid, "p_success": fit.predict(grid)}) for name, fit in fits.items()]
    return pd.concat(parts, ignore_index=True)
