"""Run METR's own time-horizon code on METR's runs file and save what it computes, for evalkit's tests.

This script does not import evalkit. It runs under a separate virtual environment holding
METR's dependencies (scikit-learn is theirs, not ours), on a checkout of
METR/eval-analysis-public at the commit of the data (19b0311):

    git clone <mirror of METR/eval-analysis-public> /tmp/metrics-metr
    mkdir /tmp/metrics-metr-19b && git -C /tmp/metrics-metr archive 19b0311 src data/external/release_dates.yaml \\
        | tar -x -C /tmp/metrics-metr-19b
    python3.11 -m venv /tmp/metrics-metr-venv
    /tmp/metrics-metr-venv/bin/pip install scikit-learn==1.6.1 numpy==2.2.1 pandas==2.2.3 scipy==1.15.1 \\
        matplotlib==3.10.0 pyyaml joblib typing_extensions   # METR's poetry.lock versions
    /tmp/metrics-metr-venv/bin/python scripts/metr_reference.py --metr /tmp/metrics-metr-19b \\
        --runs /work/shared/data/real/metr/all_runs_19b0311.jsonl.gz --out tests/data/metr/metr_reference.json

``dvc`` (imported at the top of METR's modules, used only by their ``main()``) is stubbed.
What is saved (all from METR's functions):

- ``fits``: ``run_logistic_regressions`` (``src/wrangle/logistic.py``) for weights
  invsqrt/equal/none x regularization 0.1/0.01: each agent's coefficient, intercept, p50;
- ``p80``: ``logistic_regression`` + ``get_x_for_quantile`` at the headline settings;
- ``bootstrap``: ``_process_bootstrap`` (``src/wrangle/bootstrap.py``) with
  ``rng = default_rng(42 + i)``, categories family/task/run, headline settings: each replicate's
  p50 per agent, and the SHA-256 of the replicate's row positions (``bootstrap_sample``);
- ``trend``: ``fit_trendline`` (``src/plot/logistic.py``, log scale) on the headline p50s with
  METR's release dates: the doubling time in days, and the 10/50/90th percentiles of the
  replicates' doubling times as ``add_bootstrap_confidence_region`` computes them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys
import types


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metr", required=True, help="METR/eval-analysis-public checkout at 19b0311")
    ap.add_argument("--runs", required=True, help="all_runs.jsonl(.gz) of that commit")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n-bootstrap", type=int, default=200)
    args = ap.parse_args()
    sys.path.insert(0, args.metr)
    dvc = types.ModuleType("dvc")
    dvc.api = types.ModuleType("dvc.api")  # type: ignore[attr-defined]
    sys.modules["dvc"], sys.modules["dvc.api"] = dvc, dvc.api  # type: ignore[attr-defined]
    import numpy as np
    import pandas as pd
    import sklearn
    import yaml
    from src.plot.logistic import fit_trendline
    from src.utils.logistic import get_x_for_quantile, logistic_regression
    from src.wrangle.bootstrap import _process_bootstrap, bootstrap_sample
    from src.wrangle.logistic import run_logistic_regressions

    dates_file = pathlib.Path(args.metr) / "data/external/release_dates.yaml"
    runs = pd.read_json(args.runs, lines=True, orient="records", convert_dates=False)
    out: dict = {"metr_commit": "19b03113b7a28276593e2c2b9a86fbb508a89dba", "sklearn": sklearn.__version__,
                 "numpy": np.__version__, "fits": {}}
    runs["no_weight"] = 1.0
    for weighting, col in (("invsqrt", "invsqrt_task_weight"), ("equal", "equal_task_weight"), ("none", "no_weight")):
        for reg in (0.1, 0.01):
            table = run_logistic_regressions(runs.copy(), dates_file, col, reg, None, None)
            out["fits"][f"{weighting}|{reg}"] = {
                str(r.agent): {"coef": float(r.coefficient), "intercept": float(r.intercept), "p50": float(r["50%"])}
                for _, r in table.iterrows()}
    d = runs.rename(columns={"alias": "agent"})
    p80 = {}
    for agent, g in d.groupby("agent"):
        if g.score_binarized.nunique() < 2:
            continue
        m = logistic_regression(np.log2(g.human_minutes.to_numpy()).reshape(-1, 1), g.score_binarized.to_numpy(),
                                g.invsqrt_task_weight.to_numpy(), 0.1)
        p80[str(agent)] = float(np.exp2(get_x_for_quantile(m, 0.8)))
    out["p80"] = p80
    cats = ["task_family", "task_id", "run_id"]
    d["pos"] = np.arange(len(d))
    reps, hashes = [], []
    for i in range(args.n_bootstrap):
        sample = bootstrap_sample(d.copy(), cats, np.random.default_rng(42 + i))
        hashes.append(hashlib.sha256(sample["pos"].to_numpy(np.int64).tobytes()).hexdigest())
        reps.append(_process_bootstrap(i, d.copy(), cats, "invsqrt_task_weight", 0.1, np.random.default_rng(42 + i)))
    out["bootstrap"] = {"p50": reps, "index_sha256": hashes}
    # the trend, as METR's plotting code computes it
    dates = yaml.safe_load(dates_file.read_text())["date"]
    head = out["fits"]["invsqrt|0.1"]
    summ = pd.DataFrame([{"agent": a, "release_date": dates[a], "50%": v["p50"]} for a, v in head.items()
                         if a in dates])
    reg, r2 = fit_trendline(summ, "2019-01-01", log_scale=True)
    doubling = []
    for rep in reps:
        rows = [{"agent": a, "release_date": dates[a], "50%": p} for a, p in rep.items()
                if a in dates and np.isfinite(p) and p >= 1e-3]
        if len(rows) >= 2:
            rr, _ = fit_trendline(pd.DataFrame(rows), "2019-01-01", log_scale=True)
            dt = float(np.log(2) / rr.coef_[0])
            if dt > 0:
                doubling.append(dt)
    out["trend"] = {"agents": sorted(summ["agent"]), "doubling_days": float(np.log(2) / reg.coef_[0]), "r2": r2,
                    "bootstrap_p10_p50_p90": [float(v) for v in np.nanpercentile(doubling, [10, 50, 90])],
                    "n_positive": len(doubling)}
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1, allow_nan=True) + "\n")
    print(f"wrote {args.out}: {len(reps)} replicates, doubling time {out['trend']['doubling_days']:.1f} days")


if __name__ == "__main__":
    main()
