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
    figures = None
    if args.out:
        from evalkit._output import check_out_path

        check_out_path(args.out, force=args.force)
        figures = _figures_process()  # before any thread or DuckDB: a fork is safe now
    try:
        return _run(args, figures)
    except BaseException:
        if figures is not None:
            figures.cancel()
        raise


def _run(args: argparse.Namespace, figures) -> int:
    """:func:`run` once the figures' process, if any, stands by."""
    from evalkit.engine.aggregate import aggregate_comparisons
    from evalkit.ratings.elo import parse_anchor
    from evalkit.ratings.leaderboard import leaderboard_columns

    ui, inputs = args.ui, args.inputs
    warming = _warm(CLUSTER_MODULES) if args.cluster else None
    from evalkit.cli._runs import not_a_judgment_log

    not_a_judgment_log([p for p in args.path if p != "-"], "rate")
    # stdin spooled, for every reader (aggregate_comparisons takes encoding= like read_comparisons)
    args.path = [inputs.path(p, reader=aggregate_comparisons) for p in args.path]
    source = args.path[0] if len(args.path) == 1 else args.path
    counts, report = aggregate_for_cli(source, args, format=args.format, cluster=args.cluster,
                                       **inputs.kwargs(aggregate_comparisons))
    ui.close_bar()
    if warming is not None:  # a module half imported by the thread is in sys.modules, half empty
        warming.join()
    ui.info(inputs.display(report.to_text()))
    anchor, base = parse_anchor(args.anchor) if args.anchor else (None, 1000.0)
    n_boot = args.n_resamples
    if n_boot < 0:
        raise ValueError(f"--n-resamples must be >= 0; got {args.n_resamples}.")
    from evalkit.cli.judging import diagnostic_rows, print_warnings, rate_variant

    variant = bool(args.adjust_position) or args.by is not None or bool(args.style or args.style_diff)
    if variant:
        if figures is not None:
            figures.cancel()
        print_warnings(counts, report.format, args)
        rate_variant(args, diagnostic_rows(args, report), base=base, n_boot=n_boot)
        return 0
    top: list[str] | None = None
    if figures is not None:  # the heatmap started now, in the leaderboard's order, while the intervals are made
        top = _start_heatmap(figures, args, counts)
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
    if figures is not None:
        if top is None:  # no early heatmap: its data now, in the table's order
            figures.submit(_draw_figures)
            top = _start_heatmap(figures, args, counts, order=[str(m) for m in table.columns["model"]])
        figures.send(_leaderboard_data(args, counts, table, top or []))  # drawn there while the table is printed
    _report(args, counts, report, table, inputs, figures)
    return 0


def _report(args: argparse.Namespace, counts, report, table: Leaderboard, inputs, figures) -> None:
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
        _write(args, table, inputs, figures)


def _figures_process():
    """With ``--out``: the process that draws the two figures, forked before the rows are read
    (:class:`evalkit.cli._aside.Standby`). It imports matplotlib and draws a warm-up figure
    (:func:`_prepare_figures`) on the core the start-up leaves idle, instead of beside DuckDB's
    threads, then runs :func:`_draw_figures`. Where it cannot fork, the same warm-up runs in a
    thread here and the figures are drawn here."""
    from evalkit.cli._aside import Standby

    return Standby(_prepare_figures)


def _prepare_figures() -> None:
    """Import :data:`FIGURE_MODULES` and draw :func:`_first_figure`."""
    import importlib

    for name in FIGURE_MODULES:
        importlib.import_module(name)
    _first_figure()


def _heatmap_data(args: argparse.Namespace, counts, order: list[str] | None = None) -> tuple:
    """``(block, top, total)`` of the win-rate heatmap: the win rates among the models ``top``
    drawn (a 60 x 60 array at most: a sparse 1,000-model matrix is never built whole), of
    ``total``. Its order is ``order`` or, before the table exists, the leaderboard's from a fit
    of the point estimates (as :func:`leaderboard_columns`: by rating, then by name; 0.01 s at
    200 models)."""
    import numpy as np

    from evalkit.plots._layout import MAX_HEATMAP
    from evalkit.plots.ratings import win_rate_values
    from evalkit.ratings.bt import fit_bt
    from evalkit.ratings.counts import aggregate, as_cells

    pairs = aggregate(as_cells(counts, cluster=args.cluster))
    if order is None:
        fit = fit_bt(pairs, ties=args.ties, l2=args.l2)
        ranked = np.lexsort((np.arange(len(fit.players)), -fit.theta))  # as the table is ordered
        order = [str(fit.players[k]) for k in ranked]
    top = order[:MAX_HEATMAP]
    return win_rate_values(pairs, top), top, len(order)


def _start_heatmap(figures, args: argparse.Namespace, counts, order: list[str] | None = None) -> list[str] | None:
    """Send the heatmap's data (:func:`_heatmap_data`) to ``figures`` (submitting
    :func:`_draw_figures` first when ``order`` is None); the models drawn, or None where the point
    fit has no estimate (:func:`leaderboard_columns` then says why, after the warnings)."""
    try:
        data = _heatmap_data(args, counts, order=order)
    except ValueError:
        return None
    if order is None:
        figures.submit(_draw_figures)
    figures.send(data)
    return data[1]


