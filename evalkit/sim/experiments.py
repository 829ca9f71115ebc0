"""The experiments behind seed 000's figures 2-10, run on both cores.

One *task* is one DAG of one seed: it generates the DAG (and its width-sweep variants) and
runs every setting on it. Every setting on a DAG uses the same tie-break seed (common random
numbers), so a calibration candidate and its neighbour differ only by the knob changed.

Per run we keep the time to every coverage and best-score level on the grid :data:`LEVELS`
and the agent-time spent by then; an experiment's curve is the mean over its DAGs of the
time to each level (in units of t_mid, the single agent's mean time to half coverage), and a
speedup is the ratio of the mean times (see :mod:`evalkit.sim.metrics`).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from evalkit.sim.dag import GeneratorParams, generate_dag
from evalkit.sim.metrics import agent_time_at, overhead_shares, time_to_best, time_to_coverage
from evalkit.sim.swarms import RULES, Policy, simulate

__all__ = [
    "LEVELS", "SIZES", "WIDTH_LAYERS", "SimParams", "Results", "run_experiments", "load_params", "save_params",
    "DEFAULT_PARAMS_PATH", "calibrated",
]

LEVELS = np.round(np.linspace(0.01, 1.0, 100), 2)
SIZES: tuple[int, ...] = (2, 4, 8, 16, 32, 64)
WIDTH_LAYERS: tuple[int, ...] = (136, 68, 34, 17, 8, 4)
DEFAULT_PARAMS_PATH = Path(__file__).resolve().parents[2] / "data" / "sim" / "calibrated.json"


@dataclass(frozen=True)
class SimParams:
    """One parameter set for every figure: generator, policy and overheads."""

    generator: GeneratorParams = field(default_factory=GeneratorParams)
    policy: Policy = field(default_factory=Policy)
    scheduling: float = 0.05
    communication: float = 0.02
    width_steps: float = 740.0
    width_profile: str = "bell"
    aggregate: str = "mean-time"

    def to_dict(self) -> dict:
        return {"generator": asdict(self.generator), "policy": asdict(self.policy), "scheduling": self.scheduling,
                "communication": self.communication, "width_steps": self.width_steps,
                "width_profile": self.width_profile, "aggregate": self.aggregate}

    @classmethod
    def from_dict(cls, d: dict) -> SimParams:
        return cls(GeneratorParams(**d.get("generator", {})), Policy(**d.get("policy", {})),
                   float(d.get("scheduling", 0.05)), float(d.get("communication", 0.02)),
                   float(d.get("width_steps", 740.0)), str(d.get("width_profile", "bell")),
                   str(d.get("aggregate", "mean-time")))


def save_params(params: SimParams, path: str | os.PathLike, **extra: object) -> None:
    """Write ``params`` (and any ``extra`` documentation fields) as JSON."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({**extra, **params.to_dict()}, indent=2) + "\n")


@functools.lru_cache(maxsize=1)
def calibrated() -> SimParams:
    """The bundled calibrated parameter set (read once); the default of every entry point."""
    return load_params()


def load_params(path: str | os.PathLike | None = None) -> SimParams:
    """Read a parameter set (default: the calibrated set bundled in ``data/sim``)."""
    p = Path(path) if path is not None else DEFAULT_PARAMS_PATH
    if not p.exists():
        if path is None:
            return SimParams()
        raise ValueError(f"Parameter file {str(p)!r} does not exist.")
    d = json.loads(p.read_text())
    return SimParams.from_dict({k: d[k] for k in ("generator", "policy", "scheduling", "communication",
                                                  "width_steps", "width_profile", "aggregate") if k in d})


def _record(run) -> np.ndarray:
    """(4, len(LEVELS)): time to coverage, time to best, agent-time at both."""
    tc, tb = time_to_coverage(run, LEVELS), time_to_best(run, LEVELS)
    return np.stack([tc, tb, agent_time_at(run, tc), agent_time_at(run, tb)])


