"""Figure 11 of seed 000 on the simulator: Elo per agent-time for four systems.

Four systems spend the same agent-time budget ``B`` on each task:

* ``pass@1``: one single-agent session;
* ``pass@4``: the best of four independent single-agent sessions at ``B/4`` each;
* ``group@4``: one standard swarm of four agents sharing one DAG;
* ``pass@2 group@2``: the better of two standard swarms of two at ``B/2`` each.

Every session grows its own DAG from the calibrated generator (a group's agents share one).
The budget is agent-time (the seed's stand-in for tokens) and the score is the session's best
score so far, on one fixed scale for all DAGs (the 90th percentile of the best values of 64
DAGs, the original post's rule), so that sessions on different DAGs are comparable. The
session table then goes through :func:`evalkit.budget.elo_curves` like any user's traces:
self-Elo for the two single-session systems, joint Elo for all four.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit._progress import ProgressFn, tick
from evalkit._rng import RNGLike, as_generator
from evalkit.budget import (
    CurveResult,
    InflectionResult,
    best_of_sessions,
    elo_curves,
    inflection_point,
)
from evalkit.sim.experiments import SimParams, load_params, sweep_executor
from evalkit.sim.sessions import population_scale, session_traces

__all__ = ["SYSTEMS", "checkpoints", "Figure11Config", "Figure11Result", "simulate_systems", "figure11", "plot_figure11"]

#: (name, agents per session, sessions combined by best-of)
SYSTEMS: tuple[tuple[str, int, int], ...] = (
    ("pass@1", 1, 1),
    ("pass@4", 1, 4),
    ("group@4", 4, 1),
    ("pass@2 group@2", 2, 2),
)



@dataclass(frozen=True)
class Figure11Config:
    """The study design.

    Attributes
    ----------
    n_tasks : int
        Tasks (games are played within a task only).
    n_sessions : int
        Sessions of each system per task (a best-of-K system uses K times as many runs).
    budget : float, optional
        The budget ``B`` in agent-time units of the simulator; default: ``budget_factor``
        times the mean total work of the generator's DAGs.
    budget_factor : float
        See ``budget``.
    decades : float
        The checkpoint grid spans ``B / 10**decades`` to ``B``.
    grid : float
        Ratio of consecutive checkpoints.
    bootstrap : int
        Session-bootstrap replicates for the curves.
    params : SimParams, optional
        Simulator parameters (default: the calibrated set in ``data/sim``).
    """

    n_tasks: int = 14
    n_sessions: int = 5
    budget: float | None = None
    budget_factor: float = 1.0
    decades: float = 3.0
    grid: float = 1.5
    bootstrap: int = 200
    params: SimParams | None = None

    def __post_init__(self) -> None:
        for name, low in (("n_tasks", 1), ("n_sessions", 2)):
            v = getattr(self, name)
            if not (isinstance(v, (int, np.integer)) and v >= low):
                why = " (self-Elo rates games between different sessions)" if name == "n_sessions" else ""
                raise ValueError(f"{name} must be an integer >= {low}{why}; got {v!r}.")
        if not (isinstance(self.bootstrap, (int, np.integer)) and self.bootstrap >= 0):
            raise ValueError(f"bootstrap must be an integer >= 0 (0: no bands); got {self.bootstrap!r}.")
        if self.budget is not None and not (np.isfinite(self.budget) and self.budget > 0):
            raise ValueError(f"budget must be a positive finite number; got {self.budget!r}.")
        if not (self.budget_factor > 0 and np.isfinite(self.budget_factor)):
            raise ValueError(f"budget_factor must be positive; got {self.budget_factor!r}.")
        if not (self.decades > 0):
            raise ValueError(f"decades must be positive; got {self.decades!r}.")
        if not (self.grid > 1):
            raise ValueError(f"grid must be a ratio > 1; got {self.grid!r}.")
        if self.bootstrap < 0:
            raise ValueError(f"bootstrap must be >= 0; got {self.bootstrap!r}.")


@dataclass(frozen=True)
class Figure11Result:
    """Everything figure 11 shows, and the session table behind it."""

    config: Figure11Config
    budget: float
    scale: float
    traces: pd.DataFrame = field(repr=False)
    self_elo: CurveResult = field(repr=False)
    joint_elo: CurveResult = field(repr=False)
    inflection: dict[str, InflectionResult] = field(repr=False)
    final: pd.DataFrame = field(repr=False)

    @property
    def order(self) -> tuple[str, ...]:
        """Systems from best to worst joint Elo at the budget."""
        return tuple(self.final.sort_values("elo", ascending=False)["system"])


def _mean_work(params: SimParams, rng: np.random.Generator, n: int = 32) -> float:
    from evalkit.sim.generator import generate_dag

    seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(n)
    return float(np.mean([generate_dag(params.generator, rng=np.random.default_rng(s)).work for s in seeds]))


def checkpoints(budget: float, *, decades: float, grid: float) -> np.ndarray:
    """Geometric checkpoints ending exactly at ``budget``, ``grid`` apart, spanning at most
    ``decades`` decades."""
    n = int(np.floor(decades * np.log(10) / np.log(grid) + 1e-9))
    return budget * grid ** -np.arange(n, -1, -1, dtype=float)


def _system_task(job: tuple) -> pd.DataFrame:
    """Member sessions of one system on one task, cut at the member budget (module level: the
    executor pickles it)."""
    params, name, agents, k, n_sessions, seed, budget, scale, task = job
    tr = session_traces(n_sessions * k, params, agents=agents, rng=seed, scale=scale, budget=budget / k)
    frame = pd.DataFrame({
        "system": name, "task": f"t{task:02d}", "session": tr["session"].astype(str).to_numpy(),
        "budget": tr["agent_time"].to_numpy(), "score": tr["best_score"].to_numpy(),
    })
    return frame


def simulate_systems(
    config: Figure11Config = Figure11Config(), *, rng: RNGLike = 0, progress: ProgressFn | None = None,
    engine: str | None = None, workers: int | None = None, scheduler: object = None,
) -> tuple[pd.DataFrame, float, float]:
    """Simulate the four systems' sessions and return their session table.

    One executor job per (system, task) (:func:`evalkit.engine.get_executor`; default serial,
    since the reproduction parallelises over seeds); seeds are drawn in a fixed order, so the
    table is the same on every engine.

    Returns
    -------
    traces : pandas.DataFrame
        Session table (``system, task, session, budget, score``; budget = agent-time) with the
        best-of composites already built (their budget is the total over members).
    budget : float
        The budget ``B``.
    scale : float
        The best-score scale (a best value equal to it scores 1).
    """
    g = as_generator(rng)
    params = config.params if config.params is not None else load_params()
    scale = population_scale(params, rng=int(g.integers(2**63)))
    budget = config.budget if config.budget is not None else config.budget_factor * _mean_work(params, g)
    jobs = [(params, name, agents, k, config.n_sessions, int(g.integers(2**63)), budget, scale, task)
            for name, agents, k in SYSTEMS for task in range(config.n_tasks)]
    if engine is None and scheduler is None and not (workers and workers > 1):
        engine = "serial"  # nested in a reproduction job by default
    ex = sweep_executor(engine, workers=workers, scheduler=scheduler)
    frames = ex.map(_system_task, jobs, progress=progress, stage="figure 11 sessions")
    out = []
    for name, _, k in SYSTEMS:  # best-of composites per system (groups are formed within each task)
        sys_frames = pd.concat([f for f, j in zip(frames, jobs, strict=True) if j[1] == name], ignore_index=True)
        if k > 1:
            sys_frames = best_of_sessions(sys_frames, k, name=name)[["system", "task", "session", "budget", "score"]]
        out.append(sys_frames)
    return pd.concat(out, ignore_index=True), float(budget), float(scale)


def figure11(
    config: Figure11Config = Figure11Config(), *, rng: RNGLike = 0, progress: ProgressFn | None = None,
    engine: str | None = None, workers: int | None = None, scheduler: object = None,
) -> Figure11Result:
    """Simulate the study and fit the curves of figure 11.

    Self-Elo (left panel) for ``pass@1`` and ``group@4``; joint Elo (right panel) for all
    four systems; the scaling inflection point of each self-Elo curve; and each system's joint
    Elo at the budget with its bootstrap interval. ``engine``, ``workers`` and ``scheduler``
    choose where the sessions are simulated (:func:`simulate_systems`).
    """
    g = as_generator(rng)
    traces, budget, scale = simulate_systems(config, rng=g, progress=progress, engine=engine, workers=workers,
                                             scheduler=scheduler)
    budgets = checkpoints(budget, decades=config.decades, grid=config.grid)
    single = traces.loc[traces["system"].isin(["pass@1", "group@4"])]
    tick(progress, "figure 11 Elo fits", 0, 2)
    self_elo = elo_curves(single, mode="self", rng=int(g.integers(2**63)), budgets=budgets,
                          n_resamples=config.bootstrap)
    tick(progress, "figure 11 Elo fits", 1, 2)
    joint_elo = elo_curves(traces, mode="joint", rng=int(g.integers(2**63)), budgets=budgets,
                           n_resamples=config.bootstrap)
    tick(progress, "figure 11 Elo fits", 2, 2)
    infl = {s: inflection_point(self_elo, system=s) for s in ("pass@1", "group@4")}
    last = joint_elo.curve.loc[joint_elo.curve.groupby("system")["budget"].idxmax()]
    final = last[["system", "budget", "elo", "ci_low", "ci_high"]].sort_values("elo", ascending=False)
    return Figure11Result(config, budget, scale, traces, self_elo, joint_elo, infl, final.reset_index(drop=True))


def plot_figure11(result: Figure11Result, *, axes: tuple | None = None) -> tuple:
    """Figure 11: self-Elo of pass@1 and group@4 against the reference (left), joint Elo of all
    four systems (right). Returns the two Axes."""
    from evalkit.plots._figure import subplots
    from evalkit.plots.budget import plot_elo_curves

    if axes is None:
        _, axes = subplots(1, 2, figsize=(12, 4.5))
    left, right = axes
    plot_elo_curves(result.self_elo, ax=left, inflection=result.inflection["pass@1"],
                    title="self-Elo (pass@1, group@4)")
    plot_elo_curves(result.joint_elo, ax=right, reference=False, title="joint Elo (all four systems)")
    for ax in axes:
        ax.set_xlabel("agent-time budget (log scale)")
    return left, right
