"""Judge-related options and warnings of ``evalkit rate`` / ``summary`` (kept here so those commands change little).

``rate --adjust-position`` prints the position-adjusted leaderboard; ``rate --by COLUMN`` prints
one leaderboard per category with the multiplicity correction named; both commands warn on stderr
about position bias, judges rating themselves and cluster intervals on fewer than ~30 clusters.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["add_judge_flags", "add_rate_flags", "diagnostic_rows", "print_warnings", "rate_variant"]

#: The row-level variants (``--adjust-position``, ``--by``) read the rows themselves, up to this many.
DIAGNOSTIC_MAX_ROWS = 2_000_000


def add_judge_flags(p: argparse.ArgumentParser) -> None:
    """``--judge`` (for logs without a judge column), if the command does not have it yet."""
    if not any("--judge" in a.option_strings for a in p._actions):
        p.add_argument("--judge", default=None,
                       help="judge name for files without a judge column (default: from the file name)")


def add_rate_flags(p: argparse.ArgumentParser) -> None:
    """``--adjust-position``, ``--by COLUMN``, ``--correction`` and ``--judge`` of ``evalkit rate``."""
    p.add_argument("--adjust-position", action="store_true",
                   help="position-adjusted Bradley-Terry: the left / first answer's advantage as a covariate, "
                        "ratings that do not depend on the side a model was shown on")
    p.add_argument("--by", default=None, metavar="COLUMN",
                   help="one leaderboard per value of COLUMN (e.g. category), intervals corrected across them")
    p.add_argument("--correction", choices=["bonferroni", "sidak", "none"], default="bonferroni",
                   help="multiplicity correction across --by categories (default bonferroni)")
    add_judge_flags(p)


def diagnostic_rows(args: argparse.Namespace, report) -> pd.DataFrame:
    """The comparison rows, for ``--adjust-position`` and ``--by`` (row-level models).

    The ratings come from counts reduced where the rows live; only these variants read the
    rows, and only up to :data:`DIAGNOSTIC_MAX_ROWS` rows.
    """
    from evalkit.io import read_comparisons

    if report.rows_read > DIAGNOSTIC_MAX_ROWS:
        raise ValueError(f"--adjust-position and --by fit row-level models; the input has {report.rows_read:,} "
                         f"rows (more than {DIAGNOSTIC_MAX_ROWS:,}). Rate a sample, or drop the flag.")
    source = args.path[0] if len(args.path) == 1 else args.path
    opts = {k: getattr(args, k) for k in ("baseline", "model_name_from", "encoding") if getattr(args, k, None)}
    frame, _ = read_comparisons(source, format=getattr(args, "format", None), judge=getattr(args, "judge", None),
                                **opts)
    return frame


def print_warnings(counts, fmt: str | None, args: argparse.Namespace) -> None:
    """Position-bias, self-preference and small-cluster warnings on stderr, from the counts alone.

    The judge is the ``judge`` cluster when ``--cluster judge`` is given, else ``--judge`` or the
    name of the first file (``gpt3-comparisons.csv`` -> ``gpt-3.5-turbo``); ``evalkit report``
    tests every judge of a multi-judge file separately.
    """
    from evalkit.stats.judge_warnings import count_warnings, judge_from_source

    judge = getattr(args, "judge", None) or judge_from_source(str(args.path[0]))
    lines = count_warnings(counts, fmt, judge=judge)
    cluster = getattr(args, "cluster", None)
    if cluster is not None and counts.n_clusters is not None:
        from evalkit.report.judge import cluster_warning

        note = cluster_warning(int(counts.n_clusters), f"The cluster-robust interval over {cluster!r}", emit=False)
        lines += [f"warning: {note}"] if note else []
    for line in lines:
        print(line, file=sys.stderr)


def rate_variant(args: argparse.Namespace, frame: pd.DataFrame, *, base: float, n_boot: int) -> bool:
    """Run ``--adjust-position`` / ``--by``; return False when neither was asked for."""
    if not getattr(args, "adjust_position", False) and getattr(args, "by", None) is None:
        return False
    if args.by is not None:
        from evalkit.ratings.categories import category_leaderboards

        opts = {"ties": args.ties, "l2": args.l2, "cluster": args.cluster, "rng": args.seed,
                "interval": "bootstrap" if n_boot else args.interval, "n_boot": max(n_boot, 1), "base": base}
        table = category_leaderboards(frame, args.by, level=args.level, correction=args.correction, **opts)
        print(f"\nBradley-Terry Elo per {args.by!r} ({table.attrs['interval']})\n"
              f"Multiplicity: {table.attrs['correction']}.\n")
        for name, reason in table.attrs["skipped"].items():
            print(f"{args.by} = {name}: no ratings ({reason})")
    else:
        from evalkit.ratings.position import position_leaderboard

        clash = [f for f, on in (("--anchor", args.anchor), ("--bootstrap", n_boot), ("--l2", args.l2),
                                 ("--ties " + str(args.ties), args.ties != "half")) if on]
        if clash:
            raise ValueError(f"--adjust-position gives centred Wald intervals with ties as half a win; it cannot be "
                             f"combined with {', '.join(clash)}.")

        kind = "hessian" if args.interval == "hessian" else "sandwich"
        table = position_leaderboard(frame, base=base, level=args.level, kind=kind, cluster=args.cluster)
        print(f"\nPosition-adjusted Bradley-Terry Elo leaderboard (ties: half; intervals: {table.attrs['interval']})\n"
              f"Position: {table.attrs['position']}\n")
    from evalkit.io.write import to_markdown

    print(to_markdown(table, floatfmt=".4g"))
    if args.out:  # one folder, built atomically like every other --out (evalkit._output)
        from evalkit._escape import markdown_table
        from evalkit._output import atomic_output_dir

        record = {"command": "rate", "variant": "by " + args.by if args.by else "adjust-position"}
        with atomic_output_dir(args.out, force=getattr(args, "force", False), raw_csv=getattr(args, "raw_csv", False),
                               record=record) as out:
            out.write_csv(table, "leaderboard.csv")
            (out.path / "leaderboard.md").write_text(markdown_table(table, floatfmt=".4g"), encoding="utf-8")
        print(f"wrote {args.out}/: leaderboard.csv, leaderboard.md, run.json", file=sys.stderr)
    return True