def _leaderboard_data(args: argparse.Namespace, counts, table: Leaderboard, top: list[str]) -> tuple:
    """``(table, heatmap)``: the table for the leaderboard's figure and, where the heatmap sent
    before it (:func:`_heatmap_data`, of the models ``top``) is not in the table's order, the
    heatmap's data again, in that order (else None)."""
    from evalkit.plots._layout import MAX_HEATMAP

    models = [str(m) for m in table.columns["model"]]
    again = _heatmap_data(args, counts, order=models) if models[:MAX_HEATMAP] != top else None
    return table, again


def _draw_figures(receive) -> dict:
    """``{"leaderboard.png": bytes, "win_rates.png": bytes, "missing": [characters]}``. The
    heatmap's data come first (``receive()``: :func:`_heatmap_data`) and it is drawn by a forked
    child (:class:`evalkit.cli._aside.Aside`) while this process waits for the table
    (:func:`_leaderboard_data`) and draws the leaderboard, on the other core."""
    import base64
    import io

    from evalkit.cli._aside import Aside
    from evalkit.plots._fonts import plot_fonts, save_png
    from evalkit.plots.ratings import plot_leaderboard

    def heatmap(block, top: list[str], total: int) -> dict:
        buf = io.BytesIO()
        missing = _heatmap(block, top, total, buf)
        return {"png": base64.b64encode(buf.getvalue()).decode("ascii"), "missing": missing}

    first = receive()
    aside = Aside(lambda: heatmap(*first))
    try:
        table, again = receive()
        buf = io.BytesIO()
        with plot_fonts():
            ax = plot_leaderboard(table)
            missing = save_png(ax.figure, buf, tight=True, **PNG_OPTIONS)
        got = aside.result()
    except BaseException:
        aside.cancel()
        raise
    if again is not None:  # the first heatmap was not in the table's order
        got = heatmap(*again)
    return {"leaderboard.png": buf.getvalue(), "win_rates.png": base64.b64decode(got["png"]),
            "missing": missing + got["missing"]}


def _heatmap(block, top: list[str], total: int, target) -> list[str]:
    """The win-rate heatmap of the models ``top`` (of ``total``; ``block`` their win rates) saved as
    PNG to ``target`` (a path or a binary file); the characters no font could draw."""
    from evalkit.plots._fonts import plot_fonts, save_png
    from evalkit.plots.ratings import plot_win_rate_heatmap

    with plot_fonts():
        ax = plot_win_rate_heatmap(block, order=top, total=total)
        return save_png(ax.figure, target, tight=True, format="png", **PNG_OPTIONS)


#: What the figures of ``--out`` import (matplotlib's figure, Agg canvas and font list)
FIGURE_MODULES = ("matplotlib.backends.backend_agg", "matplotlib.figure", "matplotlib.font_manager",
                  "evalkit.plots.ratings")
#: What ``--cluster``'s terms import after the fit (the meat's sparse matrix, DuckDB's Arrow batches)
CLUSTER_MODULES = ("scipy.sparse", "pyarrow")


def _warm(modules: tuple[str, ...]) -> threading.Thread:
    """Import ``modules`` in a thread, started before the rows are read: DuckDB releases the GIL
    while it counts, so the imports (about 0.4 s for the cluster terms') run beside it instead of
    after it. Any error there is left for the real work to raise. Join the thread before using
    them: code that looks a module up in ``sys.modules`` (not by ``import``) would otherwise find
    it partly initialised."""
    def work() -> None:
        import importlib

        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=work, name="evalkit-import", daemon=True)
    thread.start()
    return thread


def _first_figure() -> None:
    """Draw a 2 x 2 inch figure with a title and tick labels in the figures' fonts, and throw it
    away: the fonts are loaded and matplotlib's first-draw set-up done (0.035 s) before the figures
    are asked for, and the forked heatmap and the leaderboard figure start warm (0.06-0.15 s less each)."""
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


def _write(args: argparse.Namespace, table: Leaderboard, inputs, figures) -> None:
    """The ``--out`` folder: the leaderboard as CSV and Markdown, its figure and the win-rate
    heatmap (both drawn in proportion to the data: at most
    :data:`evalkit.plots._layout.MAX_ROWS` / :data:`~evalkit.plots._layout.MAX_HEATMAP` models,
    the reason in ``run.json`` and on stderr), and ``run.json``. No pandas: the leaderboard stays
    numpy columns. The figures are ``figures``' (:func:`_figures_process`, given
    :func:`_draw_figures`), drawn there while the table was printed and written here."""
    from evalkit._output import atomic_output_dir
    from evalkit.cli.judging import rate_parameters, write_tables
    from evalkit.plots._layout import MAX_HEATMAP, MAX_ROWS, summary_note

    record = {"command": "rate", "inputs": list(inputs.names.values()) or args.path,
              "parameters": rate_parameters(args)}
    n = len(table.columns["model"])
    notes = {"leaderboard.png": summary_note(min(n, MAX_ROWS), n, limit_name="MAX_ROWS"),
             "win_rates.png": summary_note(min(n, MAX_HEATMAP), n, limit_name="MAX_HEATMAP")}
    with atomic_output_dir(args.out, force=args.force, raw_csv=args.raw_csv, record=record) as out:
        write_tables(out, {"leaderboard": table})
        got = figures.result()
        for name in ("leaderboard.png", "win_rates.png"):
            (out.path / name).write_bytes(got[name])
        missing = got["missing"]
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
