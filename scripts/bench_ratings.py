"""Benchmark: Bradley–Terry fits with evalkit vs choix, evalica and arena-rank (same run, same data).

Synthetic Bradley–Terry data with Davidson ties (strengths ~ N(0, 1), nu = 0.5) for
20 / 100 / 1000 models x 1e4 / 1e5 / 1e6 comparisons. Every tool gets the same in-memory
frame of string labels (``model_a, model_b, winner`` with winner in ``model_a``,
``model_b``, ``tie``) and is timed including its own preprocessing (label mapping,
indexing, aggregation). Ties count as half a win (evalkit ``ties="half"``, evalica,
arena-rank); choix ``ilsr_pairwise`` has no ties, so it gets the decided comparisons and
is compared with evalkit ``ties="drop"`` (the same likelihood). Prints median times,
ratios (other / evalkit) and the largest centred-Elo difference from evalkit. A draw in
which the maximum-likelihood ratings do not exist (some model wins or loses every game, as
happens with 1000 models and 1e4 comparisons) is replaced by the next seed (column
``redraws``); if five draws have none (``mle`` False), evalkit's time is the time it takes
to refuse, and the other tools' answers (arbitrary) have no Elo difference.

Also times ``bootstrap_bt`` (1000 replicates, 1e5 comparisons, 100 models).

Usage::

    python scripts/bench_ratings.py            # full grid (several minutes; choix is slow)
    python scripts/bench_ratings.py --quick    # 20 / 100 models x 1e4 / 1e5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from evalkit.ratings import ELO_SCALE, aggregate, bootstrap_bt, fit_bt

WINNER_SCORE = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}


def synthetic(n_models: int, n_comparisons: int, *, seed: int = 0, nu: float = 0.5) -> pd.DataFrame:
    """Davidson-model comparisons between uniformly drawn pairs, as string labels."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_models)
    a = rng.integers(0, n_models, n_comparisons)
    b = (a + rng.integers(1, n_models, n_comparisons)) % n_models
    s, t = np.exp(0.5 * (theta[a] - theta[b])), np.exp(-0.5 * (theta[a] - theta[b]))
    u = rng.random(n_comparisons) * (s + t + nu)
    winner = np.where(u < s, "model_a", np.where(u < s + nu, "tie", "model_b"))
    names = np.array([f"model-{k:04d}" for k in range(n_models)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})


def centred_elo(log_strength: pd.Series) -> pd.Series:
    return ELO_SCALE * (log_strength - log_strength.mean())


# --- the tools: frame in, centred log-strengths (pd.Series by model) out -----------------


def run_evalkit(df: pd.DataFrame, ties: str = "half") -> pd.Series:
    w = df["winner"]
    outcome = np.select([w == "model_a", w == "model_b"], [1.0, 0.0], 0.5)
    frame = pd.DataFrame({"player_a": df["model_a"], "player_b": df["model_b"], "outcome": outcome})
    fit = fit_bt(aggregate(frame), ties=ties)
    if not fit.converged:
        raise RuntimeError("evalkit did not converge")
    return pd.Series(fit.theta, index=list(fit.players))


def run_choix(df: pd.DataFrame) -> pd.Series:
    import choix

    codes, names = pd.factorize(pd.concat([df["model_a"], df["model_b"]], ignore_index=True))
    a, b = codes[: len(df)], codes[len(df) :]
    w = df["winner"].to_numpy()
    win_a, win_b = w == "model_a", w == "model_b"
    data = list(zip(a[win_a].tolist(), b[win_a].tolist(), strict=True))
    data += list(zip(b[win_b].tolist(), a[win_b].tolist(), strict=True))
    theta = choix.ilsr_pairwise(len(names), data)
    return pd.Series(theta - theta.mean(), index=[str(x) for x in names])


