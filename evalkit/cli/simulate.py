"""``evalkit simulate``: the reference swarm simulator of seed 000.

Sub-commands:

* ``reproduce --out DIR [--seeds 0 1 2] [--dags 16] [--params FILE] [--fig11-seeds 0 1 2 3 4]``: run
  figures 2-10 and write the claim table (CSV + Markdown) and the figures, then figure 11 (Elo per
  agent-time, :mod:`evalkit.studies`) on five seeds, appended to the same table;
* ``calibrate --out FILE [--seeds 100 101 102] [--dags 8] [--passes 2] [--start FILE]``: the
  coordinate search of :mod:`evalkit.sim.calibrate`, scored by the claim table;
* ``run --agents K [--swarm standard|recursive] [--rule own-branch] [--dags N] --out FILE``:
  simulate runs on generated DAGs (or ``--edges/--steps`` CSVs) and write the tidy event trace.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from evalkit.cli._common import add_common, call

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` sub-command."""
    p = subparsers.add_parser(
        "simulate", help="swarm simulator: reproduce seed 000's figures 2-10, calibrate, run traces",
        description="The reference swarm simulator of 'Predictable Swarm Scaling' (seed 000).",
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = sub.add_parser("reproduce", help="run figures 2-10 and write the claim table and figures")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    r.add_argument("--dags", type=int, default=16, help="DAGs per seed (default 16)")
    r.add_argument("--params", default=None, help="parameter JSON (default: the bundled calibrated set)")
    r.add_argument("--workers", type=int, default=None, help="processes (default: 2)")
    r.add_argument("--no-figures", action="store_true")
    r.add_argument("--fig11-seeds", type=int, nargs="*", default=[0, 1, 2, 3, 4],
                   help="seeds of the figure-11 (Elo per agent-time) rows; none to skip them (default 0..4)")
    add_common(r, table=False, writes=True)
    r.set_defaults(func=run)
    c = sub.add_parser("calibrate", help="fit the parameter set to the claim table (coordinate search)")
    c.add_argument("--out", required=True, help="where to write the fitted parameter JSON")
    c.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    c.add_argument("--dags", type=int, default=8)
    c.add_argument("--passes", type=int, default=2)
    c.add_argument("--start", default=None, help="starting parameter JSON (default: the bundled set)")
    c.add_argument("--workers", type=int, default=None)
    c.add_argument("--force", action="store_true", help="replace an existing --out file")
    add_common(c, table=False)
    c.set_defaults(func=run)
    s = sub.add_parser("run", help="simulate runs and write their tidy event trace")
    s.add_argument("--agents", type=int, default=16)
    s.add_argument("--swarm", default="standard", choices=["standard", "recursive"])
    s.add_argument("--rule", default="own-branch")
    s.add_argument("--dags", type=int, default=1, help="number of generated DAGs (one run each)")
    s.add_argument("--edges", default=None, help="CSV parent,child of a user DAG (with --steps)")
    s.add_argument("--steps", default=None, help="CSV step,duration[,value] of a user DAG")
    s.add_argument("--overheads", action="store_true", help="apply scheduling and communication overheads")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--params", default=None)
    s.add_argument("--out", required=True, help="trace file (.csv or .parquet)")
    s.add_argument("--force", action="store_true", help="replace an existing --out file")
    add_common(s, table=False)
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit simulate ACTION``."""
    from evalkit.sim.experiments import load_params, save_params

    params = load_params(getattr(args, "params", None) or getattr(args, "start", None))
    if args.action == "reproduce":
        return _reproduce(args, params)
    if args.action == "calibrate":
        from evalkit._output import atomic_file
        from evalkit.sim.calibrate import calibrate

        history = Path(args.out).with_suffix(".history.csv")
        with atomic_file(args.out, force=args.force) as tmp, atomic_file(history, force=args.force) as tmp_h:
            best, score, hist = calibrate(params, seeds=args.seeds, n_dags=args.dags, max_passes=args.passes,
                                          workers=args.workers, log=args.ui.info)
            save_params(best, tmp, fitted={"score": str(score), "seeds": args.seeds, "n_dags": args.dags,
                                           "evaluations": len(hist)})
            hist.to_csv(tmp_h, index=False)
        print(f"best: {score}; written to {args.out}")
        return 0
    # run
    import numpy as np
    import pandas as pd

    from evalkit.sim.dag import generate_dags, read_dag
    from evalkit.sim.swarms import simulate

    if (args.edges is None) != (args.steps is None):
        raise ValueError("--edges and --steps go together (a user DAG needs both files).")
    dags = [read_dag(args.edges, args.steps)] if args.edges else generate_dags(args.dags, params.generator,
                                                                               rng=args.seed)
    s, c = (params.scheduling, params.communication) if args.overheads else (0.0, 0.0)
    seeds = np.random.SeedSequence(args.seed).spawn(len(dags))
    frames = [
        simulate(d, agents=args.agents, swarm=args.swarm, rule=args.rule, policy=params.policy, scheduling=s,
                 communication=c, baseline=args.agents == 1, rng=np.random.default_rng(ss)).trace(run=i)
        for i, (d, ss) in enumerate(zip(dags, seeds, strict=True))
    ]
    trace = pd.concat(frames, ignore_index=True)
    from evalkit._output import atomic_file

    out = Path(args.out)
    with atomic_file(out, force=args.force) as tmp:
        trace.to_parquet(tmp) if out.suffix == ".parquet" else trace.to_csv(tmp, index=False)
    print(f"{len(dags)} runs, {len(trace)} step events written to {out}")
    return 0


def _reproduce(args: argparse.Namespace, params) -> int:
    """``simulate reproduce``: figures 2-10 (and 11) into a new folder, built atomically."""
    from evalkit._output import atomic_output_dir, check_out_path
    from evalkit.sim.reproduce import reproduce

    ui = args.ui
    check_out_path(args.out, force=args.force)
    record = {"command": "simulate reproduce", "parameters": {
        "seeds": args.seeds, "dags": args.dags, "fig11_seeds": args.fig11_seeds, "params": args.params}}
    with atomic_output_dir(args.out, force=args.force, raw_csv=args.raw_csv, record=record) as folder:
        t0 = time.perf_counter()
        rep = call(ui, f"figures 2-10 ({len(args.seeds)} seeds x {args.dags} DAGs)", reproduce, folder.path,
                   params=params, seeds=args.seeds, n_dags=args.dags, workers=args.workers,
                   figures=not args.no_figures)
        ui.info(f"{rep.rows_held} of {len(rep.summary)} claim rows hold on >= 2/3 of seeds {args.seeds} "
                f"({args.dags} DAGs each, {time.perf_counter() - t0:.1f} s)")
        if args.fig11_seeds:
            from evalkit.studies import Figure11Config, write_figure11_reproduction

            t0 = time.perf_counter()
            f11 = call(ui, f"figure 11 ({len(args.fig11_seeds)} seeds)", write_figure11_reproduction, folder.path,
                       Figure11Config(params=params), seeds=args.fig11_seeds, workers=args.workers,
                       figure=not args.no_figures)
            ui.info(f"figure 11: {int(f11['holds'].sum())} of {len(f11)} claim rows hold on >= 2/3 of seeds "
                    f"{args.fig11_seeds} ({time.perf_counter() - t0:.1f} s)")
    print(f"{rep.rows_held} of {len(rep.summary)} claim rows (figures 2-10) hold; table: "
          f"{Path(args.out) / 'claims.md'}")
    return 0
