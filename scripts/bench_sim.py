"""Benchmark the swarm simulator against the issue's speed targets (ratios printed).

Targets (issue 6): one ~730-step DAG generated in < 10 ms and simulated with 16 agents in
< 5 ms; the whole three-seed reproduction of figures 2-10 in < 3 minutes on 2 cores. There is
no reference swarm simulator to race, so each time is printed as a ratio to its target. The
machine's 2 cores are shared: numbers are noisy; the median of repeats is reported.

    python scripts/bench_sim.py [--full]     # --full also times `reproduce` (3 seeds x 16 DAGs)
"""

from __future__ import annotations

import sys
import time

import numpy as np

from evalkit.sim import generate_dag, simulate
from evalkit.sim.experiments import load_params


def _median_ms(fn, repeats: int) -> float:
    ts = []
    for i in range(repeats):
        t = time.perf_counter()
        fn(i)
        ts.append(time.perf_counter() - t)
    return 1000 * float(np.median(ts))


def main() -> None:
    p = load_params()
    dags = [generate_dag(p.generator, rng=i, n_steps=730) for i in range(10)]
    gen = _median_ms(lambda i: generate_dag(p.generator, rng=100 + i, n_steps=730), 40)
    print(f"generate one 730-step DAG        {gen:7.2f} ms   target 10 ms   ratio {gen / 10:.2f}")
    for swarm, k, rule in (("standard", 16, "own-branch"), ("recursive", 16, "own-branch"),
                           ("standard", 16, "critical-path"), ("standard", 1, "own-branch")):
        ms = _median_ms(lambda i, s=swarm, k=k, r=rule: simulate(dags[i % 10], agents=k, swarm=s, rule=r,
                                                                  policy=p.policy, rng=i), 60)
        print(f"simulate {swarm:9s} k={k:<2d} {rule:13s} {ms:7.2f} ms   target  5 ms   ratio {ms / 5:.2f}")
    if "--full" in sys.argv:
        from evalkit.sim.reproduce import reproduce

        t = time.perf_counter()
        rep = reproduce(None, params=p, seeds=(0, 1, 2), n_dags=16, workers=2, figures=False)
        s = time.perf_counter() - t
        print(f"reproduce 3 seeds x 16 DAGs (2 processes) {s:6.1f} s   target 180 s   ratio {s / 180:.2f}"
              f"   ({rep.rows_held} rows hold)")


if __name__ == "__main__":
    main()