def _task(args: tuple) -> dict[str, np.ndarray]:
    params, seed, index, parts = args
    params = SimParams.from_dict(params)
    ss = np.random.SeedSequence([seed, index])
    dag_seed, sim_seed, width_seed = (int(s.generate_state(1)[0]) for s in ss.spawn(3))
    dag = generate_dag(params.generator, rng=dag_seed)
    pol = params.policy
    out: dict[str, np.ndarray] = {}

    def sim(d, k, swarm="standard", rule="own-branch", costs=False, baseline=False):
        s, c = (params.scheduling, params.communication) if costs else (0.0, 0.0)
        return simulate(d, agents=k, swarm=swarm, rule=rule, policy=pol, scheduling=s, communication=c,
                        baseline=baseline, rng=sim_seed)

    out["single"] = _record(sim(dag, 1, baseline=True))
    if "swarms" in parts:
        for k in SIZES:
            for swarm in ("standard", "recursive"):
                out[f"{swarm}|{k}"] = _record(sim(dag, k, swarm))
    if "rules" in parts:
        for rule in RULES[1:]:
            for k in SIZES:
                out[f"rule|{rule}|{k}"] = _record(sim(dag, k, rule=rule))
    if "costs" in parts:
        for k in SIZES:
            for swarm in ("standard", "recursive"):
                r = sim(dag, k, swarm, costs=True)
                sh = overhead_shares(r)
                out[f"costs|{swarm}|{k}"] = _record(r)
                out[f"shares|{swarm}|{k}"] = np.array([sh["communication"], sh["scheduling"]])
    if "width" in parts:
        g = np.random.default_rng(width_seed)
        gp = params.generator.replace(profile=params.width_profile)
        n = max(16, round(params.width_steps * np.exp(gp.n_steps_sigma * g.standard_normal())))
        for D in WIDTH_LAYERS:
            wd = generate_dag(gp, rng=g, n_steps=max(n, 2 * D), n_layers=D)
            out[f"width|{D}|single"] = _record(sim(wd, 1, baseline=True))
            out[f"width|{D}|standard"] = _record(sim(wd, 16))
            out[f"width|{D}|recursive"] = _record(sim(wd, 16, "recursive"))
    return out


class Results:
    """Per-setting arrays of shape (n_dags, 4, len(LEVELS)) for one seed, plus helpers.

    ``aggregate`` says how the runs of a setting are averaged for a speedup:
    ``"mean-time"`` - ratio of the mean times to the level over the DAGs;
    ``"mean-curve"`` - average the runs' score curves over time (each run's time in units of
    its own DAG's single-agent t_mid), read the time at which the mean curve reaches the level
    (as one reads a figure), and take the ratio of those times.
    """

    def __init__(self, seed: int, tasks: Sequence[dict[str, np.ndarray]], aggregate: str = "mean-time") -> None:
        if aggregate not in ("mean-time", "mean-curve"):
            raise ValueError(f"aggregate must be 'mean-time' or 'mean-curve'; got {aggregate!r}.")
        self.seed = seed
        self.aggregate = aggregate
        self.data = {k: np.stack([t[k] for t in tasks]) for k in tasks[0]}

    def curve_time(self, key: str, metric: str, level: float, *, baseline: str = "single") -> float:
        """Time (in t_mid units) at which the mean curve of ``key`` reaches ``level``."""
        row = {"coverage": 0, "best": 1}[metric]
        t_mid = self.data[baseline][:, 0, _level_index(0.5)]
        times = self.data[key][:, row, :] / t_mid[:, None]  # (n_dags, levels), non-decreasing
        cand = np.unique(times)
        # mean over runs of each run's level at time t (step functions of t)
        reached = (times[:, None, :] <= cand[None, :, None]).sum(axis=2)  # (n_dags, cand)
        lv = np.concatenate([[0.0], LEVELS])[reached]
        ok = np.flatnonzero(lv.mean(axis=0) >= level - 1e-9)
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
        return float(self.data[f"shares|{swarm}|{k}"][:, {"communication": 0, "scheduling": 1}[kind]].mean())

    @property
    def t_mid(self) -> float:
        return self.mean_time("single", "coverage", 0.5)


def _level_index(level: float) -> int:
    i = int(np.argmin(np.abs(LEVELS - level)))
    if abs(LEVELS[i] - level) > 1e-9:
        raise ValueError(f"level {level} is not on the grid {LEVELS[0]}..{LEVELS[-1]} step 0.01.")
    return i


ALL_PARTS: tuple[str, ...] = ("swarms", "rules", "costs", "width")


def run_experiments(
    params: SimParams | None = None, *, seeds: Sequence[int] = (0, 1, 2), n_dags: int = 16,
    parts: Sequence[str] = ALL_PARTS, workers: int | None = None,
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
    workers : int, optional
        Processes (default: all cores, at most 2 on this machine's budget); 1 runs in-process.
    """
    params = params or load_params()
    if n_dags < 1:
        raise ValueError(f"n_dags must be >= 1; got {n_dags}.")
    bad = set(parts) - set(ALL_PARTS)
    if bad:
        raise ValueError(f"parts must be a subset of {ALL_PARTS}; got {sorted(bad)}.")
    jobs = [(params.to_dict(), int(s), i, tuple(parts)) for s in seeds for i in range(n_dags)]
    workers = workers or min(2, os.cpu_count() or 1)
    if workers == 1:
        outs = [_task(j) for j in jobs]
    else:
        with ProcessPoolExecutor(workers) as ex:
            outs = list(ex.map(_task, jobs, chunksize=max(1, len(jobs) // (4 * workers))))
    return [Results(int(s), outs[j * n_dags:(j + 1) * n_dags], params.aggregate) for j, s in enumerate(seeds)]
