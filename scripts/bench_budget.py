"""Benchmark: Elo-per-budget curves with a 500-replicate session bootstrap.

Workload of the paper (issue 5): 4 systems x 14 tasks x 5 sessions x 19 checkpoints
(1e5 * 1.5**j), 500 bootstrap replicates, self-Elo and joint Elo. Target: < 10 s each.

Reference in the same run: the straightforward pipeline without sufficient statistics,
i.e. per replicate expand every game into a row (pandas merge of observations within a
task), count wins per player pair, and fit with choix's ``ilsr_pairwise_dense``
(Maystre & Grossglauser 2015). It is timed on a few replicates and extrapolated to 500;
its point estimate is compared with evalkit's.

``--coverage N`` also measures the coverage of the 95 % bands on N simulated studies of the
same design (one system, Gumbel offsets, a true 400 Elo/decade curve).

Run: ``MPLBACKEND=Agg python scripts/bench_budget.py [--reference-replicates 10] [--coverage 60]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from evalkit.budget import best_so_far, elo_curves, geometric_grid, inflection_point

ELO = 400 / np.log(10)


def make_traces(seed: int = 0) -> pd.DataFrame:
    """Gumbel-offset sessions with 40 submissions each at random budgets up to 1e5 * 1.5**18."""
    gen = np.random.default_rng(seed)
    rows = []
    slopes = {"A": (700, 250, 3e6), "B": (550, 300, 1e7), "C": (450, 350, 1e6), "D": (400, 400, 1e6)}
    cap = 1e5 * 1.5**18
    for sysname, (s1, s2, knee) in slopes.items():
        for task in range(14):
            for sess in range(5):
                b = np.sort(np.exp(gen.uniform(np.log(5e4), np.log(cap), size=40)))
                r = np.where(b <= knee, s1 * np.log10(b / 1e5), s1 * np.log10(knee / 1e5) + s2 * np.log10(b / knee))
                score = r / ELO + gen.gumbel() + 0.1 * gen.normal(size=b.size)
                rows.append(pd.DataFrame({"system": sysname, "task": f"t{task}", "session": f"s{sess}",
                                          "budget": b, "score": score}))
    return pd.concat(rows, ignore_index=True)


def reference_fit(values: pd.DataFrame, players: list[str], mult: np.ndarray | None, mode: str) -> np.ndarray:
    """Row-per-game pipeline + choix, one replicate (``mult`` = session multiplicities).

    Same game rule as evalkit: games within a task between distinct players; copies of a
    bootstrapped session never play each other; checkpoints of one session play each
    other only in joint mode.
    """
    import choix

    obs = values
    if mult is not None:
        reps = mult[obs["sid"].to_numpy()].astype(int)
        obs = obs.loc[obs.index.repeat(reps)].copy()
        obs["copy"] = obs.groupby(["sid", "ck"]).cumcount().to_numpy()
    else:
        obs = obs.assign(copy=0)
    games = obs.merge(obs, on="task", suffixes=("_a", "_b"))
    same_sid = games["sid_a"].to_numpy() == games["sid_b"].to_numpy()
    if mode == "self":
        keep = ~same_sid
    else:
        keep = ~same_sid | (games["copy_a"].to_numpy() == games["copy_b"].to_numpy())
    keep &= games["player_a"].to_numpy() != games["player_b"].to_numpy()
    games = games.loc[keep]
    idx = {p: k for k, p in enumerate(players)}
    a = games["player_a"].map(idx).to_numpy()
    b = games["player_b"].map(idx).to_numpy()
    va, vb = games["best_a"].to_numpy(), games["best_b"].to_numpy()
    win = np.zeros((len(players), len(players)))
    np.add.at(win, (a, b), (va > vb) + 0.5 * (va == vb))
    theta = np.asarray(choix.ilsr_pairwise_dense(win, alpha=0.0, tol=1e-10, max_iter=1000))
    return ELO * (theta - theta[0]) + 1000.0


def coverage(n_studies: int, bootstrap: int) -> None:
    """Share of studies whose 95 % band covers the true curve (5 sessions x 14 tasks)."""
    import warnings

    grid = geometric_grid(1e5, 1e5 * 1.5**18, ratio=1.5)
    truth = 1000 + 400 * np.log10(grid / 1e5)
    hits = []
    for seed in range(n_studies):
        gen = np.random.default_rng(100 + seed)
        off = gen.gumbel(size=(14, 5))
        t, s, b = np.meshgrid(np.arange(14), np.arange(5), np.arange(grid.size), indexing="ij")
        tr = pd.DataFrame({"system": "A", "task": t.ravel(), "session": s.ravel(), "budget": grid[b].ravel(),
                           "score": (np.log(grid[b] / 1e5) + off[t, s]).ravel()})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = elo_curves(tr, budgets=grid, n_resamples=bootstrap, rng=seed).curve
        hits.append(((c["ci_low"] <= truth + 1e-9) & (truth - 1e-9 <= c["ci_high"])).to_numpy())
    cov = np.mean(hits, axis=0)
    print(f"\ncoverage of 95% bands over {n_studies} studies (5 sessions x 14 tasks, true 400/decade):")
    print("  " + ", ".join(f"{grid[k]:.3g}: {cov[k]:.2f}" for k in (2, 4, 9, 14, 18)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference-replicates", type=int, default=10)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--coverage", type=int, default=0, help="simulated studies for band coverage")
    args = ap.parse_args()
    traces = make_traces(0)
    grid = geometric_grid(1e5, 1e5 * 1.5**18, ratio=1.5)
    print(f"workload: 4 systems x 14 tasks x 5 sessions x {grid.size} checkpoints, "
          f"{len(traces)} submissions, {args.bootstrap} bootstrap replicates")
    results = {}
    for mode in ("self", "joint"):
        elo_curves(traces, budgets=grid, mode=mode, n_resamples=2, rng=0)  # warm-up (imports)
        t0 = time.perf_counter()
        res = elo_curves(traces, budgets=grid, mode=mode, n_resamples=args.bootstrap, rng=0)
        infl = [inflection_point(res, system=s) for s in res.systems]
        results[mode] = (time.perf_counter() - t0, res, infl)

    # Reference pipeline on the same best-so-far values.
    ck = best_so_far(traces, grid)
    long = ck.to_frame()
    long["sid"] = np.repeat(np.arange(len(ck.sessions)), grid.size)
    long["ck"] = np.tile(np.arange(grid.size), len(ck.sessions))
    long = long.loc[long["best"].notna()]
    gen = np.random.default_rng(1)
    groups = ck.sessions.groupby(["system", "task"]).indices
    print(f"\n{'mode':6s} {'evalkit (s)':>12s} {'reference (s, extrapolated)':>28s} {'ratio':>8s} {'max |Elo diff| point est.':>26s}")
    for mode, (secs, res, _infl) in results.items():
        systems = list(res.systems)
        if mode == "joint":
            data = long.assign(player=long["system"] + "@" + long["ck"].astype(str))
            players = [f"{s}@{k}" for s in systems for k in range(grid.size)]
            fits = [(data, players)]
        else:
            fits = []
            for s in systems:
                d = long.loc[long["system"] == s]
                fits.append((d.assign(player=d["ck"].astype(str)), [str(k) for k in range(grid.size)]))
        point = np.concatenate([reference_fit(d, p, None, mode) for d, p in fits])
        diff = np.nanmax(np.abs(point - res.curve["elo"].to_numpy()))
        t0 = time.perf_counter()
        for _ in range(args.reference_replicates):
            mult = np.zeros(len(ck.sessions))
            for idx in groups.values():
                np.add.at(mult, idx[gen.integers(0, idx.size, idx.size)], 1)
            for d, p in fits:
                reference_fit(d, p, mult, mode)
        ref = (time.perf_counter() - t0) / args.reference_replicates * (args.bootstrap + 1)
        print(f"{mode:6s} {secs:12.2f} {ref:28.1f} {ref / secs:8.1f} {diff:26.2e}")
    print("\nself-Elo inflection points:")
    for i in results["self"][2]:
        print(f"  {i.system}: b_inf = {i.b_inf:.3g} (95% CI {i.ci_low:.3g} .. {i.ci_high:.3g}), {i.status}")
    ok = all(v[0] < 10 for v in results.values())
    print(f"\ntarget < 10 s per mode on this machine: {'met' if ok else 'NOT met'}")
    if args.coverage:
        coverage(args.coverage, 200)


if __name__ == "__main__":
    main()
