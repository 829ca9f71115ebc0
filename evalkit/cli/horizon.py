"""``evalkit horizon RUNS|LOGS``: METR's time horizon (p50, p80, any q) with hierarchical bootstrap intervals."""

from __future__ import annotations

import argparse
from typing import Any

from evalkit.cli._common import add_common

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``horizon`` sub-command."""
    p = subparsers.add_parser(
        "horizon",
        help="METR's time horizon: the task length (human minutes) an agent completes with probability q",
        description=(
            "Fit METR's time-horizon model to runs: per agent, a weighted logistic regression of success on "
            "log2(human minutes) with an L2 penalty on the slope, solved exactly; report p50 and p80 (any q, "
            "--q) with hierarchical bootstrap intervals (task family -> task -> run, one resample shared by all "
            "agents), the slope, warnings on extrapolation and thin agents, and with --dates the doubling time. "
            "Input: METR's runs file (all_runs.jsonl) or any run table (agent, task, score[, family, minutes]), "
            "or agent logs with --minutes FILE giving each task's human minutes."
        ),
    )
    p.add_argument("path", nargs="+", help="runs table(s) (CSV/JSONL/Parquet, METR's all_runs.jsonl) or agent logs")
    p.add_argument("--minutes", default=None, metavar="FILE",
                   help="task -> human minutes (and family): a task,minutes[,family] table or METR's runs file")
    p.add_argument("--weights", choices=["invsqrt", "equal", "none"], default="invsqrt",
                   help="METR's task weights: invsqrt (default: 1/sqrt(tasks in family), runs of a task share it), "
                        "equal (each task the same), none (each run 1)")
    p.add_argument("--regularization", type=float, default=0.1,
                   help="L2 penalty on the slope, sklearn's 1/C (METR's headline setting 0.1)")
    p.add_argument("--q", default="0.5,0.8", metavar="Q1,Q2,...",
                   help="success probabilities of the horizons (default 0.5,0.8: p50 and p80)")
    p.add_argument("--levels", default="family,task,run", metavar="L1,L2,...",
                   help="bootstrap levels, outermost first (default family,task,run)")
    p.add_argument("--n-resamples", type=int, default=1000, help="bootstrap replicates (default 1000; 0: none)")
    p.add_argument("--confidence-level", type=float, default=0.95,
                   help="level of the percentile intervals (default 0.95; METR plots 0.8)")
    p.add_argument("--rng", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--dates", default=None, metavar="FILE",
                   help="release dates (agent,release_date table): adds the doubling time of p50")
    p.add_argument("--trend-rule", choices=["clip", "metr"], default="clip",
                   help="replicate horizons below 1e-3 min in the trend: clip them (default, as the point fit does) "
                        "or leave them out and drop non-positive doubling times (METR's plotting code)")
    p.add_argument("--min-tasks", type=int, default=10, help="flag agents with fewer tasks (default 10)")
    p.add_argument("--plot", default=None, metavar="FILE.png",
                   help="write the success-vs-minutes figure with the fitted curves (.png, .svg, .pdf)")
    p.add_argument("--trend-plot", default=None, metavar="FILE.png",
                   help="write the horizon-vs-date figure (log axis; needs --dates)")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the table to FILE.csv or FILE.md")
    p.add_argument("--by", default="system", metavar="COLUMN",
                   help="logs: the column that names an agent (default system)")
    from evalkit.cli._logs import add_log_arguments

    add_log_arguments(p)
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def _floats(text: str, flag: str) -> list[float]:
    from evalkit.cli._logs import parse_floats

    return parse_floats(text, flag) or []


def _read(args: argparse.Namespace) -> Any:
    from evalkit.cli._logs import looks_like_logs, parse_mapping, read_log_inputs
    from evalkit.metrics._read import attach_minutes, read_horizon_runs, read_minutes

    mapping = parse_mapping(args.map, "--map") or None
    paths = [args.inputs.path(p) for p in args.path]
    if not looks_like_logs(paths, mapping) or _is_table(paths):
        return read_horizon_runs(paths, minutes=args.minutes, columns=mapping, encoding=args.inputs.encoding)
    if args.minutes is None:
        raise ValueError("Agent logs do not say how long each task takes a human: give --minutes FILE (a "
                         "task,minutes[,family] table, or METR's runs file).")
    from evalkit.io.logs import session_outcomes

    traces = read_log_inputs(args, paths, metadata=[args.by] if args.by not in ("system", "input") else [])
    outcomes = session_outcomes(traces, by=args.by)
    if args.by not in outcomes.columns:
        raise ValueError(f"--by {args.by!r} names no column of the logs; they have {list(outcomes.columns)}.")
    runs = outcomes.rename(columns={args.by: "agent"})[["agent", "task", "score"]].dropna(subset=["score"])
    return attach_minutes(runs, read_minutes(args.minutes, encoding=args.inputs.encoding), source=args.minutes)


def _is_table(paths: list[str]) -> bool:
    """A single .csv/.tsv/.parquet/.jsonl(.gz) file whose first record looks like a run table."""
    from pathlib import Path

    if len(paths) != 1 or not Path(paths[0]).is_file():
        return False
    name = Path(paths[0]).name.lower()
    return name.endswith((".csv", ".csv.gz", ".tsv", ".parquet", ".jsonl.gz", ".json.gz")) or (
        name.endswith(".jsonl") and _first_record_has(paths[0], ("human_minutes", "task_id", "minutes", "alias")))


def _first_record_has(path: str, keys: tuple[str, ...]) -> bool:
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = next((ln for ln in fh if ln.strip()), "")
    return any(f'"{k}"' in first for k in keys)


def read_dates(path: str, encoding: str | None = None) -> dict[str, str]:
    """``agent -> date`` from a table with an agent column and a ``release_date`` / ``date`` column,
    or METR's ``release_dates.yaml``-like JSON ``{"date": {agent: date}}``."""
    from pathlib import Path

    from evalkit.io._files import load_records

    p = Path(path)
    if p.suffix.lower() == ".json" and p.is_file():
        from evalkit.io._json import read_json

        data = read_json(p, "a release-dates file")  # bounded size and nesting; errors give line and column
        if isinstance(data, dict):
            data = data.get("date", data)
            if isinstance(data, dict):
                return {str(k): str(v) for k, v in data.items()}
    raw, _ = load_records(path, encoding=encoding)
    lower = {str(c).lower(): c for c in raw.columns}
    agent = next((lower[c] for c in ("agent", "alias", "system", "model") if c in lower), None)
    date = next((lower[c] for c in ("release_date", "date") if c in lower), None)
    if agent is None or date is None:
        raise ValueError(f"{path}: a dates file needs an agent column (agent/alias/system/model) and a date column "
                         f"(release_date/date); it has {[c for c in raw.columns if c != '_line']}.")
    out = {}
    import datetime as dt

    for a, d, line in zip(raw[agent].astype(str), raw[date], raw["_line"], strict=True):
        try:
            dt.date.fromisoformat(str(d).strip()[:10])
        except ValueError:
            raise ValueError(f"{path}, line {int(line)}, column '{date}': expected a date like 2024-06-20, found "
                             f"{d!r}.") from None
        out[a] = str(d).strip()[:10]
    return out


