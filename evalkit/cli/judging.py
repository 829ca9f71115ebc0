"""Judge-related options and warnings of ``evalkit rate`` / ``summary`` (kept here so those commands change little).

``rate --adjust-position`` prints the position-adjusted leaderboard; ``rate --by COLUMN`` prints
one leaderboard per category with the multiplicity correction named; ``rate --style A:B`` /
``--style-diff COL`` prints the style-controlled leaderboard and the style coefficients. Both commands
warn on stderr about position bias, judges rating themselves and cluster intervals on fewer than ~30 clusters.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from evalkit._escape import ColumnTable
    from evalkit.ratings.bt import CovKind

__all__ = ["add_judge_flags", "add_rate_flags", "diagnostic_rows", "print_warnings", "rate_variant"]

#: The row-level variants (``--adjust-position``, ``--by``, ``--style``) read the rows themselves, up to this many.
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
    p.add_argument("--style", action="append", default=[], metavar="A_COL:B_COL",
                   help="style control (LMArena): the per-answer columns A_COL (player_a's answer) and B_COL "
                        "(player_b's), e.g. lengths or token counts (>= 0), become the covariate (a - b)/(a + b), "
                        "standardised over the rows (mean 0, SD 1); repeat for more covariates. Prints the "
                        "style-controlled leaderboard (sandwich or --cluster intervals) next to the plain Elo, "
                        "and the style coefficients. Formats: arena, left_right, canonical")
    p.add_argument("--style-diff", action="append", default=[], metavar="COL",
                   help="style control with a column already holding an a - b difference, used as is; repeatable")
    add_judge_flags(p)


def diagnostic_rows(args: argparse.Namespace, report) -> pd.DataFrame:
    """The comparison rows, for ``--adjust-position``, ``--by`` and ``--style`` (row-level models).

    The ratings come from counts reduced where the rows live; only these variants read the
    rows, and only up to :data:`DIAGNOSTIC_MAX_ROWS` rows. The ``--style`` / ``--style-diff`` columns
    are kept from the raw rows.
    """
    from evalkit.io import read_comparisons

    if report.rows_read > DIAGNOSTIC_MAX_ROWS:
        raise ValueError(f"--adjust-position, --by and --style fit row-level models; the input has {report.rows_read:,} "
                         f"rows (more than {DIAGNOSTIC_MAX_ROWS:,}). Rate a sample, or drop the flag.")
    source = args.path[0] if len(args.path) == 1 else args.path
    opts = {k: getattr(args, k) for k in ("baseline", "model_name_from", "encoding") if getattr(args, k, None)}
    keep = {c: flag for flag, cols in _style_flags(args) for c in cols}
    if keep:
        opts["keep_columns"] = keep
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
        from evalkit._cluster import cluster_warning

        note = cluster_warning(int(counts.n_clusters), f"The cluster-robust interval over {cluster!r}", emit=False)
        lines += [f"warning: {note}"] if note else []
    from evalkit._escape import label

    for line in lines:  # names from the data (the judge, a contestant): escaped, one line each
        print(label(line), file=sys.stderr)


def _style_flags(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """``(flag as typed, the columns it reads)`` for every ``--style A:B`` and ``--style-diff COL``."""
    out = []
    for value in getattr(args, "style", None) or []:
        cols = value.split(":")
        if len(cols) != 2 or not all(cols):
            raise ValueError(f"--style takes the two per-answer columns as A_COL:B_COL (e.g. --style len_a:len_b); "
                             f"got {value!r}.")
        out.append((f"--style {value}", cols))
    return out + [(f"--style-diff {c}", [c]) for c in getattr(args, "style_diff", None) or []]


def _wald_only(args: argparse.Namespace, n_boot: int, flag: str) -> None:
    """Refuse the options a covariate-controlled fit (centred Wald intervals, ties as half) does not take."""
    clash = [f for f, on in (("--anchor", args.anchor), ("--bootstrap", n_boot), ("--l2", args.l2),
                             ("--ties " + str(args.ties), args.ties != "half")) if on]
    if clash:
        raise ValueError(f"{flag} gives centred Wald intervals with ties as half a win; it cannot be "
                         f"combined with {', '.join(clash)}.")


def write_tables(out, tables: Mapping[str, pd.DataFrame | ColumnTable]) -> list[str]:
    """``NAME.csv`` and ``NAME.md`` for each table into an open :func:`~evalkit._output.atomic_output_dir`;
    returns the file names."""
    from evalkit._escape import markdown_table

    names = []
    for name, table in tables.items():
        out.write_csv(table, f"{name}.csv")
        (out.path / f"{name}.md").write_text(markdown_table(table, floatfmt=".4g"), encoding="utf-8")
        names += [f"{name}.csv", f"{name}.md"]
    return names


def rate_parameters(args: argparse.Namespace) -> dict:
    """The options of ``evalkit rate`` that shape its numbers, for ``run.json``."""
    return {k: v for k, v in vars(args).items() if k in (
        "format", "ties", "tie_policy", "anchor", "l2", "interval", "n_resamples", "cluster", "cluster_correction", "rng",
        "confidence_level",
        "engine", "adjust_position", "by", "correction", "style", "style_diff")}


def _write_variant(args: argparse.Namespace, tables: dict[str, pd.DataFrame], variant: str) -> None:
    """The ``--out`` folder of a row-level variant: its tables and ``run.json``, built atomically."""
    from evalkit._output import atomic_output_dir

    inputs = getattr(args, "inputs", None)
    record = {"command": "rate", "variant": variant, "inputs": (list(inputs.names.values()) if inputs else [])
              or [str(p) for p in args.path], "parameters": rate_parameters(args)}
    with atomic_output_dir(args.out, force=getattr(args, "force", False), raw_csv=getattr(args, "raw_csv", False),
                           record=record) as out:
        names = write_tables(out, tables)
    print(f"wrote {args.out}/: {', '.join(names)}, run.json", file=sys.stderr)


def _rate_style(args: argparse.Namespace, frame: pd.DataFrame, *, base: float) -> None:
    """``--style`` / ``--style-diff``: style-controlled leaderboard, coefficients and how far models moved."""
    from evalkit.ratings.style_board import StyleSpec, style_leaderboard

    flags = _style_flags(args)
    spec = StyleSpec(pairs=tuple((c[0], c[1]) for _, c in flags if len(c) == 2),
                     diffs=tuple(c[0] for _, c in flags if len(c) == 1))
    res = style_leaderboard(frame, spec, base=base, confidence_level=args.confidence_level,
                            kind="hessian" if args.interval == "hessian" else "sandwich", cluster=args.cluster,
                            cr1=args.cluster_correction == "CR1", position=bool(args.adjust_position))
    ui = args.ui
    ui.result({
        f"Style-controlled Bradley-Terry Elo leaderboard (ties: half; intervals: {res.table.attrs['interval']}; "
        "elo_plain, rank_plain: without style control; elo_change = elo - elo_plain)": res.table,
        f"Style coefficients (log-odds per unit of each covariate; {res.fit.cov_kind}; "
        "a:b = standardised (a - b)/(a + b))": res.coefficients,
    } if not ui.json else {"leaderboard": res.table, "style_coefficients": res.coefficients})
    note = res.moved()
    print("\n" + note) if not ui.json else ui.info(note)
    if args.out:
        _write_variant(args, {"leaderboard": res.table, "style_coefficients": res.coefficients},
                       "style " + " ".join(f for f, _ in flags))


def rate_variant(args: argparse.Namespace, frame: pd.DataFrame, *, base: float, n_boot: int) -> bool:
    """Run ``--style`` / ``--adjust-position`` / ``--by``; return False when none was asked for."""
    style = bool(_style_flags(args))
    if not style and not getattr(args, "adjust_position", False) and getattr(args, "by", None) is None:
        return False
    if style:
        if args.by is not None:
            raise ValueError("--style / --style-diff cannot be combined with --by; rate one category at a time.")
        _wald_only(args, n_boot, "--style")
        _rate_style(args, frame, base=base)
        return True
    if args.by is not None:
        from evalkit.ratings.categories import category_leaderboards

        opts = {"ties": args.ties, "l2": args.l2, "cluster": args.cluster, "rng": args.rng,
                "interval": "bootstrap" if n_boot else args.interval, "n_boot": max(n_boot, 1), "base": base}
        table = category_leaderboards(frame, args.by, confidence_level=args.confidence_level, correction=args.correction, **opts)
        head = [f"\nBradley-Terry Elo per {args.by!r} ({table.attrs['interval']})\n"
                f"Multiplicity: {table.attrs['correction']}.\n"]
        head += [f"{args.by} = {name}: no ratings ({reason})" for name, reason in table.attrs["skipped"].items()]
    else:
        from evalkit.ratings.position import position_leaderboard

        _wald_only(args, n_boot, "--adjust-position")
        kind: CovKind = "hessian" if args.interval == "hessian" else "sandwich"
        table = position_leaderboard(frame, base=base, confidence_level=args.confidence_level, kind=kind, cluster=args.cluster)
        head = [f"\nPosition-adjusted Bradley-Terry Elo leaderboard (ties: half; intervals: {table.attrs['interval']})\n"
                f"Position: {table.attrs['position']}\n"]
    if args.ui.json:  # --json: the table as JSON on stdout, the headings on stderr
        for line in head:
            args.ui.info(line.strip())
        args.ui.result(table)
    else:
        from evalkit.io.write import to_markdown

        print("\n".join(head))
        print(to_markdown(table, floatfmt=".4g"))
    if args.out:  # one folder, built atomically like every other --out (evalkit._output)
        _write_variant(args, {"leaderboard": table}, "by " + args.by if args.by else "adjust-position")
    return True
