"""Benchmark the swarm simulator against the issue's speed targets (ratios printed).

Targets: one ~730-step DAG generated in < 10 ms and simulated with 16 agents in < 5 ms (issue 6);
``evalkit simulate reproduce`` - figures 2-11, reporting seeds 0-2 and 7-9 x 16 DAGs, the three
broken simulators, figure 11 on five seeds - in <= 60 s on 2 cores (issue 13). There is no
reference swarm simulator to race, so each time is printed as a ratio to its target, with the
machine's load (the 2 cores are shared: numbers are noisy; the median of repeats is reported).

    python scripts/bench_sim.py [--full]     # --full also times the whole reproduction (no figures)
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from evalkit.sim import generate_dag, simulate
from evalkit.sim.experiments import load_params


def _cpu() -> float:
    """CPU seconds of this process and its finished child processes (the pool's workers)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


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
        from evalkit.studies.reproduce import reproduce

        print(f"load average before: {os.getloadavg()[0]:.2f} (1 min)")
        cpu0 = _cpu()
        t = time.perf_counter()
        done: dict[str, float] = {}
        rep = reproduce(None, params=p, n_dags=16, workers=2, figures=False, fig11_seeds=(0, 1, 2, 3, 4),
                        progress=lambda stage, k, n: done.setdefault(stage, time.perf_counter() - t) if k == n else 0)
        s = time.perf_counter() - t
        print("one shared map; stages done at " + ", ".join(f"{k}: {v:.1f} s" for k, v in done.items()))
        print(f"reproduce figures 2-11 (2 processes)          {s:6.1f} s   target 60 s   ratio {s / 60:.2f}"
              f"   ({rep.rows_held} rows hold in both seed groups)")
        print(f"CPU (this process + its workers, user + system): {_cpu() - cpu0:6.1f} s   (aim <= ~105 s, "
              "which fits 60 s of wall time on two idle cores)")
        print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
