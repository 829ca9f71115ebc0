"""Time METR's hierarchical bootstrap of the time horizon: evalkit against METR's own code, same replicates.

One side per process, so a whole-process timer can pair them (run each under the same load):

    python scripts/bench_horizon.py --side evalkit --n 50
    /tmp/metrics-metr-venv/bin/python scripts/bench_horizon.py --side metr --n 50 --metr /tmp/metrics-metr-19b \\
        --runs /work/shared/data/real/metr/all_runs_19b0311.jsonl.gz

Both draw replicates ``default_rng(42 + i)``, i < n (METR's seeds; evalkit draws the same rows, see
tests/test_metrics_horizon.py) and fit every agent's p50 at METR's headline settings (invsqrt
weights, regularization 0.1). The evalkit side fits the 11 agents of a batch of replicates in one
vectorised exact-Newton solve; METR's side calls its ``_process_bootstrap`` (pandas resampling,
one scikit-learn lbfgs fit per agent and replicate). Each side prints its median p50 of o1 (so the
work cannot be skipped) and its wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def evalkit_side(n: int) -> float:
    import numpy as np
    import pandas as pd

    from evalkit.metrics._logistic import fit_many
    from evalkit.metrics.horizon import (
        _aggregate,
        _check_runs,
        _Design,
        _horizons,
        hierarchical_resample,
        task_weights,
    )

    runs = _check_runs(pd.read_csv(ROOT / "data" / "metr" / "runs.csv.gz"))
    design = _Design.of(runs)
    w = task_weights(runs, "invsqrt")
    y = runs["score"].to_numpy(float)
    ux, x_code = np.unique(np.log2(runs["minutes"].to_numpy(float)), return_inverse=True)
    k = len(design.agents)
    W = np.zeros((n, k, ux.size))
    WY = np.zeros_like(W)
    for i in range(n):
        idx = hierarchical_resample(design, np.random.default_rng(42 + i))
        W[i], WY[i] = _aggregate(design, x_code, idx, w, y, k, ux.size)
    a, b, _, _ = fit_many(ux, W.reshape(-1, ux.size), WY.reshape(-1, ux.size), regularization=0.1)
    p50 = _horizons(a, b, (0.5,)).reshape(n, k)
    return float(np.median(p50[:, design.agents.index("o1")]))


def metr_side(n: int, metr: str, runs_path: str) -> float:
    sys.path.insert(0, metr)
    dvc = types.ModuleType("dvc")
    dvc.api = types.ModuleType("dvc.api")  # type: ignore[attr-defined]
    sys.modules["dvc"], sys.modules["dvc.api"] = dvc, dvc.api  # type: ignore[attr-defined]
    import numpy as np
    import pandas as pd
    from src.wrangle.bootstrap import _process_bootstrap

    data = pd.read_json(runs_path, lines=True, orient="records", convert_dates=False).rename(columns={"alias": "agent"})
    cats = ["task_family", "task_id", "run_id"]
    reps = [_process_bootstrap(i, data, cats, "invsqrt_task_weight", 0.1, np.random.default_rng(42 + i))
            for i in range(n)]
    return float(np.median([r["o1"] for r in reps]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", choices=["evalkit", "metr"], required=True)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--metr", default=None, help="METR checkout at 19b0311 (metr side)")
    ap.add_argument("--runs", default=None, help="METR's all_runs.jsonl(.gz) (metr side)")
    args = ap.parse_args()
    t = time.perf_counter()
    if args.side == "evalkit":
        med = evalkit_side(args.n)
    else:
        if not (args.metr and args.runs):
            ap.error("--side metr needs --metr and --runs")
        med = metr_side(args.n, args.metr, args.runs)
    print(f"{args.side}: {args.n} replicates, median p50 of o1 {med:.3f} min, {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
