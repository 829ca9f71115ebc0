"""``evalkit rate PATH``: Bradley–Terry / Elo leaderboard with intervals, tables and plots."""

from __future__ import annotations

import argparse
import contextlib
import threading
from typing import TYPE_CHECKING

from evalkit.cli._common import add_common, one_blas_thread
from evalkit.cli._flags import add_confidence_level, add_n_resamples, add_rng
from evalkit.engine._names import AGGREGATION_ENGINES
from evalkit.io.formats import FORMATS

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.ratings.leaderboard import Leaderboard

__all__ = ["register", "run", "add_engine_arguments", "aggregate_for_cli"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``rate`` sub-command."""
    p = subparsers.add_parser(
        "rate",
        help="Bradley-Terry / Elo leaderboard with confidence intervals",
        description=(
            "Read pairwise judgments, check that Bradley-Terry ratings exist, fit them on the "
            "aggregated counts and print the leaderboard (Elo with intervals, n, wins, losses, "
            "ties, win rate). Intervals: sandwich (robust) by default, or a seeded bootstrap over "
            "comparisons or clusters. With --out: leaderboard.csv, leaderboard.md, leaderboard.png "
            "(Elo with whiskers) and win_rates.png (pairwise win-rate heatmap)."
        ),
    )
    p.add_argument("path", nargs="+", help="file(s) or a directory of judgment logs; - reads stdin")
    p.add_argument("--format", choices=[f for f in FORMATS if f != "columns"], default=None,
                   help="input format (default: detected from the columns)")
    p.add_argument("--ties", choices=["half", "drop", "davidson"], default="half",
                   help="ties as half a win (default), dropped, or Davidson's tie model")
    p.add_argument("--anchor", default=None, metavar="MODEL=1000",
                   help="fix MODEL at this Elo; intervals are then for differences with MODEL "
                        "(default: centred at 1000)")
    p.add_argument("--l2", type=float, default=0.0, help="L2 prior strength (default 0: maximum likelihood)")
    p.add_argument("--interval", choices=["sandwich", "hessian"], default="sandwich",
                   help="Wald intervals from robust (default) or model-based standard errors; "
                        "ignored with --n-resamples")
    add_n_resamples(p, "--bootstrap", default=0,
                    help="percentile intervals from N bootstrap replicates (0: none, Wald intervals)")
    p.add_argument("--cluster", default=None, metavar="COLUMN",
                   help="comparisons sharing a value of this column (e.g. item, judge) may be dependent: "
                        "cluster-robust sandwich, or with --n-resamples resample whole clusters")
    p.add_argument("--cluster-correction", choices=["CR1", "CR0"], default="CR1",
                   help="small-sample factor of the cluster-robust sandwich: G/(G-1) (CR1, default) or none")
    add_engine_arguments(p)
    add_rng(p, "--seed", help="seed of the bootstrap")
    add_confidence_level(p, "--level")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write CSV, Markdown and PNG plots into the new folder DIR (with a run.json manifest)")
    from evalkit.cli.judging import add_rate_flags

    add_rate_flags(p)
    add_common(p, writes=True, reads=True)
    p.set_defaults(func=run)


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--scheduler``: where the rows are reduced to counts."""
    p.add_argument("--engine", choices=list(AGGREGATION_ENGINES), default="duckdb",
                   help="where the rows are reduced to counts: DuckDB (default; out-of-core), pandas, "
                        "or a Dask cluster (needs evalkit[dask] and --scheduler)")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="Dask scheduler for --engine dask (default: $EVALKIT_DASK_SCHEDULER)")


