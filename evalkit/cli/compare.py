"""``evalkit compare A B [C ...]``: runs of several systems on shared tasks, paired and tested;
``evalkit compare --plan``: the power table before any run."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli._choices import LazyChoices, add_lazy_choice
from evalkit.cli._flags import add_confidence_level, add_rng
from evalkit.cli._logs import add_log_arguments, cli_remedies, parse_floats, read_log_inputs

if TYPE_CHECKING:  # pandas loads when the command runs, not while its parser is built
    import pandas as pd

__all__ = ["register", "run", "read_outcomes"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` sub-command."""
    p = subparsers.add_parser(
        "compare",
        help="compare runs of systems on shared tasks: paired differences, McNemar/permutation, pass^k, flakiness",
        description=(
            "Each RUN is a file, folder or glob of one system's logs (Inspect .eval/.json, SWE-agent .traj with "
            "--resolved, lm-eval samples_*.jsonl, JSONL events with --map); or give one RUN holding several "
            "systems and split it with --by. Writes a report folder like `evalkit report`: per-task paired "
            "differences with CLT or clustered SEs, McNemar for single pass/fail runs or a sign-flip permutation "
            "test, Holm over the pairs, unmatched tasks, pass@k and pass^k, flaky tasks, run-to-run vs "
            "task-to-task variance, the unit-of-analysis section and a power plan. --plan prints the power / MDE "
            "table for a design instead (no logs needed)."
        ),
    )
    p.add_argument("runs", nargs="*", metavar="RUN", help="one system's logs: file, folder or glob (in order; "
                                                            "differences are each later RUN minus an earlier one)")
    p.add_argument("--by", default=None, metavar="COLUMN",
                   help="split the logs into systems by this column instead of by RUN: 'system' (as logged), "
                        "'epoch', or a metadata field")
    p.add_argument("--names", default=None, metavar="A,B,...", help="system names for the RUNs (default: their names)")
    p.add_argument("--baseline", default=None, help="compare every system with this one (default: all pairs)")
    p.add_argument("--cluster", default=None, metavar="FIELD",
                   help="task cluster for the clustered SE (a sample metadata field, doc field or event field)")
    p.add_argument("--cluster-regex", default=None, metavar="REGEX",
                   help="task cluster from the task id: the first group of REGEX, e.g. '^(.+)-[0-9]+$' for "
                        "SWE-bench repositories")
    add_lazy_choice(p, "--test", choices=LazyChoices("evalkit.stats.runs", "RUN_TESTS"), default="auto",
                   help="auto (default): McNemar for one pass/fail run per task, else sign-flip permutation")
    add_lazy_choice(p, "--adjust", choices=LazyChoices("evalkit.stats.multiplicity", "MULTIPLICITY_METHODS"), default="holm", help="over the pairs (holm)")
    p.add_argument("--alpha", type=float, default=0.05)
    add_confidence_level(p, "--confidence")
    p.add_argument("--n-resamples", type=int, default=9999, help="permutation / bootstrap resamples (9999)")
    add_rng(p, "--seed", help="seed of the permutation / bootstrap resamples")
    p.add_argument("--pass-threshold", type=float, default=None, metavar="T",
                   help="reliability: a run passes when its score >= T (default: scores must be 0/1)")
    p.add_argument("--noise", type=float, default=0.05, help="per-run glitch rate of the flaky-task test (0.05)")
    p.add_argument("--k", default=None, metavar="K1,K2,...", help="k values of pass@k and pass^k (default 1,2,4,..,n)")
    plan = p.add_argument_group("power (--plan prints the table; --effect also feeds the report's plan)")
    plan.add_argument("--plan", action="store_true", help="print the power / MDE table for a design and exit")
    plan.add_argument("--tasks", type=int, default=None, help="number of tasks of the design")
    plan.add_argument("--epochs", type=int, default=1, help="runs (epochs) per task (default 1)")
    plan.add_argument("--baseline-rate", type=float, default=None, help="expected pass rate of the baseline")
    plan.add_argument("--icc", type=float, default=0.0,
                      help="intra-task correlation: share of the outcome variance that is task-to-task (default 0)")
    plan.add_argument("--discordance", type=float, default=None,
                      help="share of tasks on which two single runs disagree (McNemar; default 2p(1-p)(1-icc))")
    plan.add_argument("--effect", type=float, default=None, help="difference in pass rate to detect (e.g. 0.05)")
    plan.add_argument("--power", type=float, default=0.8)
    add_log_arguments(p)
    p.add_argument("--out", default="evalkit-compare", help="report folder (default ./evalkit-compare)")
    p.add_argument("--title", default="evalkit compare")
    from evalkit.cli._common import add_common

    add_common(p, writes=True)
    p.set_defaults(func=run)


