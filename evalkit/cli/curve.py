"""``evalkit curve PATH``: Elo-per-budget curves, local slopes and the scaling inflection point."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli._common import add_common
from evalkit.cli._flags import add_n_resamples, add_rng
from evalkit.cli._logs import (
    add_log_arguments,
    cli_remedies,
    looks_like_logs,
    parse_floats,
    parse_mapping,
    read_log_inputs,
)

if TYPE_CHECKING:  # pandas loads when the command runs, not while its parser is built
    import pandas as pd

__all__ = ["register", "run", "read_sessions", "name_systems", "require_budgets"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``curve`` sub-command."""
    p = subparsers.add_parser(
        "curve",
        help="self-Elo / joint Elo against budget, the 400-per-decade reference and b_inf",
        description=(
            "Read a session table (system, task, session, cumulative budget, score; CSV, JSONL or "
            "Parquet) or agent logs (files, folders or globs of Inspect .eval/.json, SWE-agent .traj "
            "with --resolved, JSONL events with --map), rate each system's best-so-far score at every "
            "budget checkpoint with one pooled Bradley-Terry fit, bootstrap sessions for bands, print "
            "the curve and the scaling inflection point (last budget whose local slope exceeds 400 Elo "
            "per decade), and save a PNG."
        ),
    )
    p.add_argument("path", nargs="+", help="session table (- reads stdin), or agent log files / folders / globs")
    p.add_argument("--mode", choices=["self", "joint"], default="self", help="self-Elo (default) or joint Elo")
    p.add_argument("--grid", type=float, default=1.5, help="ratio between budget checkpoints (default 1.5)")
    p.add_argument("--budgets", default=None, metavar="B1,B2,...", help="explicit checkpoint budgets (overrides --grid)")
    p.add_argument("--start", type=float, default=None, help="first checkpoint (default: smallest budget)")
    p.add_argument("--stop", type=float, default=None, help="last checkpoint cap (default: largest budget)")
    add_n_resamples(p, "--bootstrap", default=500, help="session-bootstrap replicates")
    add_rng(p, "--seed", help="seed of the bootstrap")
    p.add_argument("--missing", choices=["drop", "lose"], default="drop",
                   help="checkpoints before a session's first submission: drop their games or let them lose")
    p.add_argument("--prior", type=float, default=0.0, help="symmetric pseudo-games per pair (default 0)")
    p.add_argument("--window", type=int, default=5, help="checkpoints per local-slope fit (default 5)")
    p.add_argument("--align", choices=["centred", "trailing"], default="centred", help="local-slope window")
    p.add_argument("--lower-is-better", action="store_true", help="smaller scores are better")
    p.add_argument("--within-session", action="store_true",
                   help="let checkpoints of the same session play each other (default: not; their results are "
                        "fixed by the prefix maximum)")
    p.add_argument("--logs", action="store_true", help="PATH are agent logs (implied by folders, globs and log files)")
    p.add_argument("--by", default="system", metavar="COLUMN",
                   help="what names a system: 'system' (as logged, default), 'input' (each PATH is one system, "
                        "named after it) or another column of the logs (e.g. epoch)")
    p.add_argument("--drop-unscored", action="store_true", help="session table: drop rows without a score (counted)")
    p.add_argument("--sort-budgets", action="store_true",
                   help="session table: sort each session by budget instead of requiring file order")
    add_log_arguments(p)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write curve.csv, inflection.csv, curve.png and run.json into the new folder DIR")
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def read_sessions(args: argparse.Namespace, paths: list[str], *, by: str = "system") -> pd.DataFrame:
    """The session table of ``paths``: a table file, or logs (systems named by the ``by`` column)."""
    from evalkit.io import read_traces

    mapping = parse_mapping(args.map, "--map")
    if getattr(args, "logs", False) or looks_like_logs(paths, mapping):
        traces = read_log_inputs(args, paths, metadata=(by,) if by not in ("system", "input") else ())
        require_budgets(traces, args.budget_unit)
        return name_systems(traces, by, paths)
    with cli_remedies():
        return read_traces(paths[0], columns=mapping or None,
                           missing_score="drop" if args.drop_unscored else "raise",
                           order="sort" if args.sort_budgets else "check")


