"""Accuracy against cost: which systems are on the frontier, and how sure that is.

Two rules decide the frontier of points ``(cost, accuracy)`` (lower cost and higher accuracy are
better):

- ``"hal"``: the Holistic Agent Leaderboard's rule (HAL's frontend, ``utils/pareto.py``
  ``compute_pareto_frontier``): sort the points by ``(cost, accuracy)``, build the upper convex
  hull by Andrew's monotone chain over the points in *reverse* order (a point is popped while
  the cross product ``(a - o) x (b - o) <= 0``), then keep the hull points that no other hull
  point weakly dominates. Points are compared by their coordinates, so duplicates are on or
  off together. The hull keeps only systems that some cost-accuracy trade-off (a straight
  line) would choose: a dominated-free system in a dent of the staircase is off it.
- ``"pareto"``: the plain Pareto set, every system that no other system weakly dominates
  (cost <= and accuracy >= with one strict).

The **frontier probability** of a system is the share of bootstrap replicates in which it is
on the frontier. A replicate resamples the tasks with replacement, once for all systems (so
systems run on the same tasks stay paired), and recomputes every system's accuracy (mean score
over the drawn tasks) and cost (total over the drawn tasks of each task's mean cost per run).
What is claimed about these probabilities, and checked in ``scripts/coverage_cells/metrics.py``:
the systems with probability >= 1 - confidence_level form a confidence set for the true
frontier (it contains every truly frontier system with probability >= confidence_level).

``min_completion`` drops, before anything is computed, the systems whose completion rate
(share of their runs that completed: :mod:`evalkit.metrics.completion`) is below it; the
result lists whom it dropped and their rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._progress import ProgressFn, tick
from evalkit._rng import RNGLike, as_generator

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRONTIER_METHODS", "hal_frontier", "pareto_set", "on_frontier", "frontier", "FrontierResult",
           "bootstrap_frontier"]

FRONTIER_METHODS: tuple[str, ...] = ("hal", "pareto")


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _dominated(p: tuple[float, float], others: Sequence[tuple[float, float]]) -> bool:
    return any(o[0] <= p[0] and o[1] >= p[1] and (o[0] < p[0] or o[1] > p[1]) for o in others)


def hal_frontier(cost: Sequence[float] | np.ndarray, accuracy: Sequence[float] | np.ndarray) -> np.ndarray:
    """HAL's frontier (module docstring): a boolean mask over the points."""
    pts = [(float(c), float(a)) for c, a in zip(cost, accuracy, strict=True)]
    if len(pts) <= 1:
        return np.ones(len(pts), dtype=bool)
    ordered = sorted(pts)
    hull: list[tuple[float, float]] = []
    for p in reversed(ordered):
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) <= 0:
            hull.pop()
        hull.append(p)
    keep = {p for p in hull if not _dominated(p, hull)}
    return np.array([p in keep for p in pts], dtype=bool)


def pareto_set(cost: Sequence[float] | np.ndarray, accuracy: Sequence[float] | np.ndarray) -> np.ndarray:
    """The plain Pareto set: a boolean mask of the points that no other point weakly dominates."""
    c = np.asarray(cost, dtype=float)
    a = np.asarray(accuracy, dtype=float)
    le = c[None, :] <= c[:, None]
    ge = a[None, :] >= a[:, None]
    strict = (c[None, :] < c[:, None]) | (a[None, :] > a[:, None])
    return np.asarray(~(le & ge & strict).any(axis=1))


def on_frontier(cost: Any, accuracy: Any, method: str = "hal") -> np.ndarray:
    """The frontier mask by ``method`` ("hal" or "pareto")."""
    if method == "hal":
        return hal_frontier(cost, accuracy)
    if method == "pareto":
        return pareto_set(cost, accuracy)
    raise ValueError(f"method must be one of {FRONTIER_METHODS} (HAL's hull rule or the plain Pareto set); got "
                     f"{method!r}.")