def _plan(args: argparse.Namespace) -> int:
    from evalkit.io.write import to_markdown
    from evalkit.stats.power import cluster_design

    missing = [f for f, v in (("--tasks", args.tasks), ("--baseline-rate", args.baseline_rate)) if v is None]
    if missing:
        raise ValueError(f"--plan needs {' and '.join(missing)} (and optionally --epochs, --icc, --effect).")
    table = cluster_design(args.tasks, args.epochs, base_rate=args.baseline_rate, icc=args.icc, effect=args.effect,
                           power=args.power, alpha=args.alpha, discordance=args.discordance, noise=args.noise)
    print(f"power plan: {args.tasks} tasks x {args.epochs} run(s), baseline pass rate {args.baseline_rate:g}, "
          f"icc {args.icc:g}, alpha {args.alpha:g}, power {args.power:g}"
          + (f", effect {args.effect:g}" if args.effect is not None else "") + "\n")
    print(to_markdown(table, floatfmt=".4g"))
    print("\nmde: smallest difference in pass rate detected; tasks_needed (at --epochs runs) and runs_needed (at "
          "--tasks tasks) for --effect. 'paired tasks' assumes both systems share each task's difficulty (best "
          "case), 'independent tasks' that they share nothing (worst case). McNemar rows are the exact test's power; "
          "'flaky-task test' says how many runs per task find a task that passes half its runs.")
    return 0


def _run_names(runs: list[str], names: str | None) -> dict[str, str]:
    if names is not None:
        given = [n.strip() for n in names.split(",")]
        if len(given) != len(runs):
            raise ValueError(f"--names gives {len(given)} names for {len(runs)} RUNs.")
        return dict(zip(runs, given, strict=True))
    out = {r: (Path(r).stem if Path(r).is_file() else Path(r).name) or r for r in runs}
    return out if len(set(out.values())) == len(out) else {r: r for r in runs}


def read_outcomes(args: argparse.Namespace) -> tuple[pd.DataFrame, dict]:
    """One row per (system, task, run) with its final score, and what the reader counted."""
    from evalkit.io.logs import session_outcomes

    runs = list(args.runs)
    if len(runs) < 2 and not args.by:
        raise ValueError("compare needs two RUNs (e.g. `evalkit compare runs/a runs/b`), or one RUN holding several "
                         "systems split with --by COLUMN (e.g. --by system, --by epoch).")
    meta = tuple(c for c in (args.cluster, args.by) if c and c not in ("system", "input", "epoch"))
    traces = read_log_inputs(args, runs, metadata=meta)
    by = args.by or "input"
    if by not in traces.columns:
        extra = [c for c in traces.columns if c not in ("task", "session", "budget", "score", "source", "line")]
        raise ValueError(f"--by {by!r} names no column of the logs; they have {extra}.")
    outcomes = session_outcomes(traces, by=[c for c in (by, args.cluster) if c])
    if outcomes[by].isna().any():
        n = int(outcomes[by].isna().sum())
        raise ValueError(f"--by {by!r} is missing for {n} of {len(outcomes)} runs of tasks (no such column or sample "
                         f"metadata field there); the logs have {[c for c in traces.columns if c != 'input']}.")
    if args.by:
        outcomes["system"] = outcomes[by].astype(str)
    else:
        outcomes["system"] = outcomes["input"].map(_run_names(runs, args.names))
    if outcomes["system"].nunique() < 2:
        raise ValueError(f"The logs hold a single system ({outcomes['system'].iat[0]!r}) after --by {by}; "
                         "give two RUNs or a --by column with several values.")
    if args.cluster_regex:
        if args.cluster:
            raise ValueError("Give --cluster FIELD or --cluster-regex REGEX, not both.")
        outcomes["cluster"] = _clusters_from_ids(outcomes["task"], args.cluster_regex)
    read = {"files": traces.attrs.get("files", {}), "skipped": traces.attrs.get("skipped", []),
            "unscored": traces.attrs.get("unscored", [])}
    return outcomes, read


