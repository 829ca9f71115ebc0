"""The experiments behind seed 000's figures 2-10, run on both cores.

One *task* is one DAG of one seed: it generates the DAG (and its width-sweep variants) and
runs every setting on it. Every setting on a DAG uses the same tie-break seed (common random
numbers), so a calibration candidate and its neighbour differ only by the knob changed.

Per run we keep the time to every coverage and best-score level on the grid :data:`LEVELS`
and the agent-time spent by then. A speedup is read off the *mean curves* (``aggregate=
"mean-curve"``, fixed before calibration): the post's figures plot scores averaged over 16 runs
against time in t_mid units, and "N x sooner" is the ratio of the times at which two such curves
reach a level. The ratio of mean times (``"mean-time"``) is a named alternative, not a fitted knob.

The sweep runs through :func:`evalkit.engine.get_executor` (serial, process pool or Dask), one
job per (parameter set, seed, DAG), with results in job order whatever the engine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict

import numpy as np

from evalkit._progress import ProgressFn
from evalkit.engine import get_executor
from evalkit.sim.dag import Dag
from evalkit.sim.generator import generate_dag
from evalkit.sim.metrics import agent_time_at, overhead_shares, time_to_best, time_to_coverage
from evalkit.sim.params import SimParams, calibrated, load_params, save_params
from evalkit.sim.swarms import RULES, simulate

__all__ = [
    "LEVELS", "SIZES", "WIDTH_LAYERS", "ALL_PARTS", "SimParams", "Results", "run_experiments", "run_variants",
    "load_params", "save_params", "calibrated", "sweep_executor", "variant_jobs",
    "collect_variants",
]

LEVELS = np.round(np.linspace(0.01, 1.0, 100), 2)
SIZES: tuple[int, ...] = (2, 4, 8, 16, 32, 64)
WIDTH_LAYERS: tuple[int, ...] = (136, 68, 34, 17, 8, 4)


def _record(run) -> np.ndarray:
    """(4, len(LEVELS)): time to coverage, time to best, agent-time at both."""
    tc, tb = time_to_coverage(run, LEVELS), time_to_best(run, LEVELS)
    at = agent_time_at(run, np.concatenate([tc, tb]))  # one agent-time curve for both
    return np.stack([tc, tb, at[: tc.size], at[tc.size :]])


def _seeds(seed: int, index: int) -> tuple[int, int, int]:
    ss = np.random.SeedSequence([seed, index])
    dag_seed, sim_seed, width_seed = (int(s.generate_state(1)[0]) for s in ss.spawn(3))
    return dag_seed, sim_seed, width_seed


def _dags(params: SimParams, seed: int, index: int, part: str, cache: dict[tuple[object, ...], list[Dag]]
          ) -> list[Dag]:
    """The DAG (or the width sweep's DAGs) of (seed, index), shared by parameter sets with the same
    generator within one job."""
    dag_seed, _, width_seed = _seeds(seed, index)
    key: tuple[object, ...]
    if part != "width":
        key = ("main", json.dumps(asdict(params.generator), sort_keys=True))
        if key not in cache:
            cache[key] = [generate_dag(params.generator, rng=dag_seed)]
        return cache[key]
    key = ("width", json.dumps(asdict(params.generator), sort_keys=True), params.width_profile, params.width_steps)
    if key not in cache:
        g = np.random.default_rng(width_seed)
        gp = params.generator.replace(profile=params.width_profile)
        n = max(16, round(params.width_steps * np.exp(gp.n_steps_sigma * g.standard_normal())))
        cache[key] = [generate_dag(gp, rng=g, n_steps=max(n, 2 * D), n_layers=D) for D in WIDTH_LAYERS]
    return cache[key]


def _run_part(params: SimParams, seed: int, index: int, part: str, cache: dict) -> dict[str, np.ndarray]:
    """Every setting of one sweep part on DAG ``index`` of ``seed``."""
    _, sim_seed, _ = _seeds(seed, index)
    pol = params.policy

    def sim(d, k, swarm="standard", rule="own-branch", costs=False, baseline=False):
        s, c = (params.scheduling, params.communication) if costs else (0.0, 0.0)
        return simulate(d, agents=k, swarm=swarm, rule=rule, policy=pol, scheduling=s, communication=c,
                        baseline=baseline, rng=sim_seed)

    out: dict[str, np.ndarray] = {}
    if part == "width":
        for D, wd in zip(WIDTH_LAYERS, _dags(params, seed, index, part, cache), strict=True):
            out[f"width|{D}|single"] = _record(sim(wd, 1, baseline=True))
            out[f"width|{D}|standard"] = _record(sim(wd, 16))
            out[f"width|{D}|recursive"] = _record(sim(wd, 16, "recursive"))
        return out
    (dag,) = _dags(params, seed, index, part, cache)
    out["n_steps"] = np.array([dag.n_steps], float)
    out["single"] = _record(sim(dag, 1, baseline=True))
    if part == "swarms":
        for k in SIZES:
            for swarm in ("standard", "recursive"):
                out[f"{swarm}|{k}"] = _record(sim(dag, k, swarm))
    elif part == "rules":
        for rule in RULES[1:]:
            for k in SIZES:
                out[f"rule|{rule}|{k}"] = _record(sim(dag, k, rule=rule))
    else:  # costs
        for k in SIZES:
            for swarm in ("standard", "recursive"):
                r = sim(dag, k, swarm, costs=True)
                sh = overhead_shares(r)
                out[f"costs|{swarm}|{k}"] = _record(r)
                out[f"shares|{swarm}|{k}"] = np.array([sh["communication"], sh["scheduling"],
                                                       float(np.count_nonzero(r.scheduling))])
    return out


def _task(args: tuple) -> list[dict[str, np.ndarray]]:
    """One job: one sweep part on DAG ``index`` of ``seed`` for several parameter sets (DAGs shared)."""
    variants, seed, index, part = args
    cache: dict = {}
    return [_run_part(SimParams.from_dict(p), seed, index, part, cache) for p in variants]


class Results:
    """Per-setting arrays of shape (n_dags, 4, len(LEVELS)) for one seed, plus helpers.

    ``aggregate`` says how the runs of a setting are averaged for a speedup:
    ``"mean-time"`` - ratio of the mean times to the level over the DAGs;
    ``"mean-curve"`` - average the runs' score curves over time (each run's time in units of
    its own DAG's single-agent t_mid), read the time at which the mean curve reaches the level
    (as one reads a figure), and take the ratio of those times.
    """

    def __init__(self, seed: int, tasks: Sequence[dict[str, np.ndarray]], aggregate: str = "mean-curve") -> None:
        if aggregate not in ("mean-time", "mean-curve"):
            raise ValueError(f"aggregate must be 'mean-time' or 'mean-curve'; got {aggregate!r}.")
        self.seed = seed
        self.aggregate = aggregate
        self.data = {k: np.stack([t[k] for t in tasks]) for k in tasks[0]}

    def mean_curve(self, key: str, metric: str, *, baseline: str = "single") -> tuple[np.ndarray, np.ndarray]:
        """The curve the post plots: the mean over DAGs of each run's score at time ``t`` (each
        run's time in units of its own DAG's single-agent t_mid). Returns ``(t, mean level)``
        at every time a run reaches a grid level (a step function, right-continuous)."""
        memo = self.__dict__.setdefault("_curves", {})
        if (key, metric, baseline) in memo:
            return memo[(key, metric, baseline)]
        row = {"coverage": 0, "best": 1}[metric]
        t_mid = self.data[baseline][:, 0, _level_index(0.5)]
        times = self.data[key][:, row, :] / t_mid[:, None]  # (n_dags, levels), non-decreasing
        cand = np.unique(times)
        # mean over runs of each run's level at time t (step functions of t): a run has reached
        # as many grid levels by t as it has times <= t
        reached = np.stack([np.searchsorted(r, cand, side="right") for r in np.sort(times, axis=1)])
        out = cand, np.concatenate([[0.0], LEVELS])[reached].mean(axis=0)
        memo[(key, metric, baseline)] = out
        return out

    def curve_time(self, key: str, metric: str, level: float, *, baseline: str = "single") -> float:
        """Time (in t_mid units) at which the mean curve of ``key`` reaches ``level``."""
        cand, lv = self.mean_curve(key, metric, baseline=baseline)
        ok = np.flatnonzero(lv >= level - 1e-9)
        return float(cand[ok[0]])

    def mean_time(self, key: str, metric: str, level: float, *, agent_time: bool = False) -> float:
        row = {"coverage": 0, "best": 1}[metric] + (2 if agent_time else 0)
        return float(self.data[key][:, row, _level_index(level)].mean())

    def speedup(self, key: str, metric: str, level: float, *, baseline: str = "single") -> float:
        if self.aggregate == "mean-curve":
            return self.curve_time(baseline, metric, level, baseline=baseline) / self.curve_time(
                key, metric, level, baseline=baseline)
        return self.mean_time(baseline, metric, level) / self.mean_time(key, metric, level)

    def agent_time_ratio(self, key: str, metric: str, level: float, *, baseline: str = "single") -> float:
        return self.mean_time(key, metric, level, agent_time=True) / self.mean_time(
            baseline, metric, level, agent_time=True)

    def share(self, swarm: str, k: int, kind: str) -> float:
        """Mean over DAGs of a run's communication or scheduling share, or its number of
        ``"handoffs"`` (steps charged a scheduling overhead)."""
        return float(self.data[f"shares|{swarm}|{k}"][:, {"communication": 0, "scheduling": 1, "handoffs": 2}[kind]].mean())

    def merged(self, base: Results) -> Results:
        """These results with every setting they lack taken from ``base`` (same seed and DAGs)."""
        out = object.__new__(Results)
        out.seed, out.aggregate, out.data = self.seed, self.aggregate, {**base.data, **self.data}
        return out

    @property
    def t_mid(self) -> float:
        return self.mean_time("single", "coverage", 0.5)


def _level_index(level: float) -> int:
    i = int(np.argmin(np.abs(LEVELS - level)))
    if abs(LEVELS[i] - level) > 1e-9:
        raise ValueError(f"level {level} is not on the grid {LEVELS[0]}..{LEVELS[-1]} step 0.01.")
    return i


ALL_PARTS: tuple[str, ...] = ("swarms", "rules", "costs", "width")
#: Progress stage of each sweep part (the figures it feeds).
STAGES: dict[str, str] = {"swarms": "figures 2-5 and 8 (swarms)", "rules": "figure 6 (rules)",
                          "costs": "figure 7 (overheads)", "width": "figures 9-10 (width)"}


def sweep_executor(engine: str | None = None, *, workers: int | None = None, scheduler: object = None):
    """The executor of a simulator sweep: :func:`evalkit.engine.get_executor` with the simulator's
    default of a local pool of at most two processes (Dask when a ``scheduler`` is given, serial
    when ``workers == 1``)."""
    return get_executor(engine, workers=workers or min(2, os.cpu_count() or 1), scheduler=scheduler)


def _check_parts(parts: Sequence[str]) -> None:
    bad = set(parts) - set(ALL_PARTS)
    if bad:
        raise ValueError(f"parts must be a subset of {ALL_PARTS}; got {sorted(bad)}.")


def run_variants(
    variants: Mapping[str, tuple[SimParams, Sequence[str]]], *, seeds: Sequence[int] = (0, 1, 2), n_dags: int = 16,
    engine: str | None = None, workers: int | None = None, scheduler: object = None,
    progress: ProgressFn | None = None,
) -> dict[str, list[Results]]:
    """Run several parameter sets (each on its own ``parts``) in one sweep.

    Parameters
    ----------
    variants : mapping name -> (SimParams, parts)
        Every variant runs on the same seeds and DAG indices (common random numbers).
    seeds, n_dags
        DAG ``i`` of seed ``s`` is seeded by ``(s, i)``.
    engine, workers, scheduler
        Passed to :func:`evalkit.engine.get_executor` (default: the process pool).
    progress : callable, optional
        ``progress(stage, done, total)`` per finished job; one stage per sweep part (:data:`STAGES`).
        A job is one part on one (seed, DAG) for every variant that has the part, so variants
        with the same generator share its DAGs.

    Returns
    -------
    dict name -> list of :class:`Results`, one per seed.
    """
    jobs, stages = variant_jobs(variants, seeds=seeds, n_dags=n_dags)
    ex = sweep_executor(engine, workers=workers, scheduler=scheduler)
    return collect_variants(variants, jobs, ex.map(_task, jobs, progress=progress, stage=stages), seeds=seeds,
                            n_dags=n_dags)


def variant_jobs(
    variants: Mapping[str, tuple[SimParams, Sequence[str]]], *, seeds: Sequence[int], n_dags: int,
) -> tuple[list[tuple], list[str]]:
    """The executor jobs of :func:`run_variants` (for :func:`_task`, part by part) and each one's
    progress stage; :func:`collect_variants` turns their outputs into results."""
    if n_dags < 1:
        raise ValueError(f"n_dags must be >= 1; got {n_dags}.")
    for _, parts in variants.values():
        _check_parts(parts)
    names = list(variants)
    jobs, stages = [], []
    for part in ALL_PARTS:
        who = [n for n in names if part in variants[n][1]]
        if who:
            dicts = tuple(variants[n][0].to_dict() for n in who)
            jobs += [(dicts, int(s), i, part) for s in seeds for i in range(n_dags)]
            stages += [STAGES[part]] * (len(seeds) * n_dags)
    return jobs, stages


def collect_variants(
    variants: Mapping[str, tuple[SimParams, Sequence[str]]], jobs: Sequence[tuple], outs: Sequence[list],
    *, seeds: Sequence[int], n_dags: int,
) -> dict[str, list[Results]]:
    """:func:`run_variants`'s results from the outputs of :func:`variant_jobs`' jobs (in job order)."""
    names = list(variants)
    merged: dict[tuple[str, int, int], dict] = {(n, int(s), i): {} for n in names for s in seeds for i in range(n_dags)}
    for (_, s, i, part), per in zip(jobs, outs, strict=True):
        who = [n for n in names if part in variants[n][1]]
        for n, o in zip(who, per, strict=True):
            merged[(n, s, i)].update(o)
    return {n: [Results(int(s), [merged[(n, int(s), i)] for i in range(n_dags)], variants[n][0].aggregate)
                for s in seeds] for n in names}


def run_experiments(
    params: SimParams | None = None, *, seeds: Sequence[int] = (0, 1, 2), n_dags: int = 16,
    parts: Sequence[str] = ALL_PARTS, workers: int | None = None, engine: str | None = None,
    scheduler: object = None, progress: ProgressFn | None = None,
) -> list[Results]:
    """Run the figure 2-10 experiments for each seed on ``n_dags`` DAGs.

    Parameters
    ----------
    params : SimParams, optional
        Default: the calibrated set (:func:`load_params`).
    seeds : sequence of int
        One :class:`Results` per seed; DAG ``i`` of seed ``s`` is seeded by ``(s, i)``.
    n_dags : int
        DAGs per seed (the seed's figures use 16).
    parts : subset of ("swarms", "rules", "costs", "width")
        Which experiments to run (the single agent always runs).
    workers, engine, scheduler
        The executor (:func:`evalkit.engine.get_executor`; default: a process pool of at most 2).
    progress : callable, optional
        ``progress(stage, done, total)`` per finished DAG.
    """
    params = params or load_params()
    return run_variants({"run": (params, tuple(parts))}, seeds=seeds, n_dags=n_dags, engine=engine,
                        workers=workers, scheduler=scheduler, progress=progress)["run"]
