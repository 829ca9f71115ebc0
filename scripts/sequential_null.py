"""Size under the null of stopping at the first "significant" look: McNemar checked repeatedly vs the
betting confidence sequence of ``evalkit compare --sequential``.

Each of ``--reps`` seeded sequences (child seeds of one ``numpy.random.SeedSequence(--seed)``) pairs two
systems of equal pass rate on up to ``--max-tasks`` tasks (each system passes a task independently with
probability ``--rate``; so P(a passes, b fails) = P(a fails, b passes): the null of McNemar's test). After
every ``--every`` tasks both procedures look:

* naive: McNemar's exact test (:func:`evalkit.stats.mcnemar_test`, the test ``compare`` runs on single
  pass/fail runs) on the tasks so far; reject at the first p < alpha;
* sequential: the 95 % betting confidence sequence on the per-task difference b - a
  (:func:`evalkit.stats.sequential.betting_confidence_sequence`, bounds [-1, 1]); reject when it excludes 0.

Prints each procedure's rejection rate with its 95 % Clopper-Pearson Monte Carlo interval, and the rate
by look (cumulative). ``python scripts/sequential_null.py`` (defaults: 1,000 sequences, looks every 20 up
to 400, alpha 0.05, seed 26) is the run quoted in the README.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalkit.stats import clopper_pearson_interval, mcnemar_test
from evalkit.stats.sequential import betting_confidence_sequence


def one_sequence(gen: np.random.Generator, *, max_tasks: int, every: int, rate: float,
                 alpha: float) -> tuple[int | None, int | None]:
    """(first rejecting look of McNemar, of the confidence sequence), as task counts; None = never."""
    a = gen.random(max_tasks) < rate
    b = gen.random(max_tasks) < rate
    cs = betting_confidence_sequence(b.astype(float) - a.astype(float), bounds=(-1.0, 1.0),
                                     confidence_level=1 - alpha)
    naive = seq = None
    for t in range(every, max_tasks + 1, every):
        if naive is None and (a[:t] != b[:t]).any() and mcnemar_test(b[:t], a[:t]).pvalue < alpha:
            naive = t
        if seq is None and (cs.lower[t - 1] > 0 or cs.upper[t - 1] < 0):
            seq = t
    return naive, seq


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--every", type=int, default=20)
    ap.add_argument("--max-tasks", type=int, default=400)
    ap.add_argument("--rate", type=float, default=0.5)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    children = np.random.SeedSequence(args.seed).spawn(args.reps)
    results = [one_sequence(np.random.default_rng(c), max_tasks=args.max_tasks, every=args.every, rate=args.rate,
                            alpha=args.alpha) for c in children]
    looks = np.arange(args.every, args.max_tasks + 1, args.every)
    print(f"{args.reps} null sequences (both systems pass w.p. {args.rate:g}), a look every {args.every} tasks up to "
          f"{args.max_tasks}, alpha {args.alpha:g}, seed {args.seed} ({time.perf_counter() - t0:.1f} s)\n")
    print("| procedure | rejected | rate | 95% MC interval (Clopper-Pearson) |\n|---|---|---|---|")
    for k, name in ((0, "McNemar's exact test at every look (naive)"), (1, "betting confidence sequence")):
        hits = sum(r[k] is not None for r in results)
        ci = clopper_pearson_interval(hits, args.reps).confidence_interval()
        print(f"| {name} | {hits}/{args.reps} | {hits / args.reps:.3f} | [{ci.low:.3f}, {ci.high:.3f}] |")
    print("\ncumulative rejection rate by look (tasks: naive / sequential):")
    cells = []
    for t in looks[[0, 1, 4, 9, 14, len(looks) - 1]] if len(looks) >= 15 else looks:
        nv = np.mean([r[0] is not None and r[0] <= t for r in results])
        sq = np.mean([r[1] is not None and r[1] <= t for r in results])
        cells.append(f"{t}: {nv:.3f} / {sq:.3f}")
    print("; ".join(cells))


if __name__ == "__main__":
    main()