def _clusters_from_ids(tasks: pd.Series, regex: str) -> pd.Series:
    import re

    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise ValueError(f"--cluster-regex {regex!r} is not a regular expression: {exc}.") from None
    if pattern.groups < 1:
        raise ValueError(f"--cluster-regex {regex!r} needs a group: the cluster is the text it captures.")
    found = tasks.str.extract(pattern, expand=False)
    import pandas as pd

    found = found.iloc[:, 0] if isinstance(found, pd.DataFrame) else found
    if found.isna().any():
        bad = tasks[found.isna()]
        raise ValueError(f"--cluster-regex {regex!r} matches no cluster in {bad.nunique()} task id(s) "
                         f"(first: {bad.iat[0]!r}).")
    return found


def _natural(name: str) -> tuple[int, float, str]:
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)


def _order(outcomes: pd.DataFrame, args: argparse.Namespace) -> list[tuple[str, str]] | None:
    if args.baseline is not None:
        return None
    if args.by:
        names = sorted(dict.fromkeys(outcomes["system"]), key=_natural)
    else:  # the order of the RUNs on the command line
        names = list(dict.fromkeys(_run_names(list(args.runs), args.names).values()))
    return [(names[j], names[i]) for i in range(len(names)) for j in range(i + 1, len(names))]


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit compare``."""
    if args.plan:
        return _plan(args)
    from evalkit._output import check_out_path
    from evalkit.report import (
        ReportSpec,
        inputs_section,
        methods_section,
        unit_section,
        write_report,
    )
    from evalkit.report.compare import COMPARE_SECTIONS, compare_scores

    check_out_path(args.out, force=args.force)
    outcomes, read = read_outcomes(args)
    if args.pass_threshold is None and not outcomes["score"].isin([0.0, 1.0]).all():
        warnings.warn("Some scores are not 0/1, so the reliability section (pass@k, pass^k, flaky tasks) is "
                      "skipped; pass --pass-threshold T to count a score >= T as a pass.", UserWarning, stacklevel=2)
    params = {
        "outcomes": outcomes, "read": read, "cluster": "cluster" if args.cluster_regex else args.cluster,
        "test": args.test, "pairs": _order(outcomes, args),
        "baseline": args.baseline, "n_resamples": args.n_resamples, "threshold": args.pass_threshold,
        "noise": args.noise, "ks": [int(k) for k in parse_floats(args.k, "--k") or ()] if args.k else None,
        "effect": args.effect, "power": args.power, "runs": list(args.runs), "by": args.by,
    }
    with cli_remedies():
        if args.baseline is not None and args.baseline not in set(outcomes["system"]):
            raise ValueError(f"--baseline {args.baseline!r} is not one of the systems {sorted(set(outcomes['system']))}.")
        if args.baseline is not None:
            names = sorted(set(outcomes["system"]) - {args.baseline})
            params["pairs"] = [(s, args.baseline) for s in names]
        spec = ReportSpec(
            scores=compare_scores(outcomes), title=args.title, rng=args.rng, alpha=args.alpha,
            confidence_level=args.confidence_level, adjust=args.adjust, params=params,
            sections=[inputs_section, *COMPARE_SECTIONS, unit_section, methods_section], raw_csv=args.raw_csv,
        )
        out = write_report(spec, args.out, force=args.force, progress=args.ui.progress)
        args.ui.close_bar()
    from evalkit.cli._common import report_headline

    report_headline(args.ui, out)
    import pandas as pd

    csv = out / "tables" / "run_comparisons.csv"
    table = pd.read_csv(csv, keep_default_na=False, na_values=[""]) if csv.exists() else None
    if table is not None:
        cols = [c for c in ("a", "b", "n_tasks", "mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "test",
                            "pvalue", "pvalue_adjusted") if c in table.columns]
        # the CSV's names are neutralised against spreadsheet formulas ('=cmd); the terminal shows them as they are
        from evalkit._escape import neutralize_cell

        shown = {neutralize_cell(str(s)): str(s) for s in set(outcomes["system"])}
        table[["a", "b"]] = table[["a", "b"]].astype(str).replace(shown)
        args.ui.result(table[cols])
    args.ui.info(f"wrote {out / 'report.html'} and {out / 'report.md'} (run record: {out / 'run.json'})")
    return 0