def aggregate_for_cli(source, args: argparse.Namespace, **options):
    """:func:`~evalkit.engine.aggregate_comparisons` with the CLI's engine options; a missing
    optional extra becomes a one-line error (ValueError) instead of a traceback."""
    from evalkit.engine.aggregate import aggregate_comparisons

    try:
        return aggregate_comparisons(source, engine=args.engine, scheduler=args.scheduler,
                                     progress=getattr(args, "progress", None), **options)
    except ImportError as exc:
        raise ValueError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit rate``."""
    one_blas_thread()  # before numpy loads: the fit's small dense algebra is faster on one thread
    from evalkit.engine.aggregate import aggregate_comparisons
    from evalkit.ratings.elo import parse_anchor
    from evalkit.ratings.leaderboard import leaderboard_columns

    ui, inputs = args.ui, args.inputs
    warm = None
    if args.out:
        from evalkit._output import check_out_path

        check_out_path(args.out, force=args.force)
    if args.out or args.cluster:
        warm = _warm((FIGURE_MODULES if args.out else ()) + (CLUSTER_MODULES if args.cluster else ()))
    from evalkit.cli._runs import not_a_judgment_log

    not_a_judgment_log([p for p in args.path if p != "-"], "rate")
    # stdin spooled, for every reader (aggregate_comparisons takes encoding= like read_comparisons)
    args.path = [inputs.path(p, reader=aggregate_comparisons) for p in args.path]
    source = args.path[0] if len(args.path) == 1 else args.path
    counts, report = aggregate_for_cli(source, args, format=args.format, cluster=args.cluster,
                                       **inputs.kwargs(aggregate_comparisons))
    ui.close_bar()
    ui.info(inputs.display(report.to_text()))
    anchor, base = parse_anchor(args.anchor) if args.anchor else (None, 1000.0)
    n_boot = args.n_resamples
    if n_boot < 0:
        raise ValueError(f"--n-resamples must be >= 0; got {args.n_resamples}.")
    from evalkit.cli.judging import diagnostic_rows, print_warnings, rate_variant

    variant = bool(args.adjust_position) or args.by is not None or bool(args.style or args.style_diff)
    if variant:
        print_warnings(counts, report.format, args)
        rate_variant(args, diagnostic_rows(args, report), base=base, n_boot=n_boot)
        return 0
    early = _early_heatmap(args, counts, warm)  # drawn by a child while the rest is made here
    try:
        try:  # the fit first: with --cluster, DuckDB's one pass for the meat also gives the warnings' units
            table = leaderboard_columns(  # numpy columns: pandas only where the data need it
                counts, ties=args.ties, l2=args.l2, base=base, anchor=anchor,
                interval="bootstrap" if n_boot else args.interval, confidence_level=args.confidence_level,
                n_resamples=max(n_boot, 1), cluster=args.cluster, cluster_correction=args.cluster_correction,
                rng=args.rng, progress=ui.progress,
            )
        except ValueError:  # e.g. no maximum-likelihood estimate: the warnings still come before the error
            ui.close_bar()
            print_warnings(counts, report.format, args)
            raise
        _report(args, counts, report, table, inputs, early)
    except BaseException:
        if early is not None:
            early.cancel()
        raise
    return 0


def _report(args: argparse.Namespace, counts, report, table: Leaderboard, inputs, early) -> None:
    """What ``rate`` prints after the fit, then the ``--out`` folder."""
    from evalkit.cli.judging import print_warnings

    ui = args.ui
    ui.close_bar()
    print_warnings(counts, report.format, args)
    attrs = table.attrs
    from evalkit.report.findings import leaderboard_findings
    from evalkit.report.headline import Headline

    headline = Headline()
    leaderboard_findings(headline, table, section=None, cluster=args.cluster)
    ui.headline(headline)
    ui.result(table, title=f"Bradley-Terry Elo leaderboard (ties: {attrs['ties']}; intervals: {attrs['interval']})")
    notes = [f"fit: {attrs['n_iter']} Newton iterations, gradient norm {attrs['grad_norm']:.1e}, "
             f"{'converged' if attrs['converged'] else 'NOT CONVERGED'}"]
    if attrs.get("tie_param") is not None:
        notes.append(f"Davidson tie parameter nu = {attrs['tie_param']:.4g}")
    if attrs.get("fallback"):
        notes.append(attrs["fallback"])
    elif attrs.get("n_degenerate"):
        notes.append(f"{attrs['n_degenerate']} of {attrs['n_resamples']} bootstrap replicates had no finite ratings "
                     "(a model never lost or never won in them); they are kept, fitted with a small L2 penalty")
    for note in notes:
        print(note) if not ui.json else ui.info(note)
    if args.out:
        _write(args, counts, table, inputs, early)


def _early_heatmap(args: argparse.Namespace, counts, warm: threading.Thread | None):
    """With ``--out``: the win-rate heatmap's PNG started now, in a forked child
    (:class:`evalkit.cli._aside.Aside`), before the intervals, the rank intervals, the printed
    table and the leaderboard's figure, which this process makes meanwhile on the other core.
    The child fits the point estimates again for the heatmap's order (the leaderboard's: by
    rating, then by name); :func:`_write` uses its PNG only if that order is the table's.
    None without ``--out`` (or where :class:`Aside` would not fork: the heatmap is then drawn
    by :func:`_write`)."""
    if not args.out:
        return None
    if warm is not None:
        warm.join()  # matplotlib imported while DuckDB counted (it releases the GIL); no thread at the fork
    from evalkit.cli._aside import Aside, forks_now

    if not forks_now():
        return None
    return Aside(lambda: _heatmap_png(counts, args))


def _heatmap_png(counts, args: argparse.Namespace) -> dict:
    """``{"top": the models drawn, "png": the PNG (base64), "missing": glyphs}`` of the heatmap,
    in the leaderboard's order from a fit of the point estimates (as :func:`leaderboard_columns`)."""
    import base64
    import io

    import numpy as np

    from evalkit.plots._layout import MAX_HEATMAP
    from evalkit.ratings.bt import fit_bt
    from evalkit.ratings.counts import aggregate, as_cells

    pairs = aggregate(as_cells(counts, cluster=args.cluster))
    fit = fit_bt(pairs, ties=args.ties, l2=args.l2)
    order = np.lexsort((np.arange(len(fit.players)), -fit.theta))  # as _tabulate orders the table
    top = [str(fit.players[k]) for k in order[:MAX_HEATMAP]]
    buf = io.BytesIO()
    missing = _heatmap(pairs, top, len(fit.players), buf)
    return {"top": top, "png": base64.b64encode(buf.getvalue()).decode("ascii"), "missing": missing}


