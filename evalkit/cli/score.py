"""``evalkit score RUN [RUN ...]``: score single runs, with no second system to pair with.

For each system: the number of tasks and runs, the mean over tasks with se = sd / sqrt(n) and an
interval (Wilson for one pass/fail run per task, t or CR1 clustered otherwise), pass@k and pass^k
when runs repeat, what the runs spent (tokens, cost, time, where the logs record them), and the
harness's own headline beside it (Inspect's accuracy and stderr, lm-eval's value ± stderr,
SWE-bench's resolved count). ``evalkit summary`` on a harness log and ``evalkit compare`` with one
RUN print the same table.
"""

from __future__ import annotations

import argparse

from evalkit.cli._common import add_common

__all__ = ["register", "run", "score_logs"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``score`` sub-command."""
    from evalkit.cli._logs import add_log_arguments
    from evalkit.cli._runs import add_score_arguments

    p = subparsers.add_parser(
        "score",
        help="score single runs: mean over tasks, SE and interval, pass@k, tokens/cost/time (no pairing)",
        description=(
            "Each RUN is a file, folder or glob of harness logs (Inspect .eval/.json, SWE-agent .traj or "
            "mini-swe-agent .traj.json with their SWE-bench verdicts, SWE-bench verdict files alone, lm-eval "
            "samples_*.jsonl, MT-bench single-answer judgments, outcome tables system,task[,run],score, JSONL "
            "events). Prints one row per system: tasks, runs per task, the mean over tasks with se = sd/sqrt(n) "
            "(Inspect's stderr, lm-eval's acc_stderr) and an interval (Wilson for one pass/fail run per task, else "
            "t or CR1 clustered), pass@k/pass^k when runs repeat, the tokens, cost and time spent, and the "
            "harness's own headline next to it."
        ),
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="logs of one system each (file, folder or glob)")
    add_score_arguments(p)
    from evalkit.cli._cost import add_cost_arguments

    add_cost_arguments(p, resampling=True)
    add_log_arguments(p)
    p.add_argument("--out", default=None, metavar="FILE", help="also write the score table to FILE.csv or FILE.md")
    add_common(p, writes=True)
    p.set_defaults(func=run)


def score_logs(args: argparse.Namespace) -> int:
    """Read the RUNs and print their scores (``score``, and ``summary`` on harness logs)."""
    from evalkit.cli._logs import cli_remedies
    from evalkit.cli._runs import apply_cluster, print_scores, read_runs

    with cli_remedies(getattr(args, "_options", None)):
        outcomes, read, order = read_runs(args, list(args.runs), by=getattr(args, "by", None),
                                          cluster=getattr(args, "cluster", None))
        cluster = apply_cluster(args, outcomes)
        files = ", ".join(f"{n} {fmt}" for fmt, n in sorted(read["files"].items()))
        args.ui.info(f"read {len(outcomes)} runs of tasks by {outcomes['system'].nunique()} system(s) from {files}")
        from evalkit.cli._cost import cost_result, cost_tables

        outcomes, cost = cost_result(args, outcomes)  # --prices, score per token and per dollar (--ratio-interval)
        for note in cost.notes if cost is not None else ():
            args.ui.warn(note)
        res = print_scores(args, outcomes, read, order, cluster=cluster,
                           after=cost_tables(cost, order) if cost is not None else None)
    if getattr(args, "out", None):
        from evalkit.cli.summary import write_file

        path = write_file(res.table, args.out, force=args.force, raw_csv=args.raw_csv)
        args.ui.info(f"wrote {path}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit score``."""
    if args.out:
        from evalkit.cli.summary import write_file

        write_file(None, args.out, force=args.force, check_only=True)
    return score_logs(args)
