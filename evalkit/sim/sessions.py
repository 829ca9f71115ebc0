"""Sessions whose budget is agent-time (for Elo per budget on simulated swarms, figure 11).

A *session* is one run on one DAG: a single agent on its own DAG, or a standard swarm of
``agents`` sharing one DAG. :func:`session_trace` returns, at every step completion, the
cumulative agent-time (the budget), the wall-clock time, the best value so far and coverage.
Sessions that re-roll their DAG are generated independently from spawned seeds
(:func:`session_traces`).

Best-score scale: ``scale="dag"`` divides by the session's own DAG's best value (every
finished session reaches 1, as in figures 2-10); a number divides by that fixed value and clips
to 1 - use :func:`population_scale` (the original post's rule: the 90th percentile of the best
values of 64 DAGs from the same generator) when sessions on *different* DAGs are compared.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit._rng import RNGLike, as_generator
from evalkit.sim.dag import Dag
from evalkit.sim.generator import GeneratorParams, generate_dag
from evalkit.sim.metrics import agent_time_at
from evalkit.sim.params import SimParams, calibrated
from evalkit.sim.swarms import simulate

__all__ = ["session_trace", "session_traces", "population_scale"]


def _params(p: SimParams | GeneratorParams | None) -> SimParams:
    if p is None:
        return calibrated()
    if isinstance(p, GeneratorParams):
        return SimParams(generator=p, policy=calibrated().policy)
    return p


def population_scale(params: SimParams | GeneratorParams | None = None, *, n_dags: int = 64, quantile: float = 0.9,
                     rng: RNGLike = 0) -> float:
    """The ``quantile`` of the best values of ``n_dags`` DAGs drawn from ``params``."""
    p = _params(params)
    seeds = np.random.SeedSequence(int(as_generator(rng).integers(2**63))).spawn(n_dags)
    best = [generate_dag(p.generator, rng=np.random.default_rng(s)).value.max() for s in seeds]
    return float(np.quantile(best, quantile))


def session_trace(
    dag_or_params: Dag | SimParams | GeneratorParams | None = None, *, agents: int = 1, rng: RNGLike,
    scale: str | float = "dag", overheads: bool = False, budget: float | None = None,
) -> pd.DataFrame:
    """Trace of one session with budget = agent-time.

    Parameters
    ----------
    dag_or_params : Dag, SimParams or GeneratorParams, optional
        A DAG to run on, or parameters to grow a fresh DAG from ``rng`` (default: the
        calibrated set).
    agents : int
        1 = the single-agent baseline; k > 1 = a standard swarm of k on one shared DAG.
    rng : int or numpy Generator
        Seeds the DAG (when grown) and the run's tie-breaks.
    scale : "dag" or float
        Best-score scale (see the module docstring).
    overheads : bool
        Apply the parameter set's scheduling and communication overheads (default off, as in
        figures 2-6 and 8-10).
    budget : float, optional
        Keep only the completions at agent-time <= ``budget`` and stop simulating soon after
        (``simulate(stop_after=budget)``); the rows kept are those of the full trace, bit for bit.

    Returns
    -------
    DataFrame
        ``agent_time, wall_time, best_value, best_score, coverage`` at every step completion
        (in completion order; ``agent_time`` non-decreasing).
    """
    return pd.DataFrame(_trace_columns(dag_or_params, agents=agents, rng=rng, scale=scale, overheads=overheads,
                                       budget=budget))


def _trace_columns(dag_or_params, *, agents, rng, scale, overheads, budget) -> dict[str, np.ndarray]:
    """The columns of :func:`session_trace` as arrays (no frame per session)."""
    g = as_generator(rng)
    p = _params(None if isinstance(dag_or_params, Dag) else dag_or_params)
    dag = dag_or_params if isinstance(dag_or_params, Dag) else generate_dag(p.generator, rng=g)
    s, c = (p.scheduling, p.communication) if overheads else (0.0, 0.0)
    run = simulate(dag, agents=agents, policy=p.policy, scheduling=s, communication=c, baseline=agents == 1, rng=g,
                   stop_after=budget)
    if budget is not None and run.stopped_at < np.inf:  # only the started steps have intervals
        started = np.isfinite(run.start)
        fin = np.flatnonzero(run.end <= run.stopped_at)
        order = fin[np.argsort(run.end[fin], kind="stable")]
        area = agent_time_at(dataclasses.replace(run, start=run.start[started], end=run.end[started]), run.end[order])
    else:
        order = np.argsort(run.end, kind="stable")
        area = agent_time_at(run, run.end[order])
    t = run.end[order]
    best = np.maximum.accumulate(np.maximum(dag.value[order], 0.0))
    if isinstance(scale, str):
        if scale != "dag":
            raise ValueError(f"scale must be 'dag' or a positive number; got {scale!r}.")
        denom = float(dag.value.max()) if dag.value.max() > 0 else 1.0
    else:
        denom = float(scale)
        if not np.isfinite(denom) or denom <= 0:
            raise ValueError(f"scale must be 'dag' or a positive number; got {scale!r}.")
    out = {
        "agent_time": area, "wall_time": t, "best_value": best,
        "best_score": np.minimum(best / denom, 1.0), "coverage": np.arange(1, t.size + 1) / dag.n_steps,
    }
    if budget is not None:
        keep = area <= budget
        out = {k: v[keep] for k, v in out.items()}
    return out


def session_traces(
    n_sessions: int, params: SimParams | GeneratorParams | None = None, *, agents: int = 1, rng: RNGLike,
    scale: str | float = "dag", overheads: bool = False, dags: Sequence[Dag] | None = None,
    budget: float | None = None, system: str | None = None, task: str = "t00",
) -> pd.DataFrame:
    """``n_sessions`` independent sessions, each on its own DAG (or on ``dags[i]``).

    Returns the session table that :func:`evalkit.budget.elo_curves` and :func:`evalkit.elo_curve`
    take, ``system, task, session, budget, score`` (``system`` default ``"1 agent"`` /
    ``"swarm of k"``; ``budget`` = agent-time, ``score`` = best score), followed by the
    :func:`session_trace` columns of each session (0..n-1).
    Session ``i`` is seeded by the ``i``-th child of ``rng``, so adding sessions never changes
    the earlier ones. ``budget`` cuts every session at that agent-time (see :func:`session_trace`).
    """
    if n_sessions < 1:
        raise ValueError(f"n_sessions must be >= 1; got {n_sessions}.")
    if dags is not None and len(dags) != n_sessions:
        raise ValueError(f"dags has {len(dags)} DAGs for {n_sessions} sessions.")
    seeds = np.random.SeedSequence(int(as_generator(rng).integers(2**63))).spawn(n_sessions)
    cols = []
    for i, ss in enumerate(seeds):
        src = dags[i] if dags is not None else params
        cols.append(_trace_columns(src, agents=agents, rng=np.random.default_rng(ss), scale=scale,
                                   overheads=overheads, budget=budget))
    session = np.repeat(np.arange(n_sessions, dtype=np.int64), [c["agent_time"].size for c in cols])
    trace = {k: np.concatenate([c[k] for c in cols]) for k in cols[0]}
    name = system if system is not None else ("1 agent" if agents == 1 else f"swarm of {agents}")
    out = {"system": np.full(session.size, name, dtype=object), "task": np.full(session.size, task, dtype=object),
           "session": session, "budget": trace["agent_time"], "score": trace["best_score"], **trace}
    return pd.DataFrame(out)