def _heatmap(counts, top: list[str], total: int, target) -> list[str]:
    """The win-rate heatmap of the models ``top`` (of ``total``) saved as PNG to ``target`` (a path
    or a binary file); the characters no font could draw."""
    from evalkit.plots._fonts import plot_fonts, save_png
    from evalkit.plots.ratings import plot_win_rate_heatmap, win_rate_values

    with plot_fonts():
        ax = plot_win_rate_heatmap(win_rate_values(counts, top), order=top, total=total)
        return save_png(ax.figure, target, tight=True, format="png", **PNG_OPTIONS)


#: What the figures of ``--out`` import (matplotlib's figure, Agg canvas and font list)
FIGURE_MODULES = ("matplotlib.backends.backend_agg", "matplotlib.figure", "matplotlib.font_manager",
                  "evalkit.plots.ratings")
#: What ``--cluster``'s terms import after the fit (the meat's sparse matrix, DuckDB's Arrow batches)
CLUSTER_MODULES = ("scipy.sparse", "pyarrow")


def _warm(modules: tuple[str, ...]) -> threading.Thread:
    """Import ``modules`` in a thread, started before the rows are read: DuckDB releases the GIL
    while it counts, so the imports (about 0.3 s for the figures', 0.4 s for the cluster terms')
    run beside it instead of after it. With the figures' modules it also draws one small figure
    (:func:`_first_figure`). Any error there is left for the real work to raise."""
    def work() -> None:
        import importlib

        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        if "matplotlib.figure" in modules:
            with contextlib.suppress(Exception):
                _first_figure()

    thread = threading.Thread(target=work, name="evalkit-import", daemon=True)
    thread.start()
    return thread


