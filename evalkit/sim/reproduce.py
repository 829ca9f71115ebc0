"""Seed 000's figures 2-10 as claim tables: the simulator's side of ``evalkit simulate reproduce``.

The jobs of figures 2-10 (the model and each broken simulator of :mod:`evalkit.sim.breaks`),
their claim tables and the files they are written to. The whole reproduction, with figure 11
(a study on the analysis path) and the figures, is :func:`evalkit.studies.reproduce.reproduce`,
which runs these jobs and figure 11's in one executor map.

Files written by :func:`write_tables`:

* ``claims_by_seed.csv`` - one row per (claim, seed): value, holds;
* ``claims.csv`` / ``claims.md`` - one row per claim: seed value, evalkit value per seed,
  tolerance, seeds held in each reporting group (0-2 and 7-9), holds, **kind** (evidence or
  restatement, from the broken simulators) and a note;
* ``breaks_by_seed.csv`` - the same rows under each broken simulator;
* ``params.json`` - the parameter set used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalkit.sim.breaks import BREAKS, break_params
from evalkit.sim.claims import claim_table, evidence_kinds, summarise
from evalkit.sim.experiments import (
    ALL_PARTS,
    Results,
    SimParams,
    _task,
    collect_variants,
    save_params,
    variant_jobs,
)
from evalkit.sim.notes import LEGEND, NOTES

__all__ = ["Reproduction", "to_markdown", "REPORT_SEEDS", "REPORT_GROUPS", "resolve_groups", "ClaimJobs",
           "claim_jobs", "claim_results", "write_tables", "run_claim_job"]

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
    for g in [*groups] if groups else [None]:
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


def resolve_groups(seeds: Sequence[int], groups: Sequence[Sequence[int]] | str | None
                   ) -> list[tuple[int, ...]] | None:
    """The reporting groups of ``seeds``: ``"auto"`` is consecutive groups of three when there are
    6, 9, ... seeds (the default: 0-2 and 7-9 separately), else all seeds together (None)."""
    if isinstance(groups, str):
        if groups != "auto":
            raise ValueError(f"groups must be 'auto', None or a list of seed groups; got {groups!r}.")
        return [tuple(seeds[k:k + 3]) for k in range(0, len(seeds), 3)] if len(seeds) % 3 == 0 and \
            len(seeds) > 3 else None
    if groups is None:
        return None
    out = [tuple(int(x) for x in g) for g in groups]
    missing = sorted({x for g in out for x in g} - {int(x) for x in seeds})
    if missing:
        raise ValueError(f"groups name seeds {missing} that are not in seeds {list(seeds)}.")
    return out


@dataclass(frozen=True)
class ClaimJobs:
    """The executor jobs of figures 2-10 for the model and each break, with their progress stages."""

    variants: dict[str, tuple[SimParams, tuple[str, ...]]]
    jobs: list
    stages: list[str]
    seeds: tuple[int, ...]
    n_dags: int
    breaks: tuple[str, ...]


def claim_jobs(params: SimParams, *, seeds: Sequence[int], n_dags: int = 16,
               breaks: Sequence[str] = tuple(BREAKS)) -> ClaimJobs:
    """The jobs of figures 2-10 on ``seeds`` for ``params`` and under each broken simulator."""
    unknown = sorted(set(breaks) - set(BREAKS))
    if unknown:
        raise ValueError(f"Unknown breaks {unknown}; known: {sorted(BREAKS)}.")
    variants: dict[str, tuple[SimParams, tuple[str, ...]]] = {"model": (params, tuple(ALL_PARTS))}
    variants.update({b: (break_params(params, b), tuple(BREAKS[b].parts)) for b in breaks})
    jobs, stages = variant_jobs(variants, seeds=seeds, n_dags=n_dags)
    return ClaimJobs(variants, jobs, stages, tuple(int(s) for s in seeds), n_dags, tuple(breaks))


def run_claim_job(job: tuple) -> object:
    """One job of :func:`claim_jobs` (what an executor maps)."""
    return _task(job)


def claim_results(cj: ClaimJobs, outs: list, params: SimParams, groups: Sequence[Sequence[int]] | None
                  ) -> Reproduction:
    """The claim tables from the outputs of :func:`claim_jobs`' jobs (in job order)."""
    res = collect_variants(cj.variants, cj.jobs, outs, seeds=cj.seeds, n_dags=cj.n_dags)
    results = res["model"]
    by_seed = claim_table(results)
    summary = summarise(by_seed, groups)
    tables = {b: claim_table([r.merged(m) for r, m in zip(res[b], results, strict=True)]) for b in cj.breaks}
    broken = pd.concat([t.assign(simulator=b) for b, t in tables.items()], ignore_index=True) if tables else \
        pd.DataFrame()
    if tables:
        summary = summary.merge(evidence_kinds(by_seed, tables), on="claim", how="left")
    summary["note"] = [("" if h else NOTES.get(c, "")) for c, h in zip(summary["claim"], summary["holds"],
                                                                        strict=True)]
    return Reproduction(by_seed, summary, broken, results, params)


def write_tables(out: str | os.PathLike, rep: Reproduction) -> Path:
    """Write the claim tables and ``params.json`` of ``rep`` to the folder ``out``."""
    o = Path(out)
    o.mkdir(parents=True, exist_ok=True)
    rep.by_seed.to_csv(o / "claims_by_seed.csv", index=False)
    rep.summary.to_csv(o / "claims.csv", index=False)
    if not rep.broken.empty:
        rep.broken.to_csv(o / "breaks_by_seed.csv", index=False)
    (o / "claims.md").write_text(to_markdown(rep.summary))
    save_params(rep.params, o / "params.json")
    return o
