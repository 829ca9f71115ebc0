"""``evalkit summary PATH``: read a judgment log and print the per-model summary."""

from __future__ import annotations

import argparse

from evalkit.cli._common import add_common
from evalkit.cli.rate import add_engine_arguments, aggregate_for_cli
from evalkit.io.formats import FORMATS

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``summary`` sub-command."""
    p = subparsers.add_parser(
        "summary",
        help="per-model wins, losses, ties and win rate of a comparison log",
        description=(
            "Read pairwise judgments (Chatbot Arena, AlpacaEval, MT-bench, left/right/winner "
            "tables, canonical CSV/JSONL/Parquet), print what was read and dropped, and the "
            "per-model summary. AlpacaEval data get AlpacaEval's leaderboard columns. Harness logs "
            "of runs (Inspect, SWE-agent/mini-swe-agent with verdicts, SWE-bench verdict files, lm-eval, "
            "MT-bench single-answer) get the single-run scores of `evalkit score` instead."
        ),
    )
    p.add_argument("path", nargs="+", help="file(s) or a directory of judgment logs; - reads stdin")
    p.add_argument("--format", choices=[f for f in FORMATS if f != "columns"], default=None,
                   help="input format (default: detected from the columns)")
    p.add_argument("--baseline", default=None,
                   help="AlpacaEval baseline (default: from the data or the file name)")
    p.add_argument("--model-name-from", choices=["generator_2", "directory"],
                   default="generator_2",
                   help="raw AlpacaEval annotations: name the model by generator_2 or by the "
                        "results/<model>/<annotator>/ directory")
    p.add_argument("--judge", default=None, help="judge name for files without a judge column")
    p.add_argument("--out", default=None, help="also write the table to FILE.csv or FILE.md")
    add_engine_arguments(p)
    from evalkit.cli._cost import add_cost_arguments

    add_cost_arguments(p, resampling=True)  # harness logs of runs only
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit summary``."""
    from evalkit.engine.aggregate import aggregate_comparisons
    from evalkit.summary import SummaryTable, alpaca_eval_summary, summary_columns

    ui, inputs = args.ui, args.inputs
    if args.out:
        write_file(None, args.out, force=args.force, check_only=True)
    if "-" not in args.path and _harness(args):
        return _score_harness_logs(args)
    given = [f for f, on in (("--prices", args.prices), ("--ratio-interval", args.ratio_interval != "delta"),
                             ("--n-resamples", args.n_resamples is not None), ("--rng", args.rng is not None)) if on]
    if given:
        flag = given[0]
        raise ValueError(f"{flag} applies to harness logs of runs (tokens and cost per task); {args.path[0]} holds "
                         "pairwise judgments, which record no spend.")
    # stdin spooled, for every reader (aggregate_comparisons takes encoding= like read_comparisons)
    args.path = [inputs.path(p, reader=aggregate_comparisons) for p in args.path]
    source = args.path[0] if len(args.path) == 1 else args.path
    counts, report = aggregate_for_cli(source, args, format=args.format, baseline=args.baseline,
                                       judge=args.judge, model_name_from=args.model_name_from,
                                       **inputs.kwargs(aggregate_comparisons))
    ui.close_bar()
    ui.info(inputs.display(report.to_text()))
    if report.format.startswith("alpaca_eval"):
        table = alpaca_eval_summary(counts, baseline=args.baseline).reset_index()
        title = "AlpacaEval win rate against the baseline (percent)"
    else:  # numpy columns: pandas only for --out or --json
        table = SummaryTable(summary_columns(counts))
        title = "per-model summary (win rate with ties as half)"
    ui.result(table, title=title, floatfmt=".4f")
    from evalkit.cli.judging import print_warnings

    print_warnings(counts, report.format, args)
    if args.out:
        frame = table.to_frame() if isinstance(table, SummaryTable) else table
        path = write_file(frame, args.out, force=args.force, raw_csv=args.raw_csv)
        ui.info(f"wrote {path}")
    return 0


def _harness(args: argparse.Namespace) -> bool:
    """Whether the inputs are harness logs of runs (scored as `evalkit score` does), not judgment logs."""
    from evalkit.cli._runs import is_harness_log

    hits = [p for p in args.path if is_harness_log([p])]
    if hits and len(hits) < len(args.path):
        raise ValueError(f"summary got harness logs ({hits[0]}) and judgment logs together; give one kind: "
                         "`evalkit score` reads harness logs, `evalkit summary` judgment logs.")
    return bool(hits)


def _score_harness_logs(args: argparse.Namespace) -> int:
    """``summary`` on harness logs: the single-run scores of ``evalkit score`` (one table, no pairing)."""
    from evalkit.cli.score import score_logs

    defaults: dict[str, object] = {"by": None, "names": None, "cluster": None, "cluster_regex": None, "confidence_level": 0.95,
                "pass_threshold": None, "budget_unit": "tokens", "resolved": None, "resolved_ids": None, "map": [],
                "scorer": None, "metric": None, "filter": None, "include_scorer_calls": False}
    for k, v in defaults.items():
        if not hasattr(args, k):
            setattr(args, k, v)
    args.runs = list(args.path)
    out, args.out = args.out, None
    code = score_logs(args)
    args.out = out
    if out:
        raise ValueError("summary --out writes judgment-log summaries; for harness logs use `evalkit score RUN --out "
                         "FILE` (the table above was printed).")
    return code


def write_file(table, out: str, *, force: bool, raw_csv: bool = False, check_only: bool = False):
    """Write ``table`` to ``out`` (``.csv`` or ``.md``) atomically; refuse an existing file
    without ``--force``. With ``check_only``, only validate ``out``."""
    from pathlib import Path

    from evalkit._escape import markdown_table
    from evalkit._output import atomic_file, write_csv

    path = Path(out)
    suffix = path.suffix.lower()
    if out == "-":
        raise ValueError("--out - is not supported: the table goes to stdout already (--json for JSON).")
    if suffix not in (".csv", ".md", ".markdown"):
        raise ValueError(f"--out must end in .csv or .md; got {path.name!r}.")
    if path.exists() and not force:
        raise ValueError(f"--out {out!r} exists; pass --force to replace it.")
    if check_only:
        return path
    with atomic_file(path, force=True) as tmp:
        if suffix == ".csv":
            write_csv(table, tmp, raw=raw_csv)
        else:
            tmp.write_text(markdown_table(table), encoding="utf-8")
    return path