def _first_figure() -> None:
    """Draw a 2 x 2 inch figure with a title and tick labels in the figures' fonts, and throw it
    away: the fonts are loaded and matplotlib's first-draw set-up done (0.035 s) before the counts
    are in, and the forked heatmap and the leaderboard figure start warm (0.06-0.15 s less each)."""
    from evalkit.plots._figure import subplots
    from evalkit.plots._fonts import apply_fonts, plot_fonts

    with plot_fonts():
        fig, ax = subplots(figsize=(2, 2))
        ax.set_title("x")
        ax.set_yticks([0, 1], ["a", "b"])
        apply_fonts(fig)
        fig.canvas.draw()


#: How ``rate --out`` saves its two PNGs: 100 dpi and zlib level 1. Against 150 dpi and level 6
#: this takes about 40 % less CPU time at 200 models (1.15 s against 1.8-2.0 s for both figures,
#: ``scripts/bench_command.py --out``; the figures are 1,340 x 1,200 and 650 x 1,680 pixels, their
#: smallest text 7 pt = 10 px).
PNG_OPTIONS = {"dpi": 100, "pil_kwargs": {"compress_level": 1}}


def _write(args: argparse.Namespace, counts, table: Leaderboard, inputs, early=None) -> None:
    """The ``--out`` folder: the leaderboard as CSV and Markdown, its figure and the win-rate
    heatmap (both drawn in proportion to the data: at most
    :data:`evalkit.plots._layout.MAX_ROWS` / :data:`~evalkit.plots._layout.MAX_HEATMAP` models,
    the reason in ``run.json`` and on stderr), and ``run.json``. No pandas: the leaderboard stays
    numpy columns. The heatmap is the PNG of ``early`` (:func:`_early_heatmap`, drawn by a forked
    child meanwhile) when its order is the table's, else drawn here."""
    import base64

    from evalkit._output import atomic_output_dir
    from evalkit.cli.judging import rate_parameters, write_tables
    from evalkit.plots._fonts import plot_fonts, save_png
    from evalkit.plots._layout import MAX_HEATMAP, MAX_ROWS, summary_note
    from evalkit.plots.ratings import plot_leaderboard

    record = {"command": "rate", "inputs": list(inputs.names.values()) or args.path,
              "parameters": rate_parameters(args)}
    models = [str(m) for m in table.columns["model"]]
    notes = {"leaderboard.png": summary_note(min(len(models), MAX_ROWS), len(models), limit_name="MAX_ROWS"),
             "win_rates.png": summary_note(min(len(models), MAX_HEATMAP), len(models), limit_name="MAX_HEATMAP")}
    top = models[:MAX_HEATMAP]  # only the block drawn: a sparse 1,000-model matrix is never built whole
    with atomic_output_dir(args.out, force=args.force, raw_csv=args.raw_csv, record=record) as out:
        write_tables(out, {"leaderboard": table})
        with plot_fonts():
            ax = plot_leaderboard(table)
            missing = save_png(ax.figure, out.path / "leaderboard.png", tight=True, **PNG_OPTIONS)
        got = early.result() if early is not None else None
        if got is not None and got["top"] == top:  # the table's order (else drawn again here, in that order)
            (out.path / "win_rates.png").write_bytes(base64.b64decode(got["png"]))
            missing += got["missing"]
        else:
            missing += _heatmap(counts, top, len(models), out.path / "win_rates.png")
        shown = {k: v for k, v in notes.items() if v}
        if shown:
            out.record["figures"] = shown
        if missing:
            out.record["missing_glyphs"] = sorted(set(missing))
            args.ui.warn("no installed font has the characters " + " ".join(f"U+{ord(c):04X}" for c in set(missing))
                         + "; the plots show them as boxes (install fonts-noto-cjk)")
    for name, note in notes.items():
        if note:
            args.ui.info(f"{name}: {note}")
    args.ui.info(f"wrote {args.out}/: leaderboard.csv, leaderboard.md, leaderboard.png, win_rates.png, run.json")