def _save(ax: Any, path: str, force: bool) -> None:
    from evalkit._output import atomic_file

    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix not in ("png", "svg", "pdf"):
        raise ValueError(f"--plot/--trend-plot must end in .png, .svg or .pdf; got {path!r}.")
    with atomic_file(path, force=force, flag="--plot") as tmp:
        ax.figure.savefig(tmp, format=suffix, dpi=130)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit horizon``."""
    from evalkit.cli._logs import cli_remedies
    from evalkit.metrics.horizon import time_horizon

    ui = args.ui
    for flag, value in (("--out", args.out), ("--plot", args.plot), ("--trend-plot", args.trend_plot)):
        if value:
            from pathlib import Path

            if Path(value).exists() and not args.force:
                raise ValueError(f"{flag} {value!r} exists; pass --force to replace it.")
    if args.trend_plot and not args.dates:
        raise ValueError("--trend-plot needs --dates FILE (the agents' release dates).")
    qs = _floats(args.q, "--q")
    if args.dates and 0.5 not in qs:
        qs = [0.5, *qs]
    levels = [s.strip() for s in args.levels.split(",") if s.strip()]
    with cli_remedies():
        runs = _read(args)
        dropped = runs.attrs.get("dropped")
        if dropped and dropped["runs"]:
            ui.warn(f"{dropped['runs']} run(s) of {len(dropped['tasks'])} task(s) have no minutes in --minutes and were "
                    f"dropped (e.g. {dropped['tasks'][:3]}).")
        dates = read_dates(args.dates, args.inputs.encoding) if args.dates else None
        ui.info(f"read {len(runs)} runs of {runs['agent'].nunique()} agents on {runs['task'].nunique()} tasks")
        result = time_horizon(runs, quantiles=qs, weights=args.weights, regularization=args.regularization,
                              n_resamples=args.n_resamples, confidence_level=args.confidence_level, levels=levels,
                              dates=dates, min_tasks=args.min_tasks, trend_rule=args.trend_rule, rng=args.rng, progress=ui.progress)
    ui.close_bar()
    table = _display(result)
    tables: dict[str, Any] = {f"time horizon (human minutes; {100 * result.confidence_level:g}% intervals)": table}
    if result.trend is not None:
        tr = result.trend
        import pandas as pd

        tables["trend of p50 across release dates"] = pd.DataFrame([{
            "doubling_days": tr.days, "ci_low": tr.ci[0], "ci_high": tr.ci[1], "per_year": 2 ** (tr.slope_per_year / 0.6931471805599453),
            "r_squared": tr.r_squared, "agents": len(tr.agents), "replicates_used": tr.n_used}])
    ui.result(tables)
    ui.info(result.method())
    for w in result.warnings:
        ui.warn(w)
    if result.trend is not None:
        ui.info(result.trend.sentence())
    if args.out:
        from evalkit.cli.summary import write_file

        path = write_file(result.table, args.out, force=args.force, raw_csv=args.raw_csv)
        ui.info(f"wrote {path}")
    if args.plot or args.trend_plot:
        from evalkit.plots.metrics import plot_horizon_curves, plot_horizon_trend

        if args.plot:
            _save(plot_horizon_curves(result, runs), args.plot, args.force)
            ui.info(f"wrote {args.plot}")
        if args.trend_plot and dates is not None:
            _save(plot_horizon_trend(result, dates), args.trend_plot, args.force)
            ui.info(f"wrote {args.trend_plot}")
    return 0


def _display(result: Any) -> Any:
    cols = ["agent", "n_tasks", "n_runs"]
    from evalkit.metrics.horizon import _q_name

    for q in result.quantiles:
        n = _q_name(q)
        cols += [n, f"{n}_low", f"{n}_high"]
    cols += ["slope", "warning"]
    return result.table[cols]