def run_evalica(df: pd.DataFrame) -> pd.Series:
    import evalica

    labels = {"model_a": evalica.Winner.X, "model_b": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    winners = df["winner"].map(labels).tolist()
    result = evalica.bradley_terry(df["model_a"], df["model_b"], winners)
    return np.log(result.scores.astype(float))


def run_arena_rank(df: pd.DataFrame) -> pd.Series:
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    data = PairDataset.from_pandas(df)
    model = BradleyTerry(n_competitors=data.n_competitors)
    model.fit(data)
    return pd.Series(np.asarray(model.params["ratings"]), index=list(data.competitors))


def exists_for(n_models: int, n_comparisons: int, tries: int = 5) -> tuple[pd.DataFrame, int, bool]:
    """A data set whose MLE exists with ties as half and dropped, the redraws, and whether found.

    With few comparisons per model some model may win (or lose) every game; evalkit then
    refuses to fit (the other tools return arbitrary large ratings), so that draw is
    replaced by the next seed. If no draw works, the first is returned with ``False``.
    """
    first = None
    for k in range(tries):
        df = synthetic(n_models, n_comparisons, seed=n_models + n_comparisons + 1000 * k)
        first = df if first is None else first
        try:
            run_evalkit(df, "drop")
            run_evalkit(df, "half")
        except ValueError:
            continue
        return df, k, True
    return first, tries, False


def refusal(df: pd.DataFrame) -> pd.Series:
    """evalkit on data without an MLE: the time to aggregate, check and raise."""
    try:
        run_evalkit(df, "half")
    except ValueError:
        return pd.Series(dtype=float)
    raise RuntimeError("expected evalkit to refuse")


def available(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def timed(fn: Callable[[], pd.Series], repeats: int, budget: float) -> tuple[float, pd.Series]:
    """Median wall time over ``repeats`` runs (fewer if one run exceeds ``budget`` seconds)."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        if times[-1] > budget:
            break
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20/100 models x 1e4/1e5 only")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per tool and size (median reported)"
    )
    parser.add_argument(
        "--budget", type=float, default=20.0, help="stop repeating a tool after a run this long (s)"
    )
    parser.add_argument(
        "--skip-choix-above", type=float, default=1e6, help="skip choix above this many comparisons"
    )
    parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates to time")
    parser.add_argument(
        "--models", type=int, nargs="+", default=None, help="numbers of models (default: grid)"
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=None, help="numbers of comparisons (default: grid)"
    )
    args = parser.parse_args(argv)

    models = args.models or ((20, 100) if args.quick else (20, 100, 1000))
    sizes = args.sizes or ((10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000))
    tools = {"choix": run_choix}
    if available("evalica"):
        tools["evalica"] = run_evalica
    if available("arena_rank"):
        tools["arena-rank"] = run_arena_rank
    print(f"tools: evalkit, {', '.join(tools)}; repeats={args.repeats}; times in seconds (median)")
    rows = []
    for n_models in models:
        for n_comp in sizes:
            df, redraws, exists = exists_for(n_models, n_comp)
            run_evalkit(synthetic(5, 200))  # warm imports
            if exists:
                t_half, ref_half = timed(
                    lambda df=df: run_evalkit(df, "half"), args.repeats, args.budget
                )
                ref_drop = run_evalkit(df, "drop")
            else:  # no MLE: evalkit's time is the time to say so; Elo differences are undefined
                t_half, _ = timed(lambda df=df: refusal(df), args.repeats, args.budget)
                ref_half = ref_drop = None
            row = {
                "models": n_models,
                "comparisons": n_comp,
                "mle": exists,
                "redraws": redraws,
                "evalkit": t_half,
            }
            for name, fn in tools.items():
                if name == "choix" and n_comp > args.skip_choix_above:
                    continue
                try:
                    t, out = timed(lambda fn=fn, df=df: fn(df), args.repeats, args.budget)
                except Exception as exc:  # noqa: BLE001 - a tool failing is a result, not a crash
                    row[name], row[f"{name} error"] = np.nan, type(exc).__name__
                    continue
                ref = ref_drop if name == "choix" else ref_half
                diff = (
                    np.nan
                    if ref is None
                    else (centred_elo(out.loc[ref.index]) - centred_elo(ref)).abs().max()
                )
                row[name] = t
                row[f"{name}/evalkit"] = t / t_half
                row[f"{name} max |dElo|"] = diff
            rows.append(row)
            print(
                pd.DataFrame([row]).to_string(index=False, float_format=lambda x: f"{x:.4g}"),
                flush=True,
            )
    table = pd.DataFrame(rows)
    print("\nSummary (time ratios > 1: evalkit is faster)")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))

    df = synthetic(100, 100_000, seed=7)
    frame = pd.DataFrame(
        {
            "player_a": df["model_a"],
            "player_b": df["model_b"],
            "outcome": df["winner"].map(WINNER_SCORE).astype(float),
        }
    )
    fit = fit_bt(aggregate(frame))
    times, cpu = [], []
    for _ in range(args.repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        boot = bootstrap_bt(frame, n_resamples=args.n_boot, rng=0, fit=fit)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\nbootstrap_bt: {args.n_boot} replicates of 1e5 comparisons / 100 models: "
        f"median {statistics.median(times):.2f} s wall, {statistics.median(cpu):.2f} s CPU "
        f"(runs: {', '.join(f'{t:.2f}' for t in times)}; 1-min load average {load:.1f} on {os.cpu_count()} cores); "
        f"degenerate replicates: {boot.n_degenerate}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
