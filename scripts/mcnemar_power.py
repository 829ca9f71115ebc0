"""Do the McNemar sample sizes of ``evalkit compare --plan`` reach their power? (issue 22)

For each plan (``--tasks 24 --baseline-rate P --icc R --effect D``, power 0.8, alpha 0.05, the CLI's
defaults otherwise), ``evalkit.stats.power.cluster_design`` gives the McNemar row's ``tasks_needed`` n
(the exact method, the default) and its discordance psi; the discordant probabilities are
``p10 = (psi + D) / 2`` (baseline passes, candidate fails: the plan's sign is immaterial, the test is
two-sided) and ``p01 = (psi - D) / 2``. Each replicate draws n paired pass/fail outcomes from the multinomial
``(p10, p01, 1 - psi)`` and runs ``evalkit.stats.paired.mcnemar_test`` (the exact test ``compare`` runs);
the rejection rate at p < 0.05 is the simulated power, printed with its Monte Carlo SE, the exact power
(``mcnemar_power``) at n, and Connor's n with its simulated power for contrast. Seeded; prints the load.

    python scripts/mcnemar_power.py --reps 20000
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from scipy import stats

from evalkit.stats.paired import mcnemar_test
from evalkit.stats.power import cluster_design, mcnemar_power, mcnemar_sample_size

PLANS = [  # (baseline rate, icc, effect): compare --plan --tasks 24 ...
    (0.5, 0.16, 0.10), (0.5, 0.16, 0.20), (0.5, 0.5, 0.10), (0.3, 0.16, 0.10),
    (0.7, 0.3, 0.15), (0.8, 0.16, 0.10), (0.5, 0.0, 0.05),
]
CONNOR = (0.05, 0.45)  # Connor's (1987) example: p10, p01 directly


def _exact_pvalues(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Two-sided exact McNemar p-values of ``b`` vs ``c`` discordant pairs (binomial on ``b + c`` at 1/2)."""
    m = b + c
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), m, 0.5))
    return np.where(m == 0, 1.0, p)


def simulated_power(n: int, p10: float, p01: float, reps: int, gen: np.random.Generator, *,
                    check: int = 200) -> float:
    """Rejection rate at p < 0.05; the first ``check`` replicates are also run through
    ``evalkit.stats.paired.mcnemar_test`` (what compare runs), which must give the same p-values."""
    cells = gen.multinomial(n, [p10, p01, 1 - p10 - p01], size=reps)
    pv = _exact_pvalues(cells[:, 0], cells[:, 1])
    for (b, c, _), v in zip(cells[:check], pv[:check], strict=True):
        if b + c == 0:
            continue
        x = np.r_[np.ones(b), np.zeros(c), np.zeros(n - b - c)]
        y = np.r_[np.zeros(b), np.ones(c), np.zeros(n - b - c)]
        ref = mcnemar_test(x, y).pvalue
        assert abs(ref - v) <= 1e-12 * max(1.0, ref), (b, c, ref, v)
    return float(np.mean(pv < 0.05))


def designs() -> list[tuple[str, float, float, int]]:
    out = []
    for rate, icc, effect in PLANS:
        row = cluster_design(24, 1, base_rate=rate, icc=icc, effect=effect).set_index("design").loc["mcnemar"]
        psi = float(row["note"].rsplit(" ", 1)[1])
        out.append((f"--baseline-rate {rate:g} --icc {icc:g} --effect {effect:g}", (psi + effect) / 2,
                    (psi - effect) / 2, int(row["tasks_needed"])))
    p10, p01 = CONNOR
    out.append(("Connor's example (p10 0.05, p01 0.45)", p10, p01, int(mcnemar_sample_size(p10, p01))))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=20251203)
    args = ap.parse_args(argv)
    print(f"load before {os.getloadavg()}; {args.reps} replicates per plan, seed {args.seed}")
    t0 = time.perf_counter()
    gen = np.random.default_rng(args.seed)
    print("| plan | p10 | p01 | n (exact) | exact power at n | simulated power | MC SE | n (Connor) | "
          "simulated power at Connor's n |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 1.0
    for name, p10, p01, n in designs():
        sim = simulated_power(n, p10, p01, args.reps, gen)
        n_c = int(math.ceil(mcnemar_sample_size(p10, p01, method="connor")))
        sim_c = simulated_power(n_c, p10, p01, args.reps, gen)
        worst = min(worst, sim)
        print(f"| {name} | {p10:.4f} | {p01:.4f} | {n} | {mcnemar_power(n, p10, p01):.4f} | {sim:.4f} | "
              f"{math.sqrt(sim * (1 - sim) / args.reps):.4f} | {n_c} | {sim_c:.4f} |")
    print(f"\nlowest simulated power at compare --plan's n: {worst:.4f} (criterion >= 0.79)")
    print(f"{time.perf_counter() - t0:.1f} s wall; load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
