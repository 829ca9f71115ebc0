"""``evalkit frontier RUNS|LOGS``: accuracy against cost, HAL's frontier or the Pareto set, with bootstrap probabilities."""

from __future__ import annotations

import argparse
from typing import Any

from evalkit.cli._common import add_common
from evalkit.cli._cost import add_price_arguments

__all__ = ["register", "run", "read_cost_runs", "add_price_arguments"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``frontier`` sub-command."""
    p = subparsers.add_parser(
        "frontier",
        help="accuracy against cost: HAL's convex-hull frontier or the Pareto set, frontier probabilities",
        description=(
            "Per system: accuracy (mean score over tasks) and total cost with task-bootstrap intervals both ways, "
            "whether it is on the frontier (HAL's upper-convex-hull rule, --method hal, or the plain Pareto set), "
            "and the share of bootstrap replicates in which it is (one resample of tasks shared by all systems). "
            "Input: run tables (system, task, score, and cost or tokens with --prices) or agent logs."
        ),
    )
    p.add_argument("path", nargs="+", help="run table(s) (CSV/JSONL/Parquet) or agent logs")
    p.add_argument("--method", choices=["hal", "pareto"], default="hal",
                   help="hal (default): HAL's upper convex hull, then the non-dominated hull points; pareto: every "
                        "non-dominated system")
    p.add_argument("--cost", default=None, metavar="COLUMN",
                   help="cost axis: cost (default when the runs have it or --prices), tokens, output_tokens, time, ...")
    add_price_arguments(p)
    p.add_argument("--min-completion", type=float, default=None, metavar="SHARE",
                   help="leave out systems that completed fewer than SHARE of their runs (says whom and why)")
    p.add_argument("--completed", default=None, metavar="COLUMN",
                   help="completion indicator column (default: completed, else status == success, else scored)")
    p.add_argument("--n-resamples", type=int, default=2000, help="bootstrap replicates (default 2000)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--rng", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--linear-cost", action="store_true", help="figure: linear cost axis (default log)")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="write the figure (.png, .svg, .pdf)")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the table to FILE.csv or FILE.md")
    p.add_argument("--by", default="system", metavar="COLUMN", help="logs: the column naming a system")
    from evalkit.cli._logs import add_log_arguments

    add_log_arguments(p)
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def read_cost_runs(args: argparse.Namespace, paths: list[str]) -> Any:
    """One row per run (``system, task, score`` and usage columns) from run tables or logs,
    priced with ``--prices`` when given."""
    from evalkit.cli._logs import looks_like_logs, parse_mapping, read_log_inputs
    from evalkit.metrics._read import read_run_table

    mapping = parse_mapping(getattr(args, "map", []) or [], "--map") or None
    paths = [args.inputs.path(p) for p in paths]
    if not looks_like_logs(paths, mapping) or _table_file(paths):
        runs = read_run_table(paths, columns=mapping, encoding=args.inputs.encoding)
    else:
        from evalkit.io.logs import session_outcomes

        by = getattr(args, "by", "system")
        traces = read_log_inputs(args, paths, metadata=[by] if by not in ("system", "input") else [])
        runs = session_outcomes(traces, by=by)
        if by != "system":
            runs["system"] = runs[by].astype(str)
    return price(runs, getattr(args, "prices", None))


def price(runs: Any, prices: str | None) -> Any:
    """``runs`` with ``tokens`` derived from input + output where missing, and a priced ``cost``
    (:func:`evalkit.metrics.cost.with_usage`)."""
    from evalkit.cli._cost import read_price_flag
    from evalkit.metrics.cost import with_usage

    return with_usage(runs, read_price_flag(prices) if prices else None)


def _table_file(paths: list[str]) -> bool:
    from pathlib import Path

    return len(paths) == 1 and Path(paths[0]).is_file() and Path(paths[0]).name.lower().endswith(
        (".csv", ".csv.gz", ".tsv", ".parquet"))


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit frontier``."""
    from pathlib import Path

    from evalkit.cli._logs import cli_remedies
    from evalkit.metrics._frontier import frontier
    from evalkit.metrics.cost import available_usage

    ui = args.ui
    for flag, value in (("--out", args.out), ("--plot", args.plot)):
        if value and Path(value).exists() and not args.force:
            raise ValueError(f"{flag} {value!r} exists; pass --force to replace it.")
    with cli_remedies():
        runs = read_cost_runs(args, list(args.path))
        for note in runs.attrs.get("notes", []):
            ui.warn(note)
        have = available_usage(runs)
        cost = args.cost or ("cost" if "cost" in have else None)
        if cost is None:
            raise ValueError(f"The runs record no cost; give --prices FILE (dollars per million tokens per model) or "
                             f"--cost COLUMN (one of {have or 'no usage column'}).")
        if cost not in have:
            raise ValueError(f"--cost {cost!r}: the runs have no such usage; they have {have or 'none'}.")
        result = frontier(runs, cost=cost, method=args.method, min_completion=args.min_completion,
                          completed=args.completed, n_resamples=args.n_resamples,
                          confidence_level=args.confidence_level, rng=args.rng, progress=ui.progress)
    ui.close_bar()
    ui.result(result.table, title=f"accuracy against {cost} ({100 * result.confidence_level:g}% intervals; "
                                  f"frontier by {'HAL hull' if args.method == 'hal' else 'Pareto'} rule)")
    for s in result.sentences():
        ui.info(s)
    for w in result.warnings:
        ui.warn(w)
    if args.out:
        from evalkit.cli.summary import write_file

        ui.info(f"wrote {write_file(result.table, args.out, force=args.force, raw_csv=args.raw_csv)}")
    if args.plot:
        from evalkit.cli.horizon import _save
        from evalkit.plots.metrics import plot_frontier

        _save(plot_frontier(result, log_cost=not args.linear_cost), args.plot, args.force)
        ui.info(f"wrote {args.plot}")
    return 0
