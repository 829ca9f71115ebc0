"""``evalkit judge TRANSCRIPTS --judge MODEL --out DIR``: judge pairs of agent transcripts into a judge log."""

from __future__ import annotations

import argparse

from evalkit.cli._common import add_common

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``judge`` sub-command."""
    p = subparsers.add_parser(
        "judge",
        help="judge pairs of agent transcripts with a model (Inspect AI) or a Python function; resumable",
        description=(
            "Judge pairs of transcripts of the same task (any agent log evalkit reads: Inspect .eval/.json, SWE-agent "
            ".traj, lm-eval samples, JSONL events, or a table with system, task, transcript columns) and write a "
            "judge log evalkit reads (DIR/comparisons.csv: systems as players; DIR/transcript_comparisons.csv: "
            "transcripts), the append-only verdict log DIR/verdicts.jsonl and a report in DIR/report/: per-task "
            "Bradley-Terry scores with intervals, the top k with its confidence, the judge's position bias, the "
            "system-level comparison and verdict flips. Each pair is judged in both orders. A run killed at any point "
            "resumes from the log when started again with the same DIR."),
    )
    p.add_argument("transcripts", nargs="+", metavar="TRANSCRIPTS", help="log files, folders or globs")
    p.add_argument("--judge", required=True, metavar="MODEL",
                   help="an Inspect AI model (provider/model, e.g. openai/gpt-4o; needs evalkit[judge]) or a Python "
                        "function python:MODULE:FUNCTION / python:FILE.py:FUNCTION taking the prompt, returning text")
    p.add_argument("--judge-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="a model argument for Inspect's get_model (repeatable)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder; running again into it resumes")
    p.add_argument("--prompt", default=None, metavar="FILE",
                   help="prompt template (UTF-8) with {task}, {a} and {b}; it must ask for 'VERDICT: A|B|TIE' or "
                        "[[A]]/[[B]]/[[C]] (default: a built-in rubric)")
    p.add_argument("--pairs", choices=["all", "swiss", "active"], default="all",
                   help="all pairs (default), Swiss rounds, or active selection for the top k (--top-k)")
    p.add_argument("--top-k", type=int, default=None, metavar="K",
                   help="the top-k set to identify per task (default 15 of 16 or more, seed 002's case; else half)")
    p.add_argument("--budget", type=int, default=None, metavar="N", help="judge calls in total, split over the tasks")
    p.add_argument("--single-order", action="store_true",
                   help="judge each pair once, in a random order (default: both orders, cancelling position bias)")
    p.add_argument("--max-repeats", type=int, default=1, metavar="R",
                   help="--pairs active: judge a pair up to R times (only for a judge whose answers vary between "
                        "calls, e.g. temperature > 0; default 1)")
    p.add_argument("--concurrency", type=int, default=8, help="judge calls in flight at once (default 8)")
    p.add_argument("--retries", type=int, default=3, help="retries of a failed call, with exponential back-off (3)")
    p.add_argument("--retry-delay", type=float, default=1.0, metavar="SECONDS",
                   help="first back-off delay; doubles each retry (default 1)")
    p.add_argument("--cache", default=None, metavar="FILE",
                   help="a JSONL cache of answers shared across runs, keyed by (transcript hashes, task, judge, prompt)")
    p.add_argument("--rng", type=int, default=0, metavar="SEED", help="seed of the task order, pair order and warm-up (default 0)")
    p.add_argument("--task-order", choices=["random", "file"], default="random",
                   help="order in which tasks are judged (default random, seeded; file order is warned about with "
                        "--stop-when-settled)")
    p.add_argument("--stop-when-settled", action="store_true",
                   help="stop judging new tasks once the betting confidence sequence on the per-task win rate of the "
                        "second system over the first excludes 1/2 (anytime-valid)")
    p.add_argument("--systems", default=None, metavar="A,B",
                   help="the two systems of --stop-when-settled (default: the first two read)")
    p.add_argument("--names", default=None, metavar="A,B,...", help="system names, one per TRANSCRIPTS argument")
    p.add_argument("--human", default=None, metavar="LABELS",
                   help="human labels (item/task, player_a, player_b, human): PPI++ corrected win rates beside the "
                        "judge-only and human-only ones, and the judge's agreement with the humans")
    p.add_argument("--max-chars", type=int, default=24000, help="cut longer transcripts in the middle (default 24000)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="confidence level of intervals (0.95)")
    add_common(p, writes=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit judge``."""
    from evalkit.cli._logs import parse_mapping
    from evalkit.judge.command import judge_transcripts
    from evalkit.judge.models import resolve_judge
    from evalkit.judge.prompt import load_prompt
    from evalkit.judge.runner import JudgeSpec
    from evalkit.judge.transcripts import read_transcripts

    names = [n.strip() for n in args.names.split(",")] if args.names else None
    transcripts = read_transcripts(list(args.transcripts), max_chars=args.max_chars, names=names)
    systems = None
    if args.systems:
        parts = [s.strip() for s in args.systems.split(",")]
        if len(parts) != 2:
            raise ValueError(f"--systems takes two names A,B; got {args.systems!r}.")
        systems = (parts[0], parts[1])
    spec = JudgeSpec(prompt=load_prompt(args.prompt), pairs=args.pairs, top_k=args.top_k, budget=args.budget,
                     both_orders=not args.single_order, concurrency=args.concurrency, retries=args.retries,
                     retry_delay=args.retry_delay, rng=args.rng, task_order=args.task_order,
                     stop_when_settled=args.stop_when_settled, systems=systems, confidence_level=args.confidence_level,
                     max_repeats=args.max_repeats)
    model_args: dict[str, object] = dict(parse_mapping(args.judge_arg, "--judge-arg"))
    judge = resolve_judge(args.judge, model_args=model_args)
    human = None
    if args.human:
        from evalkit.report.human import read_labels

        human = read_labels(args.human)
    ui = args.ui
    ui.info(f"read {len(transcripts)} transcripts of {len({t.task for t in transcripts})} tasks; judge {judge.name}")
    res = judge_transcripts(transcripts, judge, spec, args.out, force=args.force, cache=args.cache, human=human,
                            human_source=args.human or "", progress=ui.progress)
    ui.close_bar()
    r = res.run
    ui.info(f"judge calls: {r.calls_made} made, {r.reused} reused from the log, {r.cached} from the cache; "
            f"{r.unparseable} unparseable, {r.errors} failed")
    if res.results.get("stopping"):
        ui.info(res.results["stopping"])
    sc = res.results["systems"]
    tables: dict[str, object] = {}
    if "pairs" in sc and not sc["pairs"].empty:
        tables["System-level comparison (win rate of b over a, per task; candidate b - baseline a)"] = sc["pairs"]
    summary = res.rankings.summary
    cols = [c for c in ("task", "n", "k", "calls", "top_k_set_prob", "confident_in", "confident_out", "uncertain")
            if c in summary.columns]
    tables["Top k per task"] = summary[cols].head(50)
    ui.result(tables if not ui.json else {"systems": sc.get("pairs"), "top_k": summary})
    ui.info(f"wrote {res.out / 'comparisons.csv'}, {res.out / 'transcript_comparisons.csv'}, "
            f"{res.out / 'verdicts.jsonl'} and {res.out / 'report' / 'report.html'}")
    return 0
