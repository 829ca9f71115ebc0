"""How often the inflection-point test calls a system at exactly 400 Elo/decade "crossed" (issue 22).

The audit's design: one system of 14 tasks x 5 sessions whose sessions are best-of-n repeated sampling
(``scripts/coverage_cells/budget.py``: its self-Elo rises at exactly the 400-per-decade reference),
checkpoints 1.5x apart over 3 decades, 200 session-bootstrap replicates; seed ``s`` of the study is
``numpy.random.default_rng(s)`` for the data and the bootstrap. Prints, for the first 40 seeds (the
audit's 40) and for all ``--seeds``, how many came out "crossed", "above_at_end", "never_above" and
"indistinguishable", the "crossed" share with its Monte Carlo SE, and the load.

    python scripts/inflection_null.py --seeds 400
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage_cells.budget import best_of_n_sessions  # noqa: E402

from evalkit.budget import elo_curves, inflection_point  # noqa: E402


def status(seed: int) -> str:
    gen = np.random.default_rng(seed)
    traces, cps = best_of_n_sessions(gen)
    res = elo_curves(traces, mode="self", budgets=cps, n_resamples=200, rng=gen)
    return inflection_point(res, system="pass@1").status


def _line(label: str, counts: Counter, n: int) -> str:
    p = counts["crossed"] / n
    return (f"{label}: crossed {counts['crossed']}/{n} = {p:.3f} (MC SE {np.sqrt(p * (1 - p) / n):.3f}); "
            f"not indistinguishable {n - counts['indistinguishable']}/{n}; {dict(sorted(counts.items()))}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=400, help="seeds 0..N-1 (default 400; the audit used 40)")
    args = ap.parse_args(argv)
    print(f"load before {os.getloadavg()}")
    t0 = time.perf_counter()
    statuses = [status(s) for s in range(args.seeds)]
    print(_line("first 40 seeds (the audit's design)", Counter(statuses[:40]), min(40, args.seeds)))
    print(_line(f"all {args.seeds} seeds", Counter(statuses), args.seeds))
    print(f"{time.perf_counter() - t0:.1f} s wall; load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
