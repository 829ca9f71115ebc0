"""``evalkit curve PATH``: Elo-per-budget curves, local slopes and the scaling inflection point."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from evalkit.cli._common import add_common, call

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
    p.add_argument("path", nargs="+", help="session table (- reads stdin), or agent log file(s) with --logs")
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
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write curve.csv, inflection.csv, curve.png and run.json into the new folder DIR")
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit curve``."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import pandas as pd

    from evalkit._output import check_out_path
    from evalkit.budget import elo_curves, inflection_point
    from evalkit.io import read_agent_logs, read_traces

    ui, inputs = args.ui, args.inputs
    if args.out:
        check_out_path(args.out, force=args.force)
    if args.logs or any(Path(p).suffix.lower() in _LOG_SUFFIXES for p in args.path):
        traces = read_agent_logs([Path(p) for p in args.path], budget=args.budget_unit)
    elif len(args.path) == 1:
        traces = call(ui, "read", read_traces, inputs.path(args.path[0], reader=read_traces),
                      **inputs.kwargs(read_traces))
    else:
        raise ValueError("Pass one session table, or several agent logs with --logs.")
    ui.info(f"read {len(traces)} submissions: {traces['system'].nunique()} systems, "
            f"{traces['task'].nunique()} tasks, "
            f"{traces[['system', 'task', 'session']].drop_duplicates().shape[0]} sessions")
    res = call(ui, f"bootstrap ({args.bootstrap} replicates)", elo_curves,
               traces, mode=args.mode, grid=args.grid, start=args.start, stop=args.stop,
               bootstrap=args.bootstrap, rng=args.seed, missing=args.missing, prior=args.prior,
               higher_is_better=not args.lower_is_better, within_session=args.within_session)
    infl = [inflection_point(res, system=s, window=args.window, align=args.align) for s in res.systems]
    table = res.curve[["system", "budget", "elo", "ci_low", "ci_high", "n_games", "tie_share"]]
    points = pd.DataFrame([
        {"system": i.system, "b_inf": i.b_inf, "ci_low": i.ci_low, "ci_high": i.ci_high, "status": i.status,
         "note": i.note}
        for i in infl
    ])
    ui.result({
        f"{res.mode}-Elo per budget (anchor: first checkpoint = 1000; {int(res.confidence_level * 100)}% "
        f"session-bootstrap bands, {args.bootstrap} replicates)": table,
        "scaling inflection point (last budget with local slope > 400 Elo/decade)": points,
    } if not ui.json else {"curve": table, "inflection": points})
    if args.out:
        _write(args, res, points, infl)
    return 0


def _write(args: argparse.Namespace, res, points, infl) -> None:
    import matplotlib.pyplot as plt

    from evalkit._output import atomic_output_dir
    from evalkit.plots._fonts import plot_fonts, save_png
    from evalkit.plots.budget import plot_elo_curves

    params = {k: v for k, v in vars(args).items() if k in (
        "mode", "grid", "start", "stop", "bootstrap", "seed", "missing", "prior", "window", "align",
        "lower_is_better", "budget_unit", "within_session")}
    record = {"command": "curve", "inputs": list(args.path), "parameters": params}
    with atomic_output_dir(args.out, force=args.force, raw_csv=args.raw_csv, record=record) as out:
        out.write_csv(res.curve, "curve.csv")
        out.write_csv(points, "inflection.csv")
        with plot_fonts():
            ax = plot_elo_curves(res, inflection=infl)
            missing = save_png(ax.figure, out.path / "curve.png", dpi=120, bbox_inches="tight")
            plt.close(ax.figure)
        if missing:
            out.record["missing_glyphs"] = missing
    args.ui.info(f"wrote {args.out}/: curve.csv, inflection.csv, curve.png, run.json")