@dataclass(frozen=True)
class FrontierResult:
    """:func:`frontier`'s answer.

    Attributes
    ----------
    table : DataFrame
        One row per kept system: ``system, n_tasks, cost, cost_low, cost_high, accuracy,
        accuracy_low, accuracy_high, on_frontier, p_frontier, completion_rate, near_tie``.
        ``cost`` is the total over the tasks (of each task's mean cost per run); intervals are
        bootstrap percentile intervals at ``confidence_level``; ``near_tie`` flags a system
        excluded (probability < 1 - level) that its upper accuracy bound would put on the
        frontier (then :attr:`warnings` says why its probability is not a reliable exclusion).
    dropped : DataFrame
        ``system, completion_rate, reason``: the systems ``min_completion`` left out.
    """

    table: pd.DataFrame
    dropped: pd.DataFrame
    method: str
    cost: str
    confidence_level: float
    n_resamples: int
    min_completion: float | None
    warnings: tuple[str, ...] = ()

    def sentences(self) -> list[str]:
        """What the frontier says, in plain words."""
        rule = "HAL's convex-hull rule" if self.method == "hal" else "the Pareto rule"
        out = []
        on = self.table[self.table["on_frontier"]]
        if len(on):
            parts = [f"{r.system} ({100 * r.p_frontier:.0f}% of replicates)" for r in on.itertuples()]
            out.append(f"On the {self.cost}-accuracy frontier by {rule}: {', '.join(parts)}.")
        unsure = self.table[~self.table["on_frontier"] & (self.table["p_frontier"] >= 1 - self.confidence_level)]
        if len(unsure):
            out.append(f"Off it but not excluded at {100 * self.confidence_level:g}% confidence (frontier probability "
                       f">= {1 - self.confidence_level:g}): {', '.join(unsure['system'])}.")
        out_ = self.table[(self.table["p_frontier"] < 1 - self.confidence_level) & ~self.table["near_tie"]]
        if len(out_):
            out.append(f"Off the frontier at {100 * self.confidence_level:g}% confidence (probability < "
                       f"{1 - self.confidence_level:g}): {', '.join(out_['system'])}.")
        for r in self.dropped.itertuples():
            out.append(f"{r.system} was left out: {r.reason}.")
        return out


def _system_task_matrix(outcomes: pd.DataFrame, cost: str) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    g = outcomes.groupby(["system", "task"], sort=True)
    acc = g["score"].mean().unstack("task")
    cst = g[cost].mean().unstack("task")
    systems = [str(s) for s in acc.index]
    tasks = [str(t) for t in acc.columns]
    return systems, tasks, acc.to_numpy(float), cst.reindex_like(acc).to_numpy(float)


