"""evalkit's five jobs, notebook style, through the public API only.

Each cell is what a user types in a notebook: one call, then the result's repr, summary and
table. No private name is imported, and the matplotlib backend is the same at the end as at
the start (evalkit draws on Figure objects and never touches pyplot). CI runs this from a
folder outside the checkout with the installed wheel:

    python scripts/five_jobs.py --out five-jobs
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

import evalkit
from evalkit.resources import data_file


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="five-jobs", help="folder for the report and the figure (new)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=False)
    backend = matplotlib.get_backend()

    # %% 1. Rate a judge log, with intervals (cluster-robust over prompts)
    rating = evalkit.rate(data_file("llmfao/crowd-comparisons.csv"), cluster="item")
    print(repr(rating))
    print(rating.summary(top=5))
    board = rating.to_frame()
    assert board["elo"].is_monotonic_decreasing and (board["ci_low"] <= board["elo"]).all()

    # %% 2. Compare two agent runs: candidate - baseline over shared tasks, tasks clustered by family
    runs = data_file("agent_runs/truth.csv").parent
    comparison = evalkit.compare_runs(runs / "baseline", runs / "candidate", cluster="family")
    print(repr(comparison))
    print(comparison.summary())
    row = comparison.to_frame().iloc[0]  # the table of `evalkit compare`: baseline, candidate, the difference
    assert row["candidate"].endswith("(candidate)") and row["baseline"].endswith("(baseline)")
    assert row["diff (candidate − baseline)"] > 0

    # %% 3. Simulate seed 000's four systems on one agent-time budget
    sim = evalkit.simulate(n_tasks=6, n_sessions=4, rng=0)
    print(repr(sim))
    print(sim.summary())

    # %% 4. Elo against budget from those sessions, with the inflection points
    curve = evalkit.elo_curve(sim, n_resamples=100, rng=0)
    print(repr(curve))
    print(curve.summary())
    ax = curve.plot()
    ax.figure.savefig(out / "elo_curve.png", dpi=100)
    print(curve.to_frame().head())

    # %% 5. A significance report on the same sessions (and the judge log)
    report = evalkit.significance_report(out / "report", traces=sim,
                                         comparisons=data_file("llmfao/gpt4-comparisons.csv"),
                                         curve_options={"n_resamples": 100})
    print(repr(report))
    print(report.summary())
    print(report.to_frame())

    assert matplotlib.get_backend() == backend, f"the backend changed from {backend} to {matplotlib.get_backend()}"
    print(f"five jobs done; files in {out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
