"""``evalkit summary PATH``: read a judgment log and print the per-model summary."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.rate import add_engine_arguments, aggregate_for_cli
from evalkit.io import FORMATS
from evalkit.io.write import to_markdown, write_table
from evalkit.summary import alpaca_eval_summary, summarize

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``summary`` sub-command."""
    p = subparsers.add_parser(
        "summary",
        help="per-model wins, losses, ties and win rate of a comparison log",
        description=(
            "Read pairwise judgments (Chatbot Arena, AlpacaEval, MT-bench, left/right/winner "
            "tables, canonical CSV/JSONL/Parquet), print what was read and dropped, and the "
            "per-model summary. AlpacaEval data get AlpacaEval's leaderboard columns."
        ),
    )
    p.add_argument("path", nargs="+", help="file(s) or a directory of judgment logs")
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit summary``."""
    source = args.path[0] if len(args.path) == 1 else args.path
    counts, report = aggregate_for_cli(source, args, format=args.format, baseline=args.baseline,
                                       judge=args.judge, model_name_from=args.model_name_from)
    print(report.to_text(), file=sys.stderr)
    if report.format.startswith("alpaca_eval"):
        table = alpaca_eval_summary(counts, baseline=args.baseline).reset_index()
        title = "AlpacaEval win rate against the baseline (percent)"
    else:
        table = summarize(counts)
        title = "per-model summary (win rate with ties as half)"
    print(f"\n{title}\n")
    print(to_markdown(table, floatfmt=".4f"))
    from evalkit.cli.judging import print_warnings

    print_warnings(counts, report.format, args)
    if args.out:
        path = write_table(table, args.out)
        print(f"wrote {path}", file=sys.stderr)
    return 0