def require_budgets(traces: pd.DataFrame, unit: str) -> None:
    """An Elo-per-budget curve needs every submission's budget: say which logs lack it and what works."""
    from evalkit._errors import list_ids

    missing = traces["budget"].isna()
    if not missing.any():
        return
    files = sorted(set(traces.loc[missing, "source"].astype(str))) if "source" in traces else []
    kinds = {k for k in (traces.attrs.get("files") or {}) if k in ("lm_eval", "swe_bench", "mt_bench_single", "table")}
    why = (" (lm-eval, SWE-bench verdicts, MT-bench judgments and outcome tables record no budget)" if kinds else "")
    raise ValueError(
        f"{int(missing.sum())} of {len(traces)} submissions have no {unit!r} budget{why}: "
        f"{list_ids(files, limit=5)}. An Elo-per-budget curve needs one; pass --budget-unit with a unit these logs "
        "record (tokens, tokens_total, cost, time), or score and compare the runs with `evalkit score` or "
        "`evalkit compare`, which need no budget.")


def name_systems(traces: pd.DataFrame, by: str, paths: list[str]) -> pd.DataFrame:
    """Rename ``system`` after the ``by`` column ('input': each path is one system, named by its basename)."""
    if by == "system":
        return traces
    if by not in traces.columns:
        extra = [c for c in traces.columns if c not in ("system", "task", "session", "budget", "score", "source", "line")]
        raise ValueError(f"--by {by!r} names no column of the logs; use 'system', 'input' or one of {extra}.")
    out = traces.copy()
    if by == "input":
        names = {p: (Path(p).stem if Path(p).is_file() else Path(p).name) or p for p in paths}
        if len(set(names.values())) < len(names):
            names = {p: p for p in paths}
        out["system"] = out["input"].map(names).fillna(out["input"])
    else:
        out["system"] = out[by].astype(str)
    return out


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit curve``."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    from evalkit._output import check_out_path
    from evalkit.budget import elo_curves, inflection_point
    from evalkit.io import read_traces

    ui, inputs = args.ui, args.inputs
    if args.out:
        check_out_path(args.out, force=args.force)
    if args.path == ["-"]:  # a session table on stdin
        args.path = [inputs.path("-", reader=read_traces)]
    traces = read_sessions(args, list(args.path), by=args.by)
    ui.info(f"read {len(traces)} submissions: {traces['system'].nunique()} systems, "
            f"{traces['task'].nunique()} tasks, "
            f"{traces[['system', 'task', 'session']].drop_duplicates().shape[0]} sessions")
    budgets = parse_floats(args.budgets, "--budgets")
    given = ["--missing lose"] if args.missing == "lose" else []
    with cli_remedies(given=given), ui.step(f"bootstrap ({args.n_resamples} replicates)"):
        res = elo_curves(
            traces[["system", "task", "session", "budget", "score"]], mode=args.mode, grid=args.grid,
            budgets=budgets, start=args.start, stop=args.stop,
            n_resamples=args.n_resamples, rng=args.rng, missing=args.missing, prior=args.prior,
            higher_is_better=not args.lower_is_better, within_session=args.within_session,
        )
    infl = [inflection_point(res, system=s, window=args.window, align=args.align) for s in res.systems]
    import pandas as pd

    table = res.curve[["system", "budget", "elo", "ci_low", "ci_high", "n_games", "tie_share"]]
    points = pd.DataFrame([
        {"system": i.system, "b_inf": i.b_inf, "ci_low": i.ci_low, "ci_high": i.ci_high, "status": i.status,
         "note": i.note}
        for i in infl
    ])
    ui.result({
        f"{res.mode}-Elo per budget (anchor: first checkpoint = 1000; {int(res.confidence_level * 100)}% "
        f"session-bootstrap bands, {args.n_resamples} replicates)": table,
        "scaling inflection point (last budget with local slope > 400 Elo/decade)": points,
    } if not ui.json else {"curve": table, "inflection": points})
    if args.out:
        _write(args, res, points, infl)
    return 0


def _write(args: argparse.Namespace, res, points, infl) -> None:
    from evalkit._output import atomic_output_dir
    from evalkit.plots._fonts import plot_fonts, save_png
    from evalkit.plots.budget import plot_elo_curves

    params = {k: v for k, v in vars(args).items() if k in (
        "mode", "grid", "start", "stop", "bootstrap", "seed", "missing", "prior", "window", "align",
        "lower_is_better", "budget_unit", "within_session", "budgets", "by")}
    record = {"command": "curve", "inputs": list(args.path), "parameters": params}
    with atomic_output_dir(args.out, force=args.force, raw_csv=args.raw_csv, record=record) as out:
        out.write_csv(res.curve, "curve.csv")
        out.write_csv(points, "inflection.csv")
        with plot_fonts():
            ax = plot_elo_curves(res, inflection=infl)
            missing = save_png(ax.figure, out.path / "curve.png", dpi=120, bbox_inches="tight")
        if missing:
            out.record["missing_glyphs"] = missing
    args.ui.info(f"wrote {args.out}/: curve.csv, inflection.csv, curve.png, run.json")
