"""Reproduce seed 000's figures 2-10: run the experiments, write the claim table and figures.

``reproduce(out)`` (CLI: ``evalkit simulate reproduce --out DIR``) writes

* ``claims_by_seed.csv`` - one row per (claim, seed): value, holds;
* ``claims.csv`` / ``claims.md`` - one row per claim: seed value, evalkit value per seed,
  tolerance, seeds held, holds (on >= 2 of 3 seeds), and a note for rows that do not hold;
* ``fig02_single.png`` ... ``fig10_width.png`` (first seed);
* ``params.json`` - the parameter set used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalkit.sim.claims import NOTES, claim_table, summarise
from evalkit.sim.experiments import (
    SIZES,
    WIDTH_LAYERS,
    Results,
    SimParams,
    load_params,
    run_experiments,
    save_params,
)

__all__ = ["Reproduction", "reproduce", "to_markdown"]


@dataclass(frozen=True)
class Reproduction:
    """Claim table per seed (``by_seed``), per claim (``summary``) and the raw results."""

    by_seed: pd.DataFrame
    summary: pd.DataFrame
    results: list[Results]
    params: SimParams

    @property
    def rows_held(self) -> int:
        return int(self.summary["holds"].sum())


def to_markdown(summary: pd.DataFrame) -> str:
    """The per-claim table as Markdown: claim | seed value | evalkit value per seed | tolerance | holds."""
    seeds = [c for c in summary.columns if c.startswith("value_seed")]
    head = ["claim", "figure", "what", "seed value", *[c.replace("value_", "") for c in seeds], "tolerance",
            "seeds held", "holds", "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in summary.iterrows():
        sv = "" if pd.isna(r["seed_value"]) else f"{r['seed_value']:g}"
        vals = [f"{r[c]:.3g}" for c in seeds]
        lines.append("| " + " | ".join([r["claim"], str(r["figure"]), r["text"], sv, *vals, r["tolerance"],
                                        f"{r['seeds_held']}/{r['n_seeds']}", "yes" if r["holds"] else "**no**",
                                        r.get("note", "") or ""]) + " |")
    n = int(summary["holds"].sum())
    lines.append("")
    lines.append(f"{n} of {len(summary)} rows hold on at least 2/3 of the seeds.")
    return "\n".join(lines) + "\n"


def _figures(r: Results, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from evalkit.plots.sim import plot_level_curves, plot_shares, plot_speedups, plot_width

    paths = []

    def save(fig, name):
        fig.tight_layout()
        p = out / name
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)

    std = {"1 agent": "single", **{f"standard {k}": f"standard|{k}" for k in SIZES}}
    rec = {"1 agent": "single", **{f"recursive {k}": f"recursive|{k}" for k in SIZES}}
    for name, series in (("fig02_single.png", {"1 agent": "single"}), ("fig03_standard.png", std),
                         ("fig04_recursive.png", rec)):
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        plot_level_curves(r, series, metric="coverage", ax=axes[0])
        plot_level_curves(r, series, metric="best", ax=axes[1])
        save(fig, name)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    both = {"standard": "standard|{k}", "recursive": "recursive|{k}"}
    plot_speedups(r, both, sizes=SIZES, metric="coverage", ax=axes[0])
    plot_speedups(r, both, sizes=SIZES, metric="best", ax=axes[1])
    save(fig, "fig05_compare.png")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    rules = {"own branch": "standard|{k}", **{u: f"rule|{u}|{{k}}" for u in ("random", "shallowest", "shortest",
                                                                           "critical-path")}}
    plot_speedups(r, rules, sizes=SIZES, metric="coverage", level=0.5, ax=axes[0])
    plot_speedups(r, rules, sizes=SIZES, metric="best", level=0.5, ax=axes[1])
    save(fig, "fig06_rules.png")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    plot_shares(r, sizes=SIZES, ax=axes[0])
    plot_speedups(r, {"standard, no overheads": "standard|{k}", "standard, overheads": "costs|standard|{k}"},
                  sizes=SIZES, metric="coverage", level=0.9, ax=axes[1])
    save(fig, "fig07_overheads.png")
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for swarm in ("standard", "recursive"):
        for metric, ls in (("coverage", "-"), ("best", "--")):
            ax.plot(SIZES, [r.agent_time_ratio(f"{swarm}|{k}", metric, 0.9) for k in SIZES], marker="o", ls=ls,
                    label=f"{swarm}, 90% {metric}")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("agents")
    ax.set_ylabel("agent-time / one agent's")
    ax.legend(fontsize=7)
    save(fig, "fig08_agent_time.png")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    plot_width(r, layers=WIDTH_LAYERS, level=0.9, ax=axes[0])
    plot_width(r, layers=WIDTH_LAYERS, level=0.99, ax=axes[1])
    save(fig, "fig09_10_width.png")
    return paths


def reproduce(
    out: str | os.PathLike | None = None, *, params: SimParams | None = None, seeds: Sequence[int] = (0, 1, 2),
    n_dags: int = 16, workers: int | None = None, figures: bool = True,
) -> Reproduction:
    """Run figures 2-10 for each seed and (if ``out``) write the tables and figures there."""
    params = params or load_params()
    results = run_experiments(params, seeds=seeds, n_dags=n_dags, workers=workers)
    by_seed = claim_table(results)
    summary = summarise(by_seed)
    summary["note"] = [("" if h else NOTES.get(c, "")) for c, h in zip(summary["claim"], summary["holds"],
                                                                        strict=True)]
    if out is not None:
        o = Path(out)
        o.mkdir(parents=True, exist_ok=True)
        by_seed.to_csv(o / "claims_by_seed.csv", index=False)
        summary.to_csv(o / "claims.csv", index=False)
        (o / "claims.md").write_text(to_markdown(summary))
        save_params(params, o / "params.json")
        if figures:
            _figures(results[0], o)
    return Reproduction(by_seed, summary, results, params)
