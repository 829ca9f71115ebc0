"""``evalkit demo``: the main job on bundled defaults (simulate, fit, test, report)."""

from __future__ import annotations

import argparse
import time

from evalkit.cli._common import add_common
from evalkit.cli._flags import add_n_resamples, add_rng

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
    add_rng(p, "--seed", help="seed of the whole study")
    p.add_argument("--tasks", type=int, default=14, help="tasks (default: 14)")
    p.add_argument("--sessions", type=int, default=5, help="sessions per system and task (default: 5)")
    add_n_resamples(p, "--bootstrap", default=500, help="session-bootstrap replicates")
    p.add_argument("--real-data", default="bundled", metavar="PATH",
                   help="a judgment log rated in a second report, out/real/ (default: the bundled LLMFAO crowd votes)")
    p.add_argument("--no-real-data", dest="real_data", action="store_const", const=None,
                   help="skip the second report")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty --out whole")
    from evalkit.cli.simulate import add_engine_options

    add_engine_options(p)
    add_common(p, table=False)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from evalkit.cli._logs import cli_remedies
    from evalkit.studies.demo import run_demo
    from evalkit.studies.fig11 import Figure11Config

    ui = args.ui
    t0 = time.perf_counter()
    with cli_remedies():
        config = Figure11Config(n_tasks=args.tasks, n_sessions=args.sessions, bootstrap=args.n_resamples)
        out = run_demo(args.out, config=config, rng=args.rng, progress=ui.progress, engine=args.engine,
                       workers=args.workers, scheduler=args.scheduler, force=args.force, real_data=args.real_data)
    ui.close_bar()
    ui.info(f"[{time.perf_counter() - t0:6.1f} s] done: open {out / 'report.html'}")
    print(out / "report.html")
    return 0
