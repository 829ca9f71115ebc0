"""The reference swarm simulator of *Predictable Swarm Scaling* (seed 000).

Task DAGs (:mod:`~evalkit.sim.dag`) and their generator (:mod:`~evalkit.sim.generator`), a
deterministic event engine (:mod:`~evalkit.sim.engine`), the agents' step rules
(:mod:`~evalkit.sim.policy`), single agents and standard / recursive swarms
(:mod:`~evalkit.sim.swarms`), metrics
(:mod:`~evalkit.sim.metrics`), the figure 2-10 experiments and their claim table
(:mod:`~evalkit.sim.experiments`, :mod:`~evalkit.sim.claims`), the calibration search
(:mod:`~evalkit.sim.calibrate`), each row's margin to its tolerance (:mod:`~evalkit.sim.margins`),
the trade-offs across calibration candidates (:mod:`~evalkit.sim.tradeoffs`) and the per-row
arguments for failing rows (:mod:`~evalkit.sim.notes`).
"""

from evalkit.sim.dag import Dag, dag_from_frames, read_dag
from evalkit.sim.experiments import SimParams, load_params
from evalkit.sim.generator import GeneratorParams, generate_dag, generate_dags
from evalkit.sim.metrics import (
    agent_time_at,
    best_score,
    curves,
    overhead_shares,
    speedup,
    time_to_best,
    time_to_coverage,
)
from evalkit.sim.policy import KEYS, RULES, Policy
from evalkit.sim.sessions import population_scale, session_trace, session_traces
from evalkit.sim.swarms import SimRun, simulate

__all__ = [
    "Dag", "GeneratorParams", "generate_dag", "generate_dags", "dag_from_frames", "read_dag",
    "Policy", "SimRun", "simulate", "RULES", "KEYS",
    "SimParams", "load_params", "session_trace", "session_traces", "population_scale",
    "best_score", "time_to_coverage", "time_to_best", "agent_time_at", "overhead_shares", "curves", "speedup",
]
