"""Scores of a run over time: coverage, best score, time to a level, agent-time, overhead shares.

* Coverage at time t: share of steps finished by t.
* Best score at time t: highest value among steps finished by t, scaled per DAG so the DAG's
  best step is worth 1 and the root (value 0) worth 0 (negative values count as 0).
* Agent-time at time t: busy time summed over agents up to t, in-progress steps included
  (the integral of the number of busy agents), so it is exact at any t, not only at ends.
* :func:`speedup` here is the ratio of *mean* times over the same DAGs (``mean T1 / mean Tk``,
  the ``"mean-time"`` aggregator). The reproduction reads speedups off the mean curves instead
  (``"mean-curve"``, :meth:`evalkit.sim.experiments.Results.mean_curve`), as the post does; the
  agent-time ratio is the ratio of mean agent-times (``mean Ak / mean A1``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from evalkit.sim.swarms import SimRun

__all__ = [
    "best_score", "time_to_coverage", "time_to_best", "agent_time_at", "overhead_shares", "curves",
    "speedup", "session_frame",
]


def best_score(run: SimRun) -> tuple[np.ndarray, np.ndarray]:
    """Completion times (sorted) and the scaled best score after each completion."""
    order = np.argsort(run.end, kind="stable")
    v = run.dag.value
    top = float(v.max())
    scale = top if top > 0 else 1.0
    best = np.maximum.accumulate(np.maximum(v[order], 0.0)) / scale
    return run.end[order], best


def time_to_coverage(run: SimRun, level: ArrayLike) -> np.ndarray:
    """Time at which the share ``level`` of steps is finished (vectorised over levels)."""
    lv = np.atleast_1d(np.asarray(level, float))
    if ((lv <= 0) | (lv > 1)).any():
        raise ValueError(f"coverage levels must lie in (0, 1]; got {lv.tolist()}.")
    ends = np.sort(run.end)
    n = ends.size
    idx = np.ceil(lv * n - 1e-9).astype(int) - 1
    return ends[np.clip(idx, 0, n - 1)]


def time_to_best(run: SimRun, level: ArrayLike) -> np.ndarray:
    """First time the scaled best score reaches ``level`` (vectorised over levels)."""
    lv = np.atleast_1d(np.asarray(level, float))
    if ((lv <= 0) | (lv > 1)).any():
        raise ValueError(f"best-score levels must lie in (0, 1]; got {lv.tolist()}.")
    t, best = best_score(run)
    idx = np.searchsorted(best, lv - 1e-12, side="left")
    return t[np.clip(idx, 0, t.size - 1)]


def agent_time_at(run: SimRun, times: ArrayLike) -> np.ndarray:
    """Agent-time spent by ``times``: the integral of the number of busy agents."""
    tt = np.atleast_1d(np.asarray(times, float))
    edges = np.concatenate([run.start, run.end])
    delta = np.concatenate([np.ones(run.start.size), -np.ones(run.end.size)])
    order = np.argsort(edges, kind="stable")
    x, busy = edges[order], np.cumsum(delta[order])
    area = np.concatenate([[0.0], np.cumsum(busy[:-1] * np.diff(x))])
    return np.interp(tt, x, area, left=0.0, right=area[-1])


def overhead_shares(run: SimRun) -> dict[str, float]:
    """Shares of agent-time spent on communication and on scheduling, over the whole run."""
    total = run.agent_time
    return {
        "communication": float(run.communication.sum() / total),
        "scheduling": float(run.scheduling.sum() / total),
    }


def curves(run: SimRun, *, t_mid: float = 1.0) -> pd.DataFrame:
    """Coverage and best score after every completion, time in units of ``t_mid``.

    Columns ``time, agent_time, coverage, best_score`` (``agent_time`` also in t_mid units).
    """
    t, best = best_score(run)
    return pd.DataFrame(
        {
            "time": t / t_mid,
            "agent_time": agent_time_at(run, t) / t_mid,
            "coverage": np.arange(1, t.size + 1) / t.size,
            "best_score": best,
        }
    )


def speedup(baseline_times: Sequence[float], times: Sequence[float]) -> float:
    """Speedup over a set of DAGs: mean baseline time / mean time (same DAGs, same order)."""
    b, t = np.asarray(baseline_times, float), np.asarray(times, float)
    if b.shape != t.shape or b.size == 0:
        raise ValueError(f"baseline_times and times must be non-empty and of one shape; got {b.shape} and {t.shape}.")
    return float(b.mean() / t.mean())


def session_frame(run: SimRun) -> pd.DataFrame:
    """Budget trace of a session: ``agent_time, wall_time, best_score, coverage`` at every completion.

    ``agent_time`` is cumulative busy time (the budget when budget = agent-time), ``wall_time``
    the clock; both in the DAG's own time unit.
    """
    c = curves(run)
    return c.rename(columns={"time": "wall_time"})[["agent_time", "wall_time", "best_score", "coverage"]]
