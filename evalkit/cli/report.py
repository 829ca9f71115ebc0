"""``evalkit report``: comparison logs and/or per-item scores in, a report folder out."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from evalkit.cli._choices import LazyChoices, add_lazy_choice
from evalkit.cli._common import add_common
from evalkit.cli._flags import add_confidence_level, add_n_resamples, add_renamed, add_rng
from evalkit.cli._logs import add_log_arguments, cli_remedies, parse_floats, parse_mapping
from evalkit.cli.curve import read_sessions
from evalkit.io.formats import FORMATS

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
    p.add_argument("comparisons", nargs="*", help="judgment log file(s) or a directory (optional); - reads stdin")
    p.add_argument("--scores", default=None,
                   help="per-item score table (CSV/JSONL/Parquet) with system, score and item or task+trial; "
                        "- reads stdin")
    p.add_argument("--traces", nargs="+", default=None, metavar="SESSIONS",
                   help="session table (system, task, session, budget, score) or agent log files / folders / globs "
                        "(Inspect, SWE-agent with --resolved, JSONL events with --map): adds the Elo-per-budget "
                        "sections and, without --scores, tests each session's best score at the budget")
    p.add_argument("--by", default="system", metavar="COLUMN",
                   help="with --traces logs, what names a system: 'system' (as logged), 'input' (each path one "
                        "system) or another column (e.g. epoch)")
    p.add_argument("--grid", type=float, default=1.5, help="checkpoint ratio of the Elo-per-budget curves (1.5)")
    p.add_argument("--budgets", default=None, metavar="B1,B2,...",
                   help="explicit checkpoint budgets of the Elo-per-budget curves (overrides --grid)")
    p.add_argument("--start", type=float, default=None, help="first checkpoint of the curves (default: smallest budget)")
    p.add_argument("--stop", type=float, default=None, help="last checkpoint cap of the curves")
    p.add_argument("--prior", type=float, default=None, help="symmetric pseudo-games per pair in the curves (default 0)")
    p.add_argument("--missing", choices=["drop", "lose"], default=None,
                   help="curves: checkpoints before a session's first submission drop their games (default) or lose")
    add_renamed(p, "--curve-n-resamples", "--curve-bootstrap", type=int, default=200, metavar="N",
                help="session-bootstrap replicates of the Elo-per-budget curves (default 200)")
    p.add_argument("--score-col", action="append", default=[], metavar="NAME=COLUMN",
                   help="map a score-table column, e.g. --score-col system=model (repeatable)")
    p.add_argument("--format", choices=[f for f in FORMATS if f != "columns"], default=None,
                   help="format of the judgment log (default: detected)")
    p.add_argument("--out", default="evalkit-report",
                   help="report folder, created whole (default: ./evalkit-report); see --force")
    p.add_argument("--title", default="evalkit report")
    add_rng(p, "--seed", help="seed of the bootstrap intervals")
    p.add_argument("--alpha", type=float, default=0.05)
    add_confidence_level(p, "--confidence")
    add_lazy_choice(p, "--adjust", choices=LazyChoices("evalkit.stats.multiplicity", "MULTIPLICITY_METHODS"), default="holm",
                   help="multiplicity correction of the pairwise family (default holm)")
    add_lazy_choice(p, "--test", choices=LazyChoices("evalkit.stats.pairwise", "PAIRED_TESTS"), default="paired_t", help="paired test between systems")
    p.add_argument("--pairs", choices=["all", "adjacent"], default=None,
                   help="pairs to test (default: all up to 8 systems, else neighbours by mean score)")
    p.add_argument("--unit-pair", nargs=2, default=None, metavar=("A", "B"),
                   help="systems of the trial- vs task-level section")
    add_renamed(p, "--tie-policy", "--ties", default="drop",
                help="what sign tests do with tied pairs (default drop)").choices = LazyChoices("evalkit.stats.sign", "TIE_POLICIES")
    add_n_resamples(p, "--n-boot", default=200, help="bootstrap replicates of leaderboard intervals (0: sandwich)")
    p.add_argument("--drop-unscored", action="store_true", help="--traces table: drop rows without a score (counted)")
    p.add_argument("--sort-budgets", action="store_true",
                   help="--traces table: sort each session by budget instead of requiring file order")
    p.add_argument("--human", default=None, metavar="LABELS",
                   help="human labels of judged items (item, player_a, player_b, human = player_a's score): PPI++ "
                        "corrected win rates beside the judge-only and human-only ones, and the judge's sensitivity, "
                        "specificity and kappa against the humans")
    add_log_arguments(p)
    from evalkit.cli.judging import add_judge_flags

    add_judge_flags(p)
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit report``."""
    from evalkit._output import check_out_path
    from evalkit.io import read_comparisons, read_traces

    inputs = args.inputs
    if not args.comparisons and not args.scores and not args.traces:
        raise ValueError("give a judgment log (PATH), --scores TABLE and/or --traces SESSIONS.")
    check_out_path(args.out, force=args.force)
    comparisons = None
    if args.comparisons:
        from evalkit.cli._runs import not_a_judgment_log

        not_a_judgment_log([p for p in args.comparisons if p != "-"], "report")
        paths = [inputs.path(p, reader=read_comparisons) for p in args.comparisons]
        comparisons = paths[0] if len(paths) == 1 else paths
        if inputs.kwargs(read_comparisons):  # a reader taking encoding=: read here, hand over the result
            comparisons = read_comparisons(comparisons, format=args.format, **inputs.kwargs(read_comparisons))
    traces: pd.DataFrame | None = None
    params: dict[str, Any] = {}
    if args.traces:
        if args.traces == ["-"]:
            args.traces = [inputs.path("-", reader=read_traces)]
        traces = read_sessions(args, list(args.traces), by=args.by)
        params["traces_inputs"] = [inputs.names.get(t, t) for t in args.traces]
        if "input" in traces.columns:  # read from logs: say what was read in run.json
            params["traces_read"] = {"files": traces.attrs.get("files", {}), "skipped": len(traces.attrs.get("skipped", [])),
                                     "unscored": len(traces.attrs.get("unscored", []))}
        else:  # one session table: its checksum, as write_report records for a path
            from evalkit.io._limits import read_digest

            params["traces_file"] = {"path": inputs.names.get(args.traces[0], args.traces[0]),
                                     **read_digest(args.traces[0])}  # the bytes read, hashed as they were read
        traces = traces[["system", "task", "session", "budget", "score"]]
    curve_options = {"grid": args.grid, "n_resamples": args.curve_n_resamples}
    curve_options.update({k: v for k, v in (("budgets", parse_floats(args.budgets, "--budgets")),
                                            ("start", args.start), ("stop", args.stop),
                                            ("prior", args.prior), ("missing", args.missing)) if v is not None})
    if args.judge:
        params["judge"] = args.judge
    extra = []
    if args.human:
        from evalkit.report.human import human_section, read_labels

        if not args.comparisons:
            raise ValueError("--human corrects a judge log: give the judgment log (PATH) it labels.")
        params["human_labels"] = read_labels(args.human)
        params["human_source"] = args.human
        extra.append(human_section)
    params["extra_sections"] = extra
    with cli_remedies(given=["--missing lose"] if args.missing == "lose" else []):
        return _write(args, comparisons, traces, curve_options, params)


