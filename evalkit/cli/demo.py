"""``evalkit demo``: the main job on bundled defaults (simulate, fit, test, report)."""

from __future__ import annotations

import argparse
import sys
import time

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo",
        help="simulate the default Elo-per-budget study and write its report",
        description="Simulate four systems (pass@1, pass@4, group@4, pass@2 group@2) with the bundled swarm "
        "simulator, fit self- and joint-Elo curves against agent-time, find the scaling inflection points, test "
        "the systems against each other, and write a report folder (HTML, Markdown, PNG, CSV, run.json).",
    )
    p.add_argument("--out", default="out/demo", help="report folder (default: out/demo)")
    p.add_argument("--seed", type=int, default=0, help="seed of the whole study (default: 0)")
    p.add_argument("--tasks", type=int, default=14, help="tasks (default: 14)")
    p.add_argument("--sessions", type=int, default=5, help="sessions per system and task (default: 5)")
    p.add_argument("--bootstrap", type=int, default=500, help="session-bootstrap replicates (default: 500)")
    from evalkit.cli.simulate import add_engine_options

    add_engine_options(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from evalkit.cli.simulate import progress_printer
    from evalkit.studies.demo import run_demo
    from evalkit.studies.fig11 import Figure11Config

    t0 = time.perf_counter()
    config = Figure11Config(n_tasks=args.tasks, n_sessions=args.sessions, bootstrap=args.bootstrap)
    out = run_demo(args.out, config=config, seed=args.seed, progress=progress_printer(), engine=args.engine,
                   workers=args.workers, scheduler=args.scheduler)
    print(f"[{time.perf_counter() - t0:6.1f} s] done: open {out / 'report.html'}", file=sys.stderr, flush=True)
    print(out / "report.html")
    return 0