def bootstrap_frontier(acc: np.ndarray, cost: np.ndarray, *, method: str = "hal", n_resamples: int = 2000,
                       rng: RNGLike = 0, progress: ProgressFn | None = None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Task-bootstrap replicates of each system's accuracy and cost, and its frontier probability.

    Parameters
    ----------
    acc, cost : (S, T) arrays
        Mean score and mean cost per run of each system on each task (NaN: not run).

    Returns
    -------
    (accuracy replicates (B, S), cost replicates (B, S), frontier probability (S,))
        A replicate draws T tasks with replacement, once for all systems; a system's accuracy is
        its mean over its drawn tasks, its cost the total. Replicates in which a system drew
        none of its tasks are left out of the probability.
    """
    generator = as_generator(rng)
    has = ~np.isnan(acc)
    n_sys, n_tasks = acc.shape
    acc0, cst0, has_f = np.nan_to_num(acc), np.nan_to_num(cost), has.astype(float)
    reps_acc = np.full((n_resamples, n_sys), np.nan)
    reps_cost = np.full_like(reps_acc, np.nan)
    hits = np.zeros(n_sys)
    valid = 0
    tick(progress, "frontier bootstrap", 0, n_resamples)
    done = 0
    while done < n_resamples:
        batch = min(256, n_resamples - done)
        idx = generator.integers(0, n_tasks, size=(batch, n_tasks))
        counts = np.bincount((np.arange(batch)[:, None] * n_tasks + idx).ravel(),
                             minlength=batch * n_tasks).reshape(batch, n_tasks).astype(float)
        n_drawn = counts @ has_f.T
        ok = n_drawn > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            a_b = np.where(ok, (counts @ acc0.T) / n_drawn, np.nan)
        c_b = np.where(ok, counts @ cst0.T, np.nan)
        reps_acc[done:done + batch], reps_cost[done:done + batch] = a_b, c_b
        for r in np.flatnonzero(ok.all(axis=1)):
            hits += on_frontier(c_b[r], a_b[r], method)
            valid += 1
        done += batch
        tick(progress, "frontier bootstrap", done, n_resamples)
    return reps_acc, reps_cost, (hits / valid if valid else np.full(n_sys, np.nan))


def frontier(outcomes: pd.DataFrame, *, cost: str = "cost", method: str = "hal", min_completion: float | None = None,
             completed: str | None = None, n_resamples: int = 2000, confidence_level: float = 0.95,
             rng: RNGLike = 0, progress: ProgressFn | None = None) -> FrontierResult:
    """Each system's accuracy and cost with intervals, its place on the frontier and its frontier probability.

    Parameters
    ----------
    outcomes : DataFrame
        One row per run: ``system, task, score`` and the ``cost`` column (dollars, tokens, time:
        any usage where less is better).
    method : {"hal", "pareto"}
    min_completion : float, optional
        Leave out systems that completed fewer than this share of their runs.
    completed : str, optional
        Column of the completion indicator (default: :func:`evalkit.metrics.completion.completed_mask`).
    """
    import pandas as pd

    from evalkit.metrics.completion import completed_mask
    from evalkit.stats._validate import check_confidence_level

    level = check_confidence_level(confidence_level)
    on_frontier([0.0], [0.0], method)  # validates the method
    if cost not in outcomes.columns:
        raise ValueError(f"The runs have no {cost!r} column for the cost axis; they have {list(outcomes.columns)}. "
                         "Give cost= (--cost) one of them, or prices (--prices) to compute dollars.")
    frame = outcomes.copy()
    frame["_done"] = completed_mask(frame, completed)
    rates = frame.groupby("system")["_done"].mean()
    dropped_rows = []
    if min_completion is not None:
        if not 0 <= min_completion <= 1:
            raise ValueError(f"min_completion must be a share in [0, 1] (e.g. 0.8); got {min_completion!r}.")
        low = rates[rates < min_completion]
        for s, r in low.items():
            dropped_rows.append({"system": str(s), "completion_rate": float(r),
                                 "reason": f"completed {100 * r:.0f}% of its runs, below --min-completion "
                                           f"{100 * min_completion:g}%"})
        frame = frame[~frame["system"].isin(low.index)]
    dropped = pd.DataFrame(dropped_rows, columns=["system", "completion_rate", "reason"])
    frame["score"] = frame["score"].astype(float).fillna(0.0)  # an uncompleted run scores 0
    bad = frame[cost].astype(float).isna()
    if bad.any():
        raise ValueError(f"{int(bad.sum())} run(s) have no {cost!r} value (first: system {frame.loc[bad, 'system'].iat[0]!r}, "
                         f"task {frame.loc[bad, 'task'].iat[0]!r}); every run needs its cost for the frontier.")
    if frame.empty:
        raise ValueError("No system is left for the frontier" + (" after --min-completion." if dropped_rows else "."))
    systems, tasks, acc, cst = _system_task_matrix(frame, cost)
    has = ~np.isnan(acc)
    n_t = has.sum(axis=1)
    point_acc = np.nanmean(acc, axis=1)
    point_cost = np.nansum(cst, axis=1)
    mask = on_frontier(point_cost, point_acc, method)
    reps_acc, reps_cost, p_front = bootstrap_frontier(acc, cst, method=method, n_resamples=n_resamples,
                                                      rng=as_generator(rng), progress=progress)
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    table = pd.DataFrame({
        "system": systems, "n_tasks": n_t, "cost": point_cost,
        "cost_low": np.nanquantile(reps_cost, lo_q, axis=0) if n_resamples else np.nan,
        "cost_high": np.nanquantile(reps_cost, hi_q, axis=0) if n_resamples else np.nan,
        "accuracy": point_acc,
        "accuracy_low": np.nanquantile(reps_acc, lo_q, axis=0) if n_resamples else np.nan,
        "accuracy_high": np.nanquantile(reps_acc, hi_q, axis=0) if n_resamples else np.nan,
        "on_frontier": mask, "p_frontier": p_front,
        "completion_rate": [float(rates.get(s, np.nan)) for s in systems],
    })
    table["near_tie"] = _near_ties(table, method, level)
    notes = tuple(
        f"{r.system}: frontier probability {100 * r.p_frontier:.1f}% although at its upper accuracy bound "
        f"({r.accuracy_high:.3g}) it would be on the frontier: its place hinges on a near-tie with "
        f"{'the line through its neighbours' if method == 'hal' else 'a system of about its cost and accuracy'}, "
        "where the bootstrap probability is not a reliable exclusion (the coverage study's near-tie cell: the "
        "confidence set covers 0.86-0.89 there, not 0.95)." for r in table.itertuples() if r.near_tie)
    return FrontierResult(table=table.sort_values("cost", ignore_index=True), dropped=dropped, method=method, cost=cost,
                          confidence_level=level, n_resamples=n_resamples, min_completion=min_completion,
                          warnings=notes)


def _near_ties(table: pd.DataFrame, method: str, level: float) -> np.ndarray:
    """Systems excluded (probability < 1 - level) that would be on the frontier at their upper accuracy bound."""
    cost = table["cost"].to_numpy(float)
    acc = table["accuracy"].to_numpy(float)
    high = table["accuracy_high"].to_numpy(float)
    p = table["p_frontier"].to_numpy(float)
    out = np.zeros(len(table), dtype=bool)
    for i in np.flatnonzero(p < 1 - level):
        if not np.isfinite(high[i]):
            continue
        moved = acc.copy()
        moved[i] = high[i]
        out[i] = bool(on_frontier(cost, moved, method)[i])
    return out