def _write(args: argparse.Namespace, comparisons: object, traces: pd.DataFrame | None, curve_options: dict,
           params: dict) -> int:
    from evalkit.report import ReportSpec, write_report

    ui, inputs = args.ui, args.inputs
    extra = params.pop("extra_sections", [])
    spec = ReportSpec(
        comparisons=comparisons, scores=inputs.path(args.scores) if args.scores else None, traces=traces,
        params=params or None, curve_options=curve_options, format=args.format,
        score_columns=parse_mapping(args.score_col, "--score-col"), title=args.title, rng=args.rng,
        alpha=args.alpha, confidence_level=args.confidence_level, adjust=args.adjust, test=args.test, pairs=args.pairs,
        unit_pair=tuple(args.unit_pair) if args.unit_pair else None, tie_policy=args.tie_policy, n_resamples=args.n_resamples,
        raw_csv=args.raw_csv, extra_sections=extra,
    )
    out = write_report(spec, args.out, force=args.force, progress=ui.progress)
    ui.close_bar()
    from evalkit.cli._common import report_headline

    report_headline(ui, out)
    if ui.json:
        import json

        ui.result({"out": str(out), "manifest": json.loads((out / "run.json").read_text(encoding="utf-8"))})
    ui.info(f"wrote {out / 'report.html'} and {out / 'report.md'} (run record: {out / 'run.json'})")
    return 0
