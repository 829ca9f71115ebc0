"""The Bradley–Terry fit on counts: evalkit against choix and evalica, paired in one run.

Data: ``--comparisons`` Bradley–Terry comparisons (strengths ~ N(0, 1), 10 % ties) among 200 and
2,000 models (``--models``), reduced to per-pair counts once. Every tool starts from the same
integer-coded pair counts (``i < j, wins_i, wins_j, ties``; ties count as half a win, the same
likelihood for all three) and is timed with the conversion it needs:

- evalkit: ``fit_bt(PairCounts(...))``, **with** the existence check (strongly connected
  beat-or-tie graph) that the others do not make;
- choix ``ilsr_pairwise_dense`` on the dense count matrix (its fastest path on counts: the
  list APIs ``ilsr_pairwise`` / ``opt_pairwise`` take one entry per comparison, not counts);
- evalica, two paths on the per-pair rows with the counts as weights: the public
  ``evalica.bradley_terry(xs, ys, winners, weights=..., index=...)`` and its Rust core
  ``evalica._brzo.bradley_terry`` called directly (no pandas indexing); the faster is used.

A second table starts every tool from the engine's cells with model *names*
(:class:`~evalkit.io.counts.ComparisonCounts`, as ``evalkit rate`` has them): evalkit
``fit_bt(aggregate(cells))``; choix after ``pandas.factorize`` of the names; evalica's public API on
the names (its own indexing).

The tools run in turn, round after round (evalkit, choix, evalica, evalkit, ...); each round's
ratio is evalkit's time ÷ the faster peer's time in that round, and the table gives the median
ratio and its range (pairing keeps the ratio meaningful on a shared machine). Also the largest
centred-Elo difference of each peer from evalkit. The 1-minute load average is printed.

Run::

    python scripts/bench_fit.py                  # 200 and 2,000 models, 1e6 comparisons, 7 rounds
    python scripts/bench_fit.py --models 200 --rounds 15
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from evalkit.io.counts import ComparisonCounts
from evalkit.ratings.bt import fit_bt
from evalkit.ratings.counts import PairCounts, aggregate
from evalkit.ratings.elo import ELO_SCALE


def synthetic_cells(n: int, m: int, *, seed: int = 0) -> ComparisonCounts:
    """``m`` comparisons among ``n`` models reduced to named cells (sorted like the engine's)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n)
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    o = np.where(rng.random(m) < 0.1, 0.5, (rng.random(m) < p).astype(float))
    names = np.array([f"model-{k:05d}" for k in range(n)], dtype=object)
    key, cnt = np.unique((a * n + b) * 3 + (o * 2).astype(int), return_counts=True)
    ab, oc = divmod(key, 3)
    aa, bb = divmod(ab, n)
    return ComparisonCounts({"player_a": names[aa], "player_b": names[bb], "outcome": oc / 2.0,
                             "weight": cnt.astype(float), "n": cnt})


def centred(x: np.ndarray) -> np.ndarray:
    return ELO_SCALE * (x - x.mean())


# --- from integer-coded pair counts ------------------------------------------------------


def evalkit_counts(pc: PairCounts) -> np.ndarray:
    counts = PairCounts(pc.players, pc.i, pc.j, pc.wins_i, pc.wins_j, pc.ties)
    return fit_bt(counts).theta  # check=True: the existence check runs


def choix_counts(pc: PairCounts) -> np.ndarray:
    import choix

    n = pc.n_players
    mat = np.zeros((n, n))
    mat[pc.i, pc.j] = pc.wins_i + 0.5 * pc.ties
    mat[pc.j, pc.i] = pc.wins_j + 0.5 * pc.ties
    return np.asarray(choix.ilsr_pairwise_dense(mat))


def _evalica_rows(pc: PairCounts) -> tuple[list[int], list[int], list, list[float]]:
    import evalica

    k = len(pc.i)
    xs = np.concatenate([pc.i, pc.i, pc.i]).tolist()
    ys = np.concatenate([pc.j, pc.j, pc.j]).tolist()
    winners = [evalica.Winner.X] * k + [evalica.Winner.Y] * k + [evalica.Winner.Draw] * k
    return xs, ys, winners, np.concatenate([pc.wins_i, pc.wins_j, pc.ties]).tolist()


def evalica_counts_public(pc: PairCounts) -> np.ndarray:
    import evalica
    import pandas as pd

    xs, ys, winners, weights = _evalica_rows(pc)
    res = evalica.bradley_terry(xs, ys, winners, index=pd.Index(range(pc.n_players)), weights=weights)
    return np.log(res.scores.sort_index().to_numpy(dtype=float))


def evalica_counts_core(pc: PairCounts) -> np.ndarray:
    from evalica import _brzo

    xs, ys, winners, weights = _evalica_rows(pc)
    scores, _ = _brzo.bradley_terry(xs=xs, ys=ys, winners=winners, weights=weights, total=pc.n_players,
                                    win_weight=1.0, tie_weight=0.5, tolerance=1e-6, limit=100)
    return np.log(np.asarray(scores, dtype=float))


# --- from the engine's named cells --------------------------------------------------------


def evalkit_cells(cells: ComparisonCounts) -> np.ndarray:
    cells._codes = None  # encode the names again each run
    return fit_bt(aggregate(cells)).theta


def choix_cells(cells: ComparisonCounts) -> np.ndarray:
    import choix
    import pandas as pd

    codes, names = pd.factorize(np.concatenate([cells.column("player_a"), cells.column("player_b")]),
                                sort=True)
    k = len(cells)
    a, b = codes[:k], codes[k:]
    o, w = cells.column("outcome").astype(float), cells.column("weight").astype(float)
    n = len(names)
    mat = np.zeros((n, n))
    np.add.at(mat, (a, b), w * o)
    np.add.at(mat, (b, a), w * (1 - o))
    return np.asarray(choix.ilsr_pairwise_dense(mat))


def evalica_cells(cells: ComparisonCounts) -> np.ndarray:
    import evalica

    o = cells.column("outcome").astype(float)
    winners = [evalica.Winner.X if x == 1.0 else evalica.Winner.Y if x == 0.0 else evalica.Winner.Draw
               for x in o.tolist()]
    res = evalica.bradley_terry(cells.column("player_a").tolist(), cells.column("player_b").tolist(), winners,
                                weights=cells.column("weight").astype(float).tolist())
    return np.log(res.scores.sort_index().to_numpy(dtype=float))


def rounds(tools: dict[str, Callable[[], np.ndarray]], n_rounds: int) -> dict[str, list[float]]:
    """Each tool once per round, in turn, after one warm-up round; wall seconds per run."""
    times: dict[str, list[float]] = {k: [] for k in tools}
    for r in range(n_rounds + 1):
        for name, fn in tools.items():
            t = time.perf_counter()
            fn()
            if r:
                times[name].append(time.perf_counter() - t)
    return times


def report(title: str, tools: dict[str, Callable[[], np.ndarray]], peers: dict[str, list[str]], n_rounds: int) -> None:
    ref = centred(tools["evalkit"]())
    diffs = {k: float(np.abs(centred(fn()) - ref).max()) for k, fn in tools.items() if k != "evalkit"}
    times = rounds(tools, n_rounds)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\n{title}")
    print("| tool | median s | max abs Elo diff from evalkit |")
    print("|---|---:|---:|")
    for k in tools:
        print(f"| {k} | {med[k]:.4f} | {'' if k == 'evalkit' else f'{diffs[k]:.1e}'} |")
    best = {p: [min(times[k][r] for k in ks) for r in range(n_rounds)] for p, ks in peers.items()}
    for p, ks in peers.items():
        ratios = sorted(times["evalkit"][r] / best[p][r] for r in range(n_rounds))
        print(f"evalkit / {p} (fastest of {', '.join(ks)} per round): median {statistics.median(ratios):.2f}x "
              f"(range {ratios[0]:.2f}-{ratios[-1]:.2f} over {n_rounds} rounds)")
    both = sorted(times["evalkit"][r] / min(best[p][r] for p in peers) for r in range(n_rounds))
    print(f"**evalkit / the faster of choix and evalica: median {statistics.median(both):.2f}x** "
          f"(range {both[0]:.2f}-{both[-1]:.2f}); target <= 1.0x", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, nargs="+", default=[200, 2000])
    ap.add_argument("--comparisons", type=float, default=1e6)
    ap.add_argument("--rounds", type=int, default=7, help="paired rounds per table (default 7)")
    ap.add_argument("--no-cells", action="store_true", help="only the table from integer-coded counts")
    args = ap.parse_args(argv)
    print(f"load before {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores); {args.comparisons:.0e} comparisons")
    for n in args.models:
        cells = synthetic_cells(n, int(args.comparisons), seed=n)
        pc = aggregate(cells)
        print(f"\n## {n} models: {len(pc.i)} pairs, {len(cells)} cells")
        report(f"From integer-coded pair counts ({n} models)", {
            "evalkit": lambda pc=pc: evalkit_counts(pc),
            "choix ilsr_pairwise_dense": lambda pc=pc: choix_counts(pc),
            "evalica bradley_terry (public)": lambda pc=pc: evalica_counts_public(pc),
            "evalica _brzo.bradley_terry (core)": lambda pc=pc: evalica_counts_core(pc),
        }, {"choix": ["choix ilsr_pairwise_dense"],
            "evalica": ["evalica bradley_terry (public)", "evalica _brzo.bradley_terry (core)"]}, args.rounds)
        if not args.no_cells:
            report(f"From the engine's cells with model names ({n} models)", {
                "evalkit": lambda c=cells: evalkit_cells(c),
                "choix ilsr_pairwise_dense": lambda c=cells: choix_cells(c),
                "evalica bradley_terry (public)": lambda c=cells: evalica_cells(c),
            }, {"choix": ["choix ilsr_pairwise_dense"], "evalica": ["evalica bradley_terry (public)"]},
                args.rounds)
    print(f"\nload after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
