"""``evalkit simulate``: the reference swarm simulator of seed 000.

Sub-commands (each takes ``--engine serial|process|dask``, ``--workers`` and ``--scheduler
tcp://HOST:PORT``; default: the local process pool):

* ``reproduce --out DIR``: figures 2-10 on the reporting seeds (0-2 and 7-9) and under three
  broken simulators, the claim table (CSV + Markdown, with each row's kind: evidence or
  restatement) and the figures, and figure 11 (Elo per agent-time, :mod:`evalkit.studies`) on
  five seeds, appended to the same table; all in one executor map (both workers busy to the
  end). Progress per figure on stderr, and when each figure's jobs finished on stdout.
* ``calibrate --out FILE``: the coordinate search of :mod:`evalkit.sim.calibrate` over the
  generator, cost law and value noise on seeds 100-105, then selection on seeds 200-205; writes
  the fitted set and ``FILE.history.csv`` (every candidate) and ``FILE.selection.csv``;
  ``--robust`` and ``--margin K`` choose the robustness-aware or the margin objective.
* ``margins --out FILE``: per claim row and seed group (default 100-105 and 200-205), the mean,
  the seed-to-seed sd and the margin to the nearer tolerance edge in sd (:mod:`evalkit.sim.margins`).
* ``tradeoffs HISTORY --out FILE``: for each row the reference candidate misses, its range over the
  candidates of a calibration history and what the best candidate that reproduces it loses.
* ``run --agents K [--swarm standard|recursive] [--rule own-branch] [--dags N] --out FILE``:
  simulate runs on generated DAGs (or ``--edges/--steps`` CSVs) and write the tidy event trace.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from evalkit.cli._common import add_common
from evalkit.cli._flags import add_rng

__all__ = ["register", "run", "add_engine_options"]


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--engine``, ``--workers`` and ``--scheduler`` (shared by every parallel sub-command)."""
    p.add_argument("--engine", default=None, choices=["serial", "process", "dask"],
                   help="what runs the sweep (default: process pool; dask when --scheduler is given)")
    p.add_argument("--workers", type=int, default=None, help="processes of the local pool (default: 2)")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT (with --engine dask)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` sub-command."""
    p = subparsers.add_parser(
        "simulate", help="swarm simulator: reproduce seed 000's figures 2-11, calibrate, run traces",
        description="The reference swarm simulator of 'Predictable Swarm Scaling' (seed 000).",
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = sub.add_parser("reproduce", help="run figures 2-11 (and the broken simulators); write claims and figures")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 7, 8, 9],
                   help="reporting seeds (default 0 1 2 7 8 9; rows are counted per group of three)")
    r.add_argument("--dags", type=int, default=16, help="DAGs per seed (default 16)")
    r.add_argument("--params", default=None, help="parameter JSON (default: the bundled calibrated set)")
    r.add_argument("--no-breaks", action="store_true", help="skip the broken simulators (no kind column)")
    r.add_argument("--no-figures", action="store_true")
    r.add_argument("--fig11-seeds", type=int, nargs="*", default=[0, 1, 2, 3, 4],
                   help="seeds of the figure-11 (Elo per agent-time) rows; none to skip them (default 0..4)")
    add_engine_options(r)
    add_common(r, table=False, writes=True)
    r.set_defaults(func=run)
    c = sub.add_parser("calibrate", help="fit the generator, cost law and value noise to the claim table")
    c.add_argument("--out", required=True, help="where to write the fitted parameter JSON")
    c.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102, 103, 104, 105])
    c.add_argument("--select-seeds", type=int, nargs="*", default=[200, 201, 202, 203, 204, 205],
                   help="selection seeds (none: keep the search's result)")
    c.add_argument("--dags", type=int, default=16)
    c.add_argument("--passes", type=int, default=1)
    c.add_argument("--robust", action="store_true",
                   help="robustness-aware objective: a row counts only if it holds on >= 2 of 3 seeds of each "
                        "consecutive seed triple (calibration and selection seeds alike)")
    c.add_argument("--margin", type=float, default=None, metavar="K",
                   help="margin objective: count rows whose mean over the seeds lies inside the tolerance by at "
                        "least K seed-to-seed sd (evalkit.sim.margins); not with --robust")
    c.add_argument("--start", default=None, help="starting parameter JSON (default: the bundled set)")
    add_engine_options(c)
    c.add_argument("--force", action="store_true", help="replace an existing --out file")
    add_common(c, table=False)
    c.set_defaults(func=run)
    m = sub.add_parser("margins", help="each claim row's mean, seed-to-seed sd and margin to its tolerance edge")
    m.add_argument("--out", required=True, help="CSV file")
    m.add_argument("--groups", nargs="+", default=["100-105", "200-205"],
                   help="seed groups, each 'A-B' or 'A,B,C' (default: the calibration and selection seeds)")
    m.add_argument("--dags", type=int, default=16)
    m.add_argument("--k", type=float, default=1.0, help="margin (in sd) a robust row needs (default 1)")
    m.add_argument("--params", default=None, help="parameter JSON (default: the bundled calibrated set)")
    m.add_argument("--kinds", default=None, help="a claims.csv of `simulate reproduce` (its kind column is added "
                                                 "and the expected evidence rows counted)")
    add_engine_options(m)
    m.add_argument("--force", action="store_true", help="replace an existing --out file")
    add_common(m, table=False)
    m.set_defaults(func=run)
    t = sub.add_parser("tradeoffs", help="for each row a candidate misses: its range over a calibration history "
                                         "and what the best candidate that reproduces it loses")
    t.add_argument("history", help="calibration history CSV with a 'values' column")
    t.add_argument("--chosen", type=int, default=0, help="row position of the reference candidate (default 0)")
    t.add_argument("--out", required=True, help="CSV file")
    t.add_argument("--expected", default=None, metavar="FILE",
                   help="also write each candidate's approximate expected rows per fresh seed triple (needs "
                        "--margins, one seed group of a margins CSV; --kinds adds the evidence count)")
    t.add_argument("--margins", default=None, help="margins CSV (evalkit simulate margins) for --expected")
    t.add_argument("--group", default="100-105", help="the seed group of --margins to use (default 100-105)")
    t.add_argument("--kinds", default=None, help="claims.csv with a kind column (for --expected)")
    t.add_argument("--force", action="store_true", help="replace an existing --out file")
    add_common(t, table=False)
    t.set_defaults(func=run)
    s = sub.add_parser("run", help="simulate runs and write their tidy event trace")
    s.add_argument("--agents", type=int, default=16)
    s.add_argument("--swarm", default="standard", choices=["standard", "recursive"])
    s.add_argument("--rule", default="own-branch")
    s.add_argument("--dags", type=int, default=1, help="number of generated DAGs (one run each)")
    s.add_argument("--edges", default=None, help="CSV parent,child of a user DAG (with --steps)")
    s.add_argument("--steps", default=None, help="CSV step,duration[,value] of a user DAG")
    s.add_argument("--overheads", action="store_true", help="apply scheduling and communication overheads")
    add_rng(s, "--seed", help="seed of the generated DAGs and runs")
    s.add_argument("--params", default=None)
    s.add_argument("--out", required=True, help="trace file (.csv or .parquet)")
    add_engine_options(s)
    s.add_argument("--force", action="store_true", help="replace an existing --out file")
    add_common(s, table=False)
    s.set_defaults(func=run)


def _run_trace(task: tuple) -> object:
    """One ``simulate run`` job (module level so that process pools can pickle it)."""
    from evalkit.sim.swarms import simulate

    i, dag, params, args, seed = task
    s, c = (params.scheduling, params.communication) if args["overheads"] else (0.0, 0.0)
    return simulate(dag, agents=args["agents"], swarm=args["swarm"], rule=args["rule"], policy=params.policy,
                    scheduling=s, communication=c, baseline=args["agents"] == 1, rng=seed).trace(run=i)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit simulate ACTION``."""
    from evalkit.sim.experiments import load_params, save_params

    if args.action == "tradeoffs":
        return _tradeoffs(args)
    params = load_params(getattr(args, "params", None) or getattr(args, "start", None))
    ex = dict(engine=args.engine, workers=args.workers, scheduler=args.scheduler)
    progress = args.ui.progress
    if args.action == "reproduce":
        return _reproduce(args, params, ex)
    if args.action == "margins":
        return _margins(args, params, ex)
    if args.action == "calibrate":
        from evalkit._output import atomic_file
        from evalkit.sim.calibrate import calibrate, seed_triples, select

        out = Path(args.out)
        with atomic_file(out, force=args.force) as tmp, \
                atomic_file(out.with_suffix(".history.csv"), force=args.force) as tmp_h, \
                atomic_file(out.with_suffix(".selection.csv"), force=args.force) as tmp_s:
            if args.robust and args.margin is not None:
                raise ValueError("--robust and --margin are two objectives; give one of them.")
            groups = seed_triples(args.seeds) if args.robust else None
            best, score, hist = calibrate(params, seeds=args.seeds, n_dags=args.dags, max_passes=args.passes,
                                          log=args.ui.info, groups=groups, margin=args.margin, **ex)
            hist.to_csv(tmp_h, index=False)
            objective = ("robust (every seed triple)" if args.robust else "rows on >= 2/3 of seeds"
                         if args.margin is None else f"margin (rows inside the tolerance by >= {args.margin:g} sd)")
            fitted = {"score": str(score), "seeds": args.seeds, "n_dags": args.dags, "evaluations": len(hist),
                      "objective": objective}
            if args.select_seeds:
                sel_groups = seed_triples(args.select_seeds) if args.robust else None
                best, sel = select(hist, seeds=args.select_seeds, n_dags=args.dags, groups=sel_groups,
                                   margin=args.margin, **ex)
                sel.to_csv(tmp_s, index=False)
                fitted["selection_seeds"] = args.select_seeds
            save_params(best, tmp, fitted=fitted)
        if not args.select_seeds:
            out.with_suffix(".selection.csv").unlink(missing_ok=True)
        print(f"best: {score}; written to {args.out}")
        return 0
    # run
    import numpy as np
    import pandas as pd

    from evalkit.sim.dag import read_dag
    from evalkit.sim.experiments import sweep_executor
    from evalkit.sim.generator import generate_dags

    if (args.edges is None) != (args.steps is None):
        raise ValueError("--edges and --steps go together (a user DAG needs both files).")
    dags = [read_dag(args.edges, args.steps)] if args.edges else generate_dags(args.dags, params.generator,
                                                                               rng=args.rng)
    seeds = np.random.SeedSequence(args.rng).spawn(len(dags))
    opts = {"agents": args.agents, "swarm": args.swarm, "rule": args.rule, "overheads": args.overheads}
    from evalkit.sim.swarms import _check

    _check(args.agents, args.swarm, args.rule, params.scheduling, params.communication)  # fail before forking
    jobs = [(i, d, params, opts, np.random.default_rng(ss)) for i, (d, ss) in enumerate(zip(dags, seeds, strict=True))]
    executor = sweep_executor("serial" if args.engine is None and len(jobs) == 1 else args.engine,
                              workers=args.workers, scheduler=args.scheduler)
    from evalkit._output import atomic_file

    out = Path(args.out)
    with atomic_file(out, force=args.force) as tmp:  # checked before the runs: an existing file needs --force
        trace = pd.concat(executor.map(_run_trace, jobs, progress=progress, stage="runs"), ignore_index=True)
        args.ui.close_bar()
        trace.to_parquet(tmp) if out.suffix == ".parquet" else trace.to_csv(tmp, index=False)
    print(f"{len(dags)} runs, {len(trace)} step events written to {out}")
    return 0


def _seed_group(text: str) -> list[int]:
    try:
        if "-" in text:
            a, b = (int(x) for x in text.split("-"))
            return list(range(a, b + 1))
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--groups takes seed groups like '100-105' or '0,1,2'. Got {text!r} instead.") from None


def _margins(args: argparse.Namespace, params, ex: dict) -> int:
    """``simulate margins``: the margin table of :mod:`evalkit.sim.margins` per seed group."""
    import pandas as pd

    from evalkit._output import atomic_file
    from evalkit.sim.margins import margins_by_group

    groups = [_seed_group(g) for g in args.groups]
    kinds = None
    if args.kinds:
        kinds = pd.read_csv(args.kinds)
        if not {"claim", "kind"} <= set(kinds.columns):
            raise ValueError(f"--kinds {args.kinds!r} must have the columns 'claim' and 'kind' (a claims.csv of "
                             f"`simulate reproduce` with breaks). Got {list(kinds.columns)} instead.")
    with atomic_file(Path(args.out), force=args.force) as tmp:
        table = margins_by_group(params, groups, n_dags=args.dags, k=args.k, progress=args.ui.progress, **ex)
        args.ui.close_bar()
        if kinds is not None:
            table = table.merge(kinds[["claim", "kind"]], on="claim", how="left")
        table.to_csv(tmp, index=False)
    for g, t in table.groupby("seeds", sort=False):
        ev = "" if kinds is None else f", {t.loc[t['kind'] == 'evidence', 'p_triple'].sum():.1f} of them evidence"
        print(f"seeds {g}: {int(t['robust'].sum())} of {len(t)} rows robust (margin >= {args.k:g} sd); a fresh "
              f"seed triple is expected to hold {t['p_triple'].sum():.1f} rows{ev}")
    return 0


def _tradeoffs(args: argparse.Namespace) -> int:
    """``simulate tradeoffs``: :func:`evalkit.sim.tradeoffs.row_tradeoffs` of a calibration history."""
    import pandas as pd

    from evalkit._output import atomic_file
    from evalkit.sim.tradeoffs import expected_counts, row_tradeoffs

    history = pd.read_csv(args.history)
    table = row_tradeoffs(history, chosen=args.chosen)
    if args.expected:
        if not args.margins:
            raise ValueError("--expected needs --margins (a CSV of `evalkit simulate margins`).")
        m = pd.read_csv(args.margins)
        m = m.loc[m["seeds"].astype(str) == args.group]
        if m.empty:
            raise ValueError(f"--margins {args.margins!r} has no rows for seed group {args.group!r}.")
        exp = expected_counts(history, m, kinds=pd.read_csv(args.kinds) if args.kinds else None)
        with atomic_file(Path(args.expected), force=args.force) as tmp:
            exp.to_csv(tmp, index=False)
        best = exp.iloc[int(exp["expected_rows"].to_numpy().argmax())]
        print(f"expected rows per fresh seed triple: {exp['expected_rows'].iloc[0]:.1f} for candidate 0, at most "
              f"{best['expected_rows']:.1f} ({best['candidate']})")
    with atomic_file(Path(args.out), force=args.force) as tmp:
        table.to_csv(tmp, index=False)
    print(f"{len(table)} rows missed by candidate {args.chosen}; "
          f"{int((table['inside'] == 0).sum())} of them never inside in {table['candidates'].max()} candidates")
    return 0


class _FigureProgress:
    """Progress of ``simulate reproduce``: the figures' stages interleave (one shared pool), so a
    terminal gets one bar per figure stage, stacked; elsewhere the UI's own per-stage lines.
    Remembers when each stage finished (``finished``)."""

    def __init__(self, ui) -> None:
        self.ui = ui
        self.bars: dict[str, Any] = {}
        self.finished: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if total and done >= total:
            self.finished.setdefault(stage, time.perf_counter())
        if not self.ui.bars:
            self.ui.progress(stage, done, total)
            return
        from tqdm import tqdm

        from evalkit._escape import label

        if stage not in self.bars:
            self.bars[stage] = tqdm(total=total, desc=label(stage), file=self.ui.err, position=len(self.bars),
                                    leave=False, mininterval=0.25, dynamic_ncols=True)
        bar = self.bars[stage]
        bar.update(done - bar.n)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars = {}


def _reproduce(args: argparse.Namespace, params, ex: dict) -> int:
    """``simulate reproduce``: figures 2-10 (and 11) into a new folder, built atomically."""
    from evalkit._output import atomic_output_dir, check_out_path
    from evalkit.sim.breaks import BREAKS
    from evalkit.studies.reproduce import reproduce

    ui = args.ui
    check_out_path(args.out, force=args.force)
    record = {"command": "simulate reproduce", "parameters": {
        "seeds": args.seeds, "dags": args.dags, "fig11_seeds": args.fig11_seeds,
        "params_file": args.params or "bundled data/sim/calibrated.json",
        "params": params.to_dict(),  # the values used, whichever file they came from
        "no_breaks": args.no_breaks}}
    lines = []
    bars = _FigureProgress(ui)
    with atomic_output_dir(args.out, force=args.force, raw_csv=args.raw_csv, record=record) as folder:
        t0 = time.perf_counter()
        rep = reproduce(folder.path, params=params, seeds=args.seeds, n_dags=args.dags,
                        breaks=() if args.no_breaks else tuple(BREAKS), figures=not args.no_figures,
                        fig11_seeds=args.fig11_seeds, progress=bars, **ex)
        bars.close()
        for g, c in rep.counts().items():
            kind = f", {c['evidence_held']} of them evidence" if not args.no_breaks else ""
            lines.append(f"figures 2-10: {c['held']} of {c['rows']} rows hold on >= 2/3 of seeds {g}{kind}")
        lines.append(f"figures 2-10: {args.dags} DAGs per seed; table: {Path(args.out) / 'claims.md'}")
        f11 = rep.figure11
        if f11 is not None:
            ev = int(((f11["kind"] == "evidence") & f11["holds"]).sum()) if "kind" in f11 else 0
            lines.append(f"figure 11: {int(f11['holds'].sum())} of {len(f11)} rows hold on >= 2/3 of seeds "
                         f"{args.fig11_seeds}" + (f", {ev} of them evidence" if "kind" in f11 else "")
                         + f"; appended to {Path(args.out) / 'claims.md'}")
        lines.append("jobs done at " + ", ".join(f"{s}: {t - t0:.1f} s" for s, t in bars.finished.items())
                     + f"; total: {time.perf_counter() - t0:.1f} s")
    print("\n".join(lines))  # after the folder is in place
    return 0
