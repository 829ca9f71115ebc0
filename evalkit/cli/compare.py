"""``evalkit compare A B [C ...]``: runs of several systems on shared tasks, paired and tested;
``evalkit compare --plan``: the power table before any run."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli._choices import LazyChoices, add_lazy_choice
from evalkit.cli._flags import add_rng
from evalkit.cli._logs import add_log_arguments, cli_remedies, parse_floats
from evalkit.cli._runs import add_score_arguments, apply_cluster, print_scores, read_runs

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
    p.add_argument("runs", nargs="*", metavar="RUN", help="one system's logs: file, folder or glob (in order: "
                                                            "`compare BASELINE CANDIDATE`, differences are candidate "
                                                            "− baseline, each later RUN minus an earlier one); one "
                                                            "RUN alone is scored as `evalkit score` does")
    p.add_argument("--baseline", default=None, help="compare every system with this one (default: all pairs)")
    add_score_arguments(p)
    add_lazy_choice(p, "--test", choices=LazyChoices("evalkit.stats.runs", "RUN_TESTS"), default="auto",
                   help="auto (default): McNemar for one pass/fail run per task, else sign-flip permutation")
    add_lazy_choice(p, "--adjust", choices=LazyChoices("evalkit.stats.multiplicity", "MULTIPLICITY_METHODS"),
                    default="holm", help="over the pairs (holm)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--n-resamples", type=int, default=9999, help="permutation / bootstrap resamples (9999)")
    add_rng(p, "--seed", help="seed of the permutation / bootstrap resamples")
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
    seq = p.add_argument_group("anytime-valid comparison and judge correction")
    seq.add_argument("--sequential", action="store_true",
                     help="add the betting confidence sequence on the per-task difference: when the answer settled, "
                          "and the tasks saved against a fixed-n design of equal power (valid at every look)")
    seq.add_argument("--task-order", choices=["random", "file"], default="random",
                     help="--sequential: tasks in a random order seeded by --rng (default), or in file order (warned)")
    seq.add_argument("--look-every", type=int, default=None, metavar="N",
                     help="--sequential: look at the sequence every N tasks (default: after every task)")
    seq.add_argument("--score-bounds", default="0,1", metavar="LO,HI",
                     help="--sequential: the range a score is known to lie in (default 0,1)")
    seq.add_argument("--human", default=None, metavar="LABELS",
                     help="human labels (system, task, human): PPI++ corrected accuracy per system and difference per "
                          "pair, beside the judge-only and human-only ones, and the judge's agreement with the humans")
    from evalkit.cli._cost import add_cost_arguments

    add_cost_arguments(p)
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


def read_outcomes(args: argparse.Namespace) -> tuple[pd.DataFrame, dict, list[str]]:
    """One row per (system, task, run) with its final score and spend, what the reader counted, and the
    systems in the order of the RUNs."""
    runs = list(args.runs)
    if not runs:
        raise ValueError("compare needs RUNs (e.g. `evalkit compare runs/a runs/b`), or --plan for a power table.")
    outcomes, read, order = read_runs(args, runs, by=args.by, cluster=args.cluster)
    return outcomes, read, order


def _natural(name: str) -> tuple[int, float, str]:
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)


def _order(order: list[str], args: argparse.Namespace) -> list[tuple[str, str]] | None:
    """(candidate, baseline) pairs: each later system minus each earlier one."""
    if args.baseline is not None:
        return None
    names = sorted(order, key=_natural) if args.by else order
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
    from evalkit.report.efficiency import efficiency_section

    check_out_path(args.out, force=args.force)
    outcomes, read, order = read_outcomes(args)
    cluster = apply_cluster(args, outcomes)
    single = outcomes["system"].nunique() < 2
    if args.pass_threshold is None and not outcomes["score"].isin([0.0, 1.0]).all():
        warnings.warn("Some scores are not 0/1, so the reliability section (pass@k, pass^k, flaky tasks) is "
                      "skipped; pass --pass-threshold T to count a score >= T as a pass.", UserWarning, stacklevel=2)
    params = {
        "outcomes": outcomes, "read": read, "cluster": cluster, "system_order": order,
        "test": args.test, "pairs": _order(order, args),
        "baseline": args.baseline, "n_resamples": args.n_resamples, "threshold": args.pass_threshold,
        "noise": args.noise, "ks": [int(k) for k in parse_floats(args.k, "--k") or ()] if args.k else None,
        "effect": args.effect, "power": args.power, "runs": list(args.runs), "by": args.by,
    }
    with cli_remedies(args._options):  # bad --score-bounds / --human input too: exit 2 with the remedy
        extra = _anytime_params(args, outcomes, params, order)
        if args.baseline is not None and args.baseline not in set(outcomes["system"]):
            raise ValueError(f"--baseline {args.baseline!r} is not one of the systems {sorted(set(outcomes['system']))}.")
        if args.baseline is not None:
            names = [s for s in order if s != args.baseline]
            params["pairs"] = [(s, args.baseline) for s in names]
        outcomes, cost = _cost_params(args, outcomes, params, order)
        if cost is not None:
            extra.append(efficiency_section)
        spec = ReportSpec(
            scores=compare_scores(outcomes), title=args.title, rng=args.rng, alpha=args.alpha,
            confidence_level=args.confidence_level, adjust=args.adjust, params=params,
            sections=[inputs_section, *COMPARE_SECTIONS, *extra, unit_section, methods_section], raw_csv=args.raw_csv,
        )
        out = write_report(spec, args.out, force=args.force, progress=args.ui.progress)
        args.ui.close_bar()
    from evalkit.cli._common import report_headline

    report_headline(args.ui, out)  # the finding first
    _print(args, out, outcomes, read, order, cluster, single, cost)
    _print_anytime(args, out)
    for sentence in params.get("efficiency_sentences") or ():
        args.ui.info(sentence)
    args.ui.info(f"wrote {out / 'report.html'} and {out / 'report.md'} (run record: {out / 'run.json'})")
    return 0


def _cost_params(args: argparse.Namespace, outcomes: pd.DataFrame, params: dict,
                 order: list[str]) -> tuple[pd.DataFrame, dict | None]:
    """The runs with a priced cost (``--prices``), and the cost-and-efficiency tables (``--ratio-interval``) for
    the report and stdout; None when the logs record no tokens or cost."""
    from evalkit.cli._cost import cost_result, cost_tables

    outcomes, result = cost_result(args, outcomes, params["anytime_pairs"])
    params["outcomes"] = outcomes
    params.update(prices=args.prices, ratio_interval=args.ratio_interval)
    if result is None:
        return outcomes, None
    tables = cost_tables(result, order)
    params.update(efficiency_tables=tables, efficiency_notes=list(result.notes),
                  efficiency_sentences=result.sentences())
    for note in result.notes:
        args.ui.warn(note)
    return outcomes, tables


def _print(args: argparse.Namespace, out: Path, outcomes: pd.DataFrame, read: dict, order: list[str],
           cluster: str | None, single: bool, cost: dict | None = None) -> None:
    """stdout: the pair table (candidate − baseline), each system alone with its spend, and cost and efficiency
    (paired ratios candidate / baseline); one system: its score."""
    if single:
        print_scores(args, outcomes, read, order, cluster=cluster, title="one system: its score (nothing to pair with)",
                     after=cost)
        return
    import pandas as pd

    csv = out / "tables" / "run_comparisons.csv"
    table = pd.read_csv(csv, keep_default_na=False, na_values=[""]) if csv.exists() else None
    if table is not None:
        from evalkit.cli._runs import DIFF_LABEL

        cols = [c for c in ("baseline", "candidate", "n_tasks", "mean_baseline", "mean_candidate", DIFF_LABEL, "se",
                            "ci_low", "ci_high", "test", "pvalue", "pvalue_adjusted") if c in table.columns]
        # the CSV's names are neutralised against spreadsheet formulas ('=cmd); the terminal shows them as they are
        from evalkit._escape import neutralize_cell

        names = {neutralize_cell(str(s)): str(s) for s in set(outcomes["system"])}
        table[["baseline", "candidate"]] = table[["baseline", "candidate"]].astype(str).replace(names)
        print_scores(args, outcomes, read, order, cluster=cluster, title="each system alone",
                     before=("paired over shared tasks: candidate − baseline", table[cols]), after=cost)
        return
    print_scores(args, outcomes, read, order, cluster=cluster, title="each system alone", after=cost)


def _anytime_params(args: argparse.Namespace, outcomes: pd.DataFrame, params: dict, order: list[str]) -> list:
    """The sections and parameters of --sequential, --human and the verdict flips (repeated runs)."""
    import pandas as pd

    from evalkit.report.anytime import flips_section, sequential_section

    extra: list = [flips_section]
    systems = list(dict.fromkeys(outcomes["system"].astype(str)))
    if args.baseline is not None:  # (baseline, candidate): differences are candidate - baseline (second - first)
        anytime_pairs = [(args.baseline, s) for s in systems if s != args.baseline]
    else:
        ordered = sorted(systems, key=_natural) if args.by else [s for s in order if s in systems]
        anytime_pairs = [(ordered[i], ordered[j]) for i in range(len(ordered)) for j in range(i + 1, len(ordered))]
    params["anytime_pairs"] = anytime_pairs
    if args.sequential:
        bounds = parse_floats(args.score_bounds, "--score-bounds") or [0.0, 1.0]
        if len(bounds) != 2 or not bounds[1] > bounds[0]:
            raise ValueError(f"--score-bounds takes LO,HI with HI > LO (e.g. 0,1); got {args.score_bounds!r}.")
        s = outcomes["score"]
        if ((s < bounds[0]) | (s > bounds[1])).any():
            raise ValueError(f"--sequential needs bounded scores: some scores lie outside [{bounds[0]:g}, {bounds[1]:g}] "
                             f"(min {s.min():g}, max {s.max():g}); pass the range they are known to lie in with "
                             "--score-bounds LO,HI.")
        if args.task_order == "file":
            warnings.warn("--task-order file: the confidence sequence assumes the tasks come in an order independent "
                          "of their outcomes; files are often sorted (by source, difficulty or date), so the sequence "
                          "can drift from the full-sample mean. The default, --task-order random, shuffles them with "
                          "the recorded --rng.", UserWarning, stacklevel=2)
        params["sequential"] = {"order": args.task_order, "look_every": args.look_every,
                                "bounds": (bounds[0], bounds[1])}
        extra.insert(0, sequential_section)
    if args.human:
        from evalkit.report.human import difference_units, human_section, read_labels, score_units

        units = score_units(outcomes, read_labels(args.human))
        diffs = difference_units(units, anytime_pairs)
        both = pd.concat([units, diffs], ignore_index=True)
        both.attrs["unmatched_labels"] = units.attrs.get("unmatched_labels", 0)
        params.update(human_units=both, human_source=args.human,
                      human_what="mean score per system (and the difference candidate - baseline per pair)")
        extra.append(human_section)
    return extra


def _print_anytime(args: argparse.Namespace, out: Path) -> None:
    """The --sequential sentence(s) on stderr (they are also in the report)."""
    if not args.sequential:
        return
    import pandas as pd

    csv = out / "tables" / "sequential.csv"
    if csv.exists():
        t = pd.read_csv(csv)
        for r in t.to_dict("records"):  # one dict per look-up row: plain Python values
            when = f"settled at task {int(r['settled_at'])}" if pd.notna(r["settled_at"]) else "not settled"
            saved = (f"; {int(r['tasks_saved'])} tasks saved against a fixed-n design of equal power "
                     f"({int(r['n_fixed_equal_power'])})" if pd.notna(r["tasks_saved"]) else "")
            args.ui.info(f"sequential {r['b']} - {r['a']}: {when} of {int(r['tasks'])} tasks, confidence sequence "
                         f"[{r['cs_low']:.4g}, {r['cs_high']:.4g}]{saved}")
