"""Reproduce seed 000's figures 2-11: the simulator's claim tables, figure 11, and the figures.

``reproduce(out)`` (CLI: ``evalkit simulate reproduce --out DIR``) writes the files of
:func:`evalkit.sim.reproduce.write_tables` (the claim tables of figures 2-10 and ``params.json``),
``fig02_single.png`` ... ``fig09_10_width.png`` (first seed), and with ``fig11_seeds`` figure
11's tables, appended to ``claims.md`` (:func:`evalkit.studies.fig11_claims.write_figure11_outputs`).

Figures 2-10 and figure 11 are one executor map: figure 11's long seed jobs first, then the
best-of-n null, then the short DAG jobs of figures 2-10 that fill both workers to the end.
Every job seeds itself from its arguments, so the tables are the same on any engine. This
module is a study, not part of :mod:`evalkit.sim`: figure 11 runs the simulator's sessions
through the analysis path (:mod:`evalkit.budget`), and the figures are drawn by
:mod:`evalkit.plots`; the simulator itself imports neither.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit._progress import ProgressFn
from evalkit.plots._figure import subplots
from evalkit.sim.breaks import BREAKS
from evalkit.sim.experiments import (
    SIZES,
    WIDTH_LAYERS,
    Results,
    SimParams,
    load_params,
    sweep_executor,
)
from evalkit.sim.reproduce import (
    REPORT_GROUPS,
    REPORT_SEEDS,
    Reproduction,
    claim_jobs,
    claim_results,
    resolve_groups,
    run_claim_job,
    to_markdown,
    write_tables,
)
from evalkit.studies.fig11 import Figure11Config
from evalkit.studies.fig11_claims import (
    FIG11_BREAKS,
    FIG11_STAGE,
    figure11_job,
    figure11_jobs,
    figure11_summary,
    figure11_table,
    write_figure11_outputs,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["reproduce", "write_figures", "Reproduction", "to_markdown", "REPORT_SEEDS", "REPORT_GROUPS"]


def _pair(*, sharex: bool = False) -> tuple[Figure, Any]:
    return subplots(1, 2, figsize=(10, 3.8), sharex=sharex)


def write_figures(r: Results, out: str | os.PathLike, params: SimParams) -> list[Path]:
    """Seed 000's figures 2-10 of one seed's results as PNG files in ``out``; their paths."""
    from evalkit.plots.sim import plot_level_curves, plot_shares, plot_speedups, plot_width

    out = Path(out)

    paths = []

    def save(fig: Figure, name: str, title: str) -> None:
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        p = out / name
        fig.savefig(p, dpi=110, metadata={"Software": None})
        paths.append(p)

    std = {"1 agent": "single", **{f"standard {k}": f"standard|{k}" for k in SIZES}}
    rec = {"1 agent": "single", **{f"recursive {k}": f"recursive|{k}" for k in SIZES}}
    for name, series, title in (
        ("fig02_single.png", {"1 agent": "single"}, "Figure 2: one agent, mean of 16 runs (coverage, best score)"),
        ("fig03_standard.png", std, "Figure 3: standard swarms"),
        ("fig04_recursive.png", rec, "Figure 4: recursive swarms"),
    ):
        fig, axes = _pair(sharex=True)
        plot_level_curves(r, series, metric="coverage", ax=axes[0])
        plot_level_curves(r, series, metric="best", ax=axes[1])
        save(fig, name, f"{title} (seed {r.seed})")
    fig, axes = _pair()
    both = {"standard": "standard|{k}", "recursive": "recursive|{k}"}
    plot_speedups(r, both, sizes=SIZES, metric="coverage", ax=axes[0])
    plot_speedups(r, both, sizes=SIZES, metric="best", ax=axes[1])
    save(fig, "fig05_compare.png", f"Figure 5: speedup at 90 % vs swarm size (seed {r.seed})")
    fig, axes = _pair()
    rules = {"own branch": "standard|{k}", **{u: f"rule|{u}|{{k}}" for u in ("random", "shallowest", "shortest",
                                                                           "critical-path")}}
    plot_speedups(r, rules, sizes=SIZES, metric="coverage", level=0.5, ax=axes[0])
    plot_speedups(r, rules, sizes=SIZES, metric="best", level=0.5, ax=axes[1])
    save(fig, "fig06_rules.png", f"Figure 6: step-selection rules, speedup at 50 % (seed {r.seed})")
    fig, axes = subplots(1, 3, figsize=(14, 3.8))
    plot_shares(r, sizes=SIZES, ax=axes[0])
    for ax, metric in zip(axes[1:], ("coverage", "best"), strict=True):
        plot_speedups(r, {"standard, no overheads": "standard|{k}", "standard, overheads": "costs|standard|{k}"},
                      sizes=SIZES, metric=metric, level=0.9, ax=ax)
    save(fig, "fig07_overheads.png", f"Figure 7: overheads of a standard swarm (seed {r.seed})")
    fig, ax = subplots(figsize=(6.5, 4))
    for swarm in ("standard", "recursive"):
        for metric, ls in (("coverage", "-"), ("best", "--")):
            ax.plot(SIZES, [r.agent_time_ratio(f"{swarm}|{k}", metric, 0.9) for k in SIZES], marker="o", ls=ls,
                    label=f"{swarm}, 90% {'coverage' if metric == 'coverage' else 'best score'}")
    ax.axhline(1, color="grey", lw=0.8, label="one agent")
    ax.axhspan(0.70, 0.96, color="tab:orange", alpha=0.12, label="post: 90 % best, 0.70-0.96")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("agents")
    ax.set_ylabel("agent-time / one agent's")
    ax.legend(fontsize=7)
    save(fig, "fig08_agent_time.png", f"Figure 8: total agent-time to 90 % (seed {r.seed}, no overheads)")
    fig, axes = _pair()
    mean_steps = float(params.width_steps * np.exp(params.generator.n_steps_sigma ** 2 / 2))
    plot_width(r, layers=WIDTH_LAYERS, level=0.9, mean_steps=mean_steps, ax=axes[0])
    plot_width(r, layers=WIDTH_LAYERS, level=0.99, mean_steps=mean_steps, ax=axes[1])
    save(fig, "fig09_10_width.png", f"Figures 9-10: speedup of 16 agents vs task width (seed {r.seed})")
    return paths


def reproduce(
    out: str | os.PathLike | None = None, *, params: SimParams | None = None, seeds: Sequence[int] = REPORT_SEEDS,
    groups: Sequence[Sequence[int]] | str | None = "auto", n_dags: int = 16, breaks: Sequence[str] = tuple(BREAKS),
    engine: str | None = None, workers: int | None = None, scheduler: object = None,
    progress: ProgressFn | None = None, figures: bool = True, fig11_seeds: Sequence[int] = (),
    fig11_config: Figure11Config | None = None,
) -> Reproduction:
    """Run figures 2-10 for each seed, and under each broken simulator, (with ``fig11_seeds``)
    figure 11, and (if ``out``) write the tables and figures there.

    Parameters
    ----------
    out : path, optional
    params : SimParams, optional
        Default: the bundled calibrated set.
    seeds, groups
        Reporting seeds, and the groups in which "holds on >= 2/3 of the seeds" is counted.
        ``"auto"``: consecutive groups of three seeds when there are 6, 9, ... seeds (the
        default: 0-2 and 7-9 separately), else all seeds together; ``None``: all together.
    n_dags : int
        DAGs per seed (16 as in the post).
    breaks : names from :data:`evalkit.sim.breaks.BREAKS`
        Broken simulators that decide a row's kind; empty to skip (no ``kind`` column).
    engine, workers, scheduler
        The executor (:func:`evalkit.engine.get_executor`; default: the process pool).
    progress : callable, optional
        ``progress(stage, done, total)`` per finished job, one stage per figure group (the stages
        interleave: every job shares one executor map).
    figures : bool
        Write the PNG figures (with ``out``).
    fig11_seeds : sequence of int
        Seeds of figure 11 (:func:`evalkit.studies.figure11_reproduction`; empty: skip it), run
        under the breaks of ``breaks`` that can change it (its files are written with ``out``).
    fig11_config : Figure11Config, optional
        Default: ``Figure11Config(params=params, bootstrap=0)``.
    """
    params = params or load_params()
    cj = claim_jobs(params, seeds=seeds, n_dags=n_dags, breaks=breaks)
    reporting = resolve_groups(seeds, groups)
    f11 = _fig11_jobs(params, fig11_seeds, fig11_config, breaks) if fig11_seeds else None
    f11_jobs = f11[2] if f11 else []
    ex = sweep_executor(engine, workers=workers, scheduler=scheduler)
    outs = ex.map(_job, [("fig11", j) for j in f11_jobs] + [("sim", j) for j in cj.jobs], progress=progress,
                  stage=[f11[3]] * len(f11_jobs) + cj.stages if f11 else cj.stages)
    rep = claim_results(cj, outs[len(f11_jobs):], params, reporting)
    if out is not None:
        write_tables(out, rep)
        if figures:
            write_figures(rep.results[0], out, params)
    fig11 = _fig11_outputs(out, f11, fig11_seeds, outs[:len(f11_jobs)], figures) if f11 else None
    return dataclasses.replace(rep, figure11=fig11)


def _job(args: tuple) -> object:
    """One job of the shared map: a figure 2-10 DAG job or a figure-11 job."""
    kind, job = args
    if kind == "sim":
        return run_claim_job(job)
    return figure11_job(job)


def _fig11_jobs(params: SimParams, seeds: Sequence[int], config: Figure11Config | None,
                breaks: Sequence[str]) -> tuple:
    """(simulators, breaks, jobs, progress stage) of figure 11 on ``seeds`` under the breaks that can change it."""
    config = config if config is not None else Figure11Config(params=params, bootstrap=0)
    f11_breaks = tuple(b for b in FIG11_BREAKS if b in breaks)
    sims, jobs = figure11_jobs(config, seeds=seeds, breaks=f11_breaks, keep_first=True)
    return sims, f11_breaks, jobs, FIG11_STAGE


def _fig11_outputs(out: str | os.PathLike | None, f11: tuple, seeds: Sequence[int], outs: list,
                   figures: bool) -> pd.DataFrame:
    """Figure 11's claim table from its jobs' outputs, written to ``out`` when given; the summary."""
    sims, f11_breaks, _, _ = f11
    allrows, first = figure11_table(sims, seeds, outs, keep_first=True)
    if out is not None:
        return write_figure11_outputs(out, allrows, first, seeds=seeds, breaks=f11_breaks, figure=figures)
    return figure11_summary(allrows, breaks=f11_breaks)
