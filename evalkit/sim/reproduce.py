"""Reproduce seed 000's figures 2-10: run the experiments, the broken simulators, write the claim table.

``reproduce(out)`` (CLI: ``evalkit simulate reproduce --out DIR``) writes

* ``claims_by_seed.csv`` - one row per (claim, seed): value, holds;
* ``claims.csv`` / ``claims.md`` - one row per claim: seed value, evalkit value per seed,
  tolerance, seeds held in each reporting group (0-2 and 7-9), holds, **kind** (evidence or
  restatement, from the broken simulators of :mod:`evalkit.sim.breaks`) and a note;
* ``breaks_by_seed.csv`` - the same rows under each broken simulator;
* ``fig02_single.png`` ... ``fig09_10_width.png`` (first seed);
* ``params.json`` - the parameter set used;
* with ``fig11_seeds``, figure 11's tables, appended to ``claims.md``
  (:func:`evalkit.studies.fig11_claims.write_figure11_outputs`).

Figures 2-10 and figure 11 are one executor map: figure 11's long seed jobs first, then the
best-of-n null, then the short DAG jobs of figures 2-10 that fill both workers to the end.
Every job seeds itself from its arguments, so the tables are the same on any engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalkit._progress import ProgressFn
from evalkit.sim.breaks import BREAKS, break_params
from evalkit.sim.claims import claim_table, evidence_kinds, summarise
from evalkit.sim.experiments import (
    ALL_PARTS,
    SIZES,
    WIDTH_LAYERS,
    Results,
    SimParams,
    _task,
    collect_variants,
    load_params,
    save_params,
    sweep_executor,
    variant_jobs,
)
from evalkit.sim.notes import LEGEND, NOTES

if TYPE_CHECKING:
    from evalkit.studies.fig11 import Figure11Config

__all__ = ["Reproduction", "reproduce", "to_markdown", "REPORT_SEEDS", "REPORT_GROUPS"]

REPORT_SEEDS: tuple[int, ...] = (0, 1, 2, 7, 8, 9)
REPORT_GROUPS: tuple[tuple[int, ...], ...] = ((0, 1, 2), (7, 8, 9))


@dataclass(frozen=True)
class Reproduction:
    """Claim table per seed (``by_seed``), per claim (``summary``, with ``kind``), the broken
    simulators' tables (``broken``), the raw results and figure 11's per-claim summary (when run)."""

    by_seed: pd.DataFrame
    summary: pd.DataFrame
    broken: pd.DataFrame
    results: list[Results]
    params: SimParams
    figure11: pd.DataFrame | None = None

    @property
    def rows_held(self) -> int:
        return int(self.summary["holds"].sum())

    def counts(self) -> dict[str, dict[str, int]]:
        """Per reporting group: rows, rows held, evidence rows, evidence rows held (0 without breaks)."""
        out = {}
        s = self.summary
        cols = [c for c in s.columns if c.startswith("holds_")] or ["holds"]
        ev = s["kind"] == "evidence" if "kind" in s else pd.Series(False, index=s.index)
        for c in cols:
            held = s[c].astype(bool)
            out[c.removeprefix("holds_")] = {"rows": len(s), "held": int(held.sum()), "evidence": int(ev.sum()),
                                             "evidence_held": int((held & ev).sum())}
        return out


def _fmt(x: object) -> str:
    return "" if x is None or (isinstance(x, float) and pd.isna(x)) else f"{x:.3g}"


def to_markdown(summary: pd.DataFrame) -> str:
    """The per-claim table as Markdown, then one count line per reporting group."""
    seeds = [c for c in summary.columns if c.startswith("value_seed")]
    groups = [c.removeprefix("holds_") for c in summary.columns if c.startswith("holds_")]
    held = [f"held_{g}" for g in groups] if groups else ["seeds_held"]
    has_kind = "kind" in summary.columns
    head = ["claim", "figure", "what", "seed value", *[c.replace("value_", "") for c in seeds], "tolerance",
            *[h.replace("_", " ") for h in held], "holds", *(["kind", "fails under"] if has_kind else []), "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in summary.iterrows():
        hv = [str(r[h]) if groups else f"{r['seeds_held']}/{r['n_seeds']}" for h in held]
        kind = [r["kind"] if r["kind"] == "restatement" else "**evidence**", r["breaks_failed"]] if has_kind else []
        lines.append("| " + " | ".join([r["claim"], str(r["figure"]), r["text"], _fmt(r["seed_value"]),
                                        *[_fmt(r[c]) for c in seeds], r["tolerance"], *hv,
                                        "yes" if r["holds"] else "**no**", *kind, r.get("note", "") or ""]) + " |")
    lines.append("")
    for g in groups or [None]:
        col = f"holds_{g}" if g else "holds"
        n = int(summary[col].sum())
        where = f"seeds {g}" if g else "the seeds"
        line = f"{n} of {len(summary)} rows hold on at least 2/3 of {where}"
        if has_kind:
            ev = int((summary[col].astype(bool) & (summary["kind"] == "evidence")).sum())
            line += f"; {ev} of them are evidence rows, {n - ev} restatements"
        lines.append(line + ".")
    if has_kind:
        k = summary["kind"].value_counts()
        lines.append(f"Kinds over all rows: {int(k.get('evidence', 0))} evidence, {int(k.get('restatement', 0))} "
                     "restatement.")
    if "note" in summary and summary["note"].fillna("").astype(bool).any():
        lines += ["", LEGEND]
    return "\n".join(lines) + "\n"


def _pair(plt, *, sharex: bool = False):
    return plt.subplots(1, 2, figsize=(10, 3.8), sharex=sharex)


def _figures(r: Results, out: Path, params: SimParams) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from evalkit.plots.sim import plot_level_curves, plot_shares, plot_speedups, plot_width

    paths = []

    def save(fig, name, title):
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        p = out / name
        fig.savefig(p, dpi=110, metadata={"Software": None})
        plt.close(fig)
        paths.append(p)

    std = {"1 agent": "single", **{f"standard {k}": f"standard|{k}" for k in SIZES}}
    rec = {"1 agent": "single", **{f"recursive {k}": f"recursive|{k}" for k in SIZES}}
    for name, series, title in (
        ("fig02_single.png", {"1 agent": "single"}, "Figure 2: one agent, mean of 16 runs (coverage, best score)"),
        ("fig03_standard.png", std, "Figure 3: standard swarms"),
        ("fig04_recursive.png", rec, "Figure 4: recursive swarms"),
    ):
        fig, axes = _pair(plt, sharex=True)
        plot_level_curves(r, series, metric="coverage", ax=axes[0])
        plot_level_curves(r, series, metric="best", ax=axes[1])
        save(fig, name, f"{title} (seed {r.seed})")
    fig, axes = _pair(plt)
    both = {"standard": "standard|{k}", "recursive": "recursive|{k}"}
    plot_speedups(r, both, sizes=SIZES, metric="coverage", ax=axes[0])
    plot_speedups(r, both, sizes=SIZES, metric="best", ax=axes[1])
    save(fig, "fig05_compare.png", f"Figure 5: speedup at 90 % vs swarm size (seed {r.seed})")
    fig, axes = _pair(plt)
    rules = {"own branch": "standard|{k}", **{u: f"rule|{u}|{{k}}" for u in ("random", "shallowest", "shortest",
                                                                           "critical-path")}}
    plot_speedups(r, rules, sizes=SIZES, metric="coverage", level=0.5, ax=axes[0])
    plot_speedups(r, rules, sizes=SIZES, metric="best", level=0.5, ax=axes[1])
    save(fig, "fig06_rules.png", f"Figure 6: step-selection rules, speedup at 50 % (seed {r.seed})")
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    plot_shares(r, sizes=SIZES, ax=axes[0])
    for ax, metric in zip(axes[1:], ("coverage", "best"), strict=True):
        plot_speedups(r, {"standard, no overheads": "standard|{k}", "standard, overheads": "costs|standard|{k}"},
                      sizes=SIZES, metric=metric, level=0.9, ax=ax)
    save(fig, "fig07_overheads.png", f"Figure 7: overheads of a standard swarm (seed {r.seed})")
    fig, ax = plt.subplots(figsize=(6.5, 4))
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
    fig, axes = _pair(plt)
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
    if isinstance(groups, str):
        if groups != "auto":
            raise ValueError(f"groups must be 'auto', None or a list of seed groups; got {groups!r}.")
        groups = [tuple(seeds[k:k + 3]) for k in range(0, len(seeds), 3)] if len(seeds) % 3 == 0 and \
            len(seeds) > 3 else None
    if groups is not None:
        missing = sorted({int(x) for g in groups for x in g} - {int(x) for x in seeds})
        if missing:
            raise ValueError(f"groups name seeds {missing} that are not in seeds {list(seeds)}.")
    variants = {"model": (params, ALL_PARTS)}
    variants.update({b: (break_params(params, b), BREAKS[b].parts) for b in breaks})
    jobs, stages = variant_jobs(variants, seeds=seeds, n_dags=n_dags)
    f11 = _fig11_jobs(params, fig11_seeds, fig11_config, breaks) if fig11_seeds else None
    f11_jobs = f11[2] if f11 else []
    ex = sweep_executor(engine, workers=workers, scheduler=scheduler)
    outs = ex.map(_job, [("fig11", j) for j in f11_jobs] + [("sim", j) for j in jobs], progress=progress,
                  stage=[f11[3]] * len(f11_jobs) + stages if f11 else stages)
    res = collect_variants(variants, jobs, outs[len(f11_jobs):], seeds=seeds, n_dags=n_dags)
    results = res["model"]
    by_seed = claim_table(results)
    summary = summarise(by_seed, groups)
    tables = {b: claim_table([r.merged(m) for r, m in zip(res[b], results, strict=True)]) for b in breaks}
    broken = pd.concat([t.assign(simulator=b) for b, t in tables.items()], ignore_index=True) if tables else \
        pd.DataFrame()
    if tables:
        summary = summary.merge(evidence_kinds(by_seed, tables), on="claim", how="left")
    summary["note"] = [("" if h else NOTES.get(c, "")) for c, h in zip(summary["claim"], summary["holds"],
                                                                        strict=True)]
    if out is not None:
        o = Path(out)
        o.mkdir(parents=True, exist_ok=True)
        by_seed.to_csv(o / "claims_by_seed.csv", index=False)
        summary.to_csv(o / "claims.csv", index=False)
        if tables:
            broken.to_csv(o / "breaks_by_seed.csv", index=False)
        (o / "claims.md").write_text(to_markdown(summary))
        save_params(params, o / "params.json")
        if figures:
            _figures(results[0], o, params)
    fig11 = _fig11_outputs(out, f11, fig11_seeds, outs[:len(f11_jobs)], figures) if f11 else None
    return Reproduction(by_seed, summary, broken, results, params, fig11)


def _job(args: tuple) -> object:
    """One job of the shared map: a figure 2-10 DAG job or a figure-11 job."""
    kind, job = args
    if kind == "sim":
        return _task(job)
    from evalkit.studies.fig11_claims import figure11_job

    return figure11_job(job)


def _fig11_jobs(params: SimParams, seeds: Sequence[int], config: Figure11Config | None,
                breaks: Sequence[str]) -> tuple:
    """(simulators, breaks, jobs, progress stage) of figure 11 on ``seeds`` under the breaks that can change it."""
    from evalkit.studies import Figure11Config
    from evalkit.studies.fig11_claims import FIG11_BREAKS, FIG11_STAGE, figure11_jobs

    config = config if config is not None else Figure11Config(params=params, bootstrap=0)
    f11_breaks = tuple(b for b in FIG11_BREAKS if b in breaks)
    sims, jobs = figure11_jobs(config, seeds=seeds, breaks=f11_breaks, keep_first=True)
    return sims, f11_breaks, jobs, FIG11_STAGE


def _fig11_outputs(out: object, f11: tuple, seeds: Sequence[int], outs: list, figures: bool) -> pd.DataFrame:
    """Figure 11's claim table from its jobs' outputs, written to ``out`` when given; the summary."""
    from evalkit.studies.fig11_claims import (
        figure11_summary,
        figure11_table,
        write_figure11_outputs,
    )

    sims, f11_breaks, _, _ = f11
    allrows, first = figure11_table(sims, seeds, outs, keep_first=True)
    if out is not None:
        return write_figure11_outputs(out, allrows, first, seeds=seeds, breaks=f11_breaks, figure=figures)
    return figure11_summary(allrows, breaks=f11_breaks)
