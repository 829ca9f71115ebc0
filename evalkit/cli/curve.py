"""``evalkit curve PATH``: Elo-per-budget curves, local slopes and the scaling inflection point."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

__all__ = ["register", "run"]

_LOG_SUFFIXES = (".eval", ".traj")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``curve`` sub-command."""
    p = subparsers.add_parser(
        "curve",
        help="self-Elo / joint Elo against budget, the 400-per-decade reference and b_inf",
        description=(
            "Read a session table (system, task, session, cumulative budget, score; CSV, JSONL or "
            "Parquet) or agent logs (Inspect .eval/.json, SWE-agent .traj, with --logs), rate each "
            "system's best-so-far score at every budget checkpoint with one pooled Bradley-Terry "
            "fit, bootstrap sessions for bands, print the curve and the scaling inflection point "
            "(last budget whose local slope exceeds 400 Elo per decade), and save a PNG."
        ),
    )
    p.add_argument("path", nargs="+", help="session table, or agent log file(s) with --logs")
    p.add_argument("--mode", choices=["self", "joint"], default="self", help="self-Elo (default) or joint Elo")
    p.add_argument("--grid", type=float, default=1.5, help="ratio between budget checkpoints (default 1.5)")
    p.add_argument("--start", type=float, default=None, help="first checkpoint (default: smallest budget)")
    p.add_argument("--stop", type=float, default=None, help="last checkpoint cap (default: largest budget)")
    p.add_argument("--bootstrap", type=int, default=500, help="session-bootstrap replicates (default 500)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--missing", choices=["drop", "lose"], default="drop",
                   help="checkpoints before a session's first submission: drop their games or let them lose")
    p.add_argument("--prior", type=float, default=0.0, help="symmetric pseudo-games per pair (default 0)")
    p.add_argument("--window", type=int, default=5, help="checkpoints per local-slope fit (default 5)")
    p.add_argument("--align", choices=["centred", "trailing"], default="centred", help="local-slope window")
    p.add_argument("--lower-is-better", action="store_true", help="smaller scores are better")
    p.add_argument("--within-session", action="store_true",
                   help="let checkpoints of the same session play each other (default: not; their results are "
                        "fixed by the prefix maximum)")
    p.add_argument("--logs", action="store_true", help="PATH are agent logs (.eval/.traj imply it)")
    p.add_argument("--budget-unit", choices=["tokens", "tokens_total", "cost", "time"], default="tokens",
                   help="budget unit when reading agent logs (default tokens = input + output)")
    p.add_argument("--out", default=".", help="directory for curve.csv, inflection.csv and curve.png (default .)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit curve``."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.pyplot as plt

    from evalkit.budget import elo_curves, inflection_point
    from evalkit.io import read_agent_logs, read_traces
    from evalkit.io.write import to_markdown
    from evalkit.plots.budget import plot_elo_curves

    paths = [Path(p) for p in args.path]
    if args.logs or any(p.suffix.lower() in _LOG_SUFFIXES for p in paths):
        traces = read_agent_logs(paths, budget=args.budget_unit)
    elif len(paths) == 1:
        traces = read_traces(paths[0])
    else:
        raise ValueError("Pass one session table, or several agent logs with --logs.")
    print(
        f"read {len(traces)} submissions: {traces['system'].nunique()} systems, "
        f"{traces['task'].nunique()} tasks, "
        f"{traces[['system', 'task', 'session']].drop_duplicates().shape[0]} sessions",
        file=sys.stderr,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = elo_curves(
            traces, mode=args.mode, grid=args.grid, start=args.start, stop=args.stop,
            bootstrap=args.bootstrap, rng=args.seed, missing=args.missing, prior=args.prior,
            higher_is_better=not args.lower_is_better, within_session=args.within_session,
        )
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    infl = [inflection_point(res, system=s, window=args.window, align=args.align) for s in res.systems]
    table = res.curve[["system", "budget", "elo", "ci_low", "ci_high", "n_games", "tie_share"]]
    print(f"\n{res.mode}-Elo per budget (anchor: first checkpoint = 1000; "
          f"{int(res.confidence_level * 100)}% session-bootstrap bands, {args.bootstrap} replicates)\n")
    print(to_markdown(table, floatfmt=".4g"))
    import pandas as pd

    points = pd.DataFrame([
        {"system": i.system, "b_inf": i.b_inf, "ci_low": i.ci_low, "ci_high": i.ci_high, "status": i.status,
         "note": i.note}
        for i in infl
    ])
    print("scaling inflection point (last budget with local slope > 400 Elo/decade)\n")
    print(to_markdown(points, floatfmt=".4g"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res.curve.to_csv(out / "curve.csv", index=False)
    points.to_csv(out / "inflection.csv", index=False)
    ax = plot_elo_curves(res, inflection=infl)
    ax.figure.savefig(out / "curve.png", dpi=120, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"wrote {out / 'curve.csv'}, {out / 'inflection.csv'}, {out / 'curve.png'}", file=sys.stderr)
    return 0
