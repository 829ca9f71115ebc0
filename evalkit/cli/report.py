"""``evalkit report``: comparison logs and/or per-item scores in, a report folder out."""

from __future__ import annotations

import argparse
import sys

from evalkit.io import FORMATS
from evalkit.stats import PAIRED_TESTS, TIE_POLICIES
from evalkit.stats.multiplicity import MULTIPLICITY_METHODS

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` sub-command."""
    p = subparsers.add_parser(
        "report",
        help="write a Markdown + HTML report (leaderboard, win rates, significance tests)",
        description=(
            "Read pairwise judgments and/or a per-item score table and write a self-contained report "
            "folder: report.md, report.html, figures/*.png, tables/*.csv and run.json (inputs, "
            "parameters, seed, version). Scores with 'task' and 'trial' columns get the trial- vs "
            "task-level comparison; scores with 'item' get paired tests between systems."
        ),
    )
    p.add_argument("comparisons", nargs="*", help="judgment log file(s) or a directory (optional)")
    p.add_argument("--scores", default=None,
                   help="per-item score table (CSV/JSONL/Parquet) with system, score and item or task+trial")
    p.add_argument("--traces", default=None,
                   help="session table (system, task, session, budget, score): adds the Elo-per-budget sections "
                        "and, without --scores, tests each session's best score at the budget")
    p.add_argument("--grid", type=float, default=1.5, help="checkpoint ratio of the Elo-per-budget curves (1.5)")
    p.add_argument("--curve-bootstrap", type=int, default=200,
                   help="session-bootstrap replicates of the Elo-per-budget curves (default 200)")
    p.add_argument("--score-col", action="append", default=[], metavar="NAME=COLUMN",
                   help="map a score-table column, e.g. --score-col system=model (repeatable)")
    p.add_argument("--format", choices=[f for f in FORMATS if f != "columns"], default=None,
                   help="format of the judgment log (default: detected)")
    p.add_argument("--out", default="evalkit-report", help="report folder (default: ./evalkit-report)")
    p.add_argument("--title", default="evalkit report")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (default 0)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of intervals")
    p.add_argument("--adjust", choices=list(MULTIPLICITY_METHODS), default="holm",
                   help="multiplicity correction of the pairwise family (default holm)")
    p.add_argument("--test", choices=list(PAIRED_TESTS), default="paired_t", help="paired test between systems")
    p.add_argument("--pairs", choices=["all", "adjacent"], default=None,
                   help="pairs to test (default: all up to 8 systems, else neighbours by mean score)")
    p.add_argument("--unit-pair", nargs=2, default=None, metavar=("A", "B"),
                   help="systems of the trial- vs task-level section")
    p.add_argument("--ties", choices=list(TIE_POLICIES), default="drop", help="tie policy of sign tests")
    p.add_argument("--n-boot", type=int, default=200,
                   help="bootstrap replicates of leaderboard intervals (0: sandwich intervals)")
    from evalkit.cli.judging import add_judge_flags

    add_judge_flags(p)
    p.set_defaults(func=run)


def _mapping(pairs: list[str]) -> dict[str, str]:
    out = {}
    for spec in pairs:
        if "=" not in spec:
            raise ValueError(f"--score-col must look like NAME=COLUMN (e.g. system=model); got {spec!r}.")
        k, v = spec.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit report``."""
    from evalkit.report import write_report

    if not args.comparisons and not args.scores and not args.traces:
        raise ValueError("give a judgment log (PATH), --scores TABLE and/or --traces SESSIONS.")
    comparisons = None
    if args.comparisons:
        comparisons = args.comparisons[0] if len(args.comparisons) == 1 else args.comparisons
    out = write_report(
        args.out, comparisons=comparisons, scores=args.scores, traces=args.traces,
        curve_options={"grid": args.grid, "bootstrap": args.curve_bootstrap}, format=args.format,
        score_columns=_mapping(args.score_col), title=args.title, seed=args.seed, alpha=args.alpha,
        confidence_level=args.confidence, adjust=args.adjust, test=args.test, pairs=args.pairs,
        unit_pair=tuple(args.unit_pair) if args.unit_pair else None, ties=args.ties, n_boot=args.n_boot,
        params={"judge": args.judge} if args.judge else None,
    )
    print(f"wrote {out / 'report.html'} and {out / 'report.md'} (run record: {out / 'run.json'})", file=sys.stderr)
    return 0
