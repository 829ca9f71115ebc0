"""Figure 11's claims, judged against a best-of-n null generated through the same pipeline.

The post says pass@1 "starts on the reference, bends below it, and passes its scaling
inflection point early". The reference is repeated sampling: best of ``n`` i.i.d. attempts,
400 Elo per tenfold budget. Whether a simulated curve "starts on" it is a statement about a
noisy statistic (the local self-Elo slope at the first checkpoint, from 14 tasks x 5
sessions), so it is judged against the distribution of the same statistic when the sessions
*are* best-of-n: :func:`best_of_n_null` builds such session tables (attempts of one
first-checkpoint length each, continuous i.i.d. scores) with the study's design and sends them
through the same :func:`evalkit.budget.elo_curves` and :func:`evalkit.budget.inflection_point`.
A row reports the quantile of the observed statistic in that null, not a fixed band.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Sequence
from typing import Literal, overload

import numpy as np
import pandas as pd

from evalkit._progress import ProgressFn
from evalkit.budget import elo_curves, inflection_point
from evalkit.sim.breaks import break_params
from evalkit.studies.fig11 import (
    SYSTEMS,
    Figure11Config,
    Figure11Result,
    checkpoints,
    figure11,
    plot_figure11,
)

__all__ = [
    "NULL_BAND", "best_of_n_null", "figure11_claims", "figure11_reproduction", "write_figure11_reproduction",
    "FIG11_BREAKS", "FIG11_STAGE", "write_figure11_outputs", "figure11_summary", "figure11_jobs", "figure11_job", "figure11_table",
]

#: F11.start holds when the observed first slope lies inside this central band of its best-of-n null
#: (a correct best-of-n generator passes a seed with probability 0.9, and >= 4 of 5 seeds with 0.92).
NULL_BAND: tuple[float, float] = (0.05, 0.95)
#: Breaks that can change figure 11 (it runs without overheads, so "nocomm" cannot).
FIG11_BREAKS: tuple[str, ...] = ("constcost", "randrule")
#: Progress stage of the figure-11 jobs.
FIG11_STAGE = "figure 11"


def _start_and_level(curve: pd.DataFrame, inf) -> tuple[float, float]:
    """First local slope of pass@1 and its Elo at ``B`` minus the reference line through its first point."""
    slopes = inf.slopes.dropna(subset=["slope"])
    first = float(slopes["slope"].iloc[0]) if len(slopes) else float("nan")
    c = curve.loc[curve["system"] == "pass@1"].sort_values("budget")
    b, e = c["budget"].to_numpy(float), c["elo"].to_numpy(float)
    return first, float(e[-1] - (e[0] + 400.0 * np.log10(b[-1] / b[0])))


#: Computed nulls by their arguments (a process-wide cache; the reproduction fills it from a job).
_NULLS: dict[tuple, pd.DataFrame] = {}


def best_of_n_null(n_tasks: int, n_sessions: int, decades: float, grid: float, *, n_replicates: int = 200,
                   rng: int = 0) -> pd.DataFrame:
    """The F11.start and F11.below statistics when every pass@1 session is best-of-n.

    Each session makes attempts of one first-checkpoint length (so one attempt at the first
    checkpoint and about ``10**decades`` at the budget) with i.i.d. uniform scores; the session
    table goes through the study's checkpoints, self-Elo and inflection point. Returns
    ``start_slope, level_at_B`` per replicate.
    """
    key = (int(n_tasks), int(n_sessions), float(decades), float(grid), int(n_replicates), int(rng))
    if key not in _NULLS:
        _NULLS[key] = _compute_null(key)
    return _NULLS[key]


def _compute_null(key: tuple) -> pd.DataFrame:
    """:func:`best_of_n_null` uncached (module level: an executor job)."""
    n_tasks, n_sessions, decades, grid, n_replicates, rng = key
    g = np.random.default_rng(rng)
    cps = checkpoints(1.0, decades=decades, grid=grid)
    n_att = int(round(1.0 / cps[0]))
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(n_replicates):
            frames = []
            for t in range(n_tasks):
                best = np.maximum.accumulate(g.random((n_sessions, n_att)), axis=1)
                keep = np.concatenate([np.ones((n_sessions, 1), bool), np.diff(best, axis=1) > 0], axis=1)
                s, j = np.nonzero(keep)
                frames.append(pd.DataFrame({"system": "pass@1", "task": f"t{t:02d}", "session": s.astype(str),
                                            "budget": cps[0] * (j + 1), "score": best[s, j]}))
            curves = elo_curves(pd.concat(frames, ignore_index=True), mode="self", budgets=cps, n_resamples=0, rng=0)
            out.append(_start_and_level(curves.curve, inflection_point(curves, system="pass@1")))
    return pd.DataFrame(out, columns=["start_slope", "level_at_B"])


def _elo_at_budget(result: Figure11Result, system: str) -> float:
    return float(result.final.set_index("system").loc[system, "elo"])


def _quantile(null: np.ndarray, x: float) -> float:
    return float(np.mean(null < x) + 0.5 * np.mean(null == x))


def figure11_claims(result: Figure11Result, *, seed: int | str = "") -> pd.DataFrame:
    """Check the seed's claims about figure 11 on one result.

    The thresholds are fixed here, from the seed's wording, not from any run:

    * ``F11.start`` "pass@1 starts on the reference": the local self-Elo slope at the first
      checkpoint (the centred 5-point window truncated by the grid's start: checkpoints 0-2)
      lies inside the central 90 % of its best-of-n null (:func:`best_of_n_null`);
    * ``F11.below`` "bends below it" (in level): pass@1's self-Elo at ``B`` lies below the
      reference line through its first checkpoint by more than best-of-n sessions do in 95 %
      of the null (its null quantile < 0.05);
    * ``F11.bend`` "passes its scaling inflection point early": ``b_inf <= B / 10`` (a curve
      whose slope never exceeds 400 passes it at the first checkpoint);
    * ``F11.overtake`` "past the bend pass@4 overtakes it and leads at the budget": pass@4's
      joint Elo at ``B`` exceeds pass@1's, pass@1 led at some earlier checkpoint, and the last
      checkpoint at which it led is not before ``b_inf``;
    * ``F11.track`` "group@4 tracks pass@1": their joint Elo differ by at most 50 Elo at ``B``;
    * ``F11.between`` "pass@2 group@2 falls between group@4 and pass@4" at ``B`` (value: its
      position between them, 0 = group@4, 1 = pass@4).

    Returns
    -------
    pandas.DataFrame
        One row per claim in the simulator's tidy claim format (``claim, figure, text,
        seed_value, measure, tolerance, seed, value, holds``) plus ``detail`` (the numbers in words).
    """
    c = result.config
    null = best_of_n_null(c.n_tasks, c.n_sessions, float(c.decades), float(c.grid))
    inf = result.inflection["pass@1"]
    first, level = _start_and_level(result.self_elo.curve, inf)
    q_start = _quantile(null["start_slope"].to_numpy(), first)
    q_level = _quantile(null["level_at_B"].to_numpy(), level)
    b, b_inf = result.budget, inf.b_inf
    b0 = float(result.self_elo.budgets[0])
    rel_inf = (b_inf if np.isfinite(b_inf) else b0) / b
    joint = result.joint_elo.curve.pivot(index="budget", columns="system", values="elo").sort_index()
    led = np.flatnonzero((joint["pass@4"] - joint["pass@1"]).to_numpy() <= 0)
    last_p1_lead = float(joint.index[led[-1]]) if led.size else float("nan")
    e = {s: _elo_at_budget(result, s) for s, _, _ in SYSTEMS}
    lead = e["pass@4"] - e["pass@1"]
    overtakes = lead > 0 and led.size > 0 and (not np.isfinite(b_inf) or last_p1_lead >= b_inf)
    span = e["pass@4"] - e["group@4"]
    pos = (e["pass@2 group@2"] - e["group@4"]) / span if span != 0 else float("nan")
    lo, hi = sorted((e["group@4"], e["pass@4"]))
    nm = null["start_slope"]
    rows = [
        ("F11.start", "pass@1 self-Elo starts on the 400/decade reference (first local slope; best-of-n null "
         "quantile)", 400.0, "null-quantile", f"in [{NULL_BAND[0]:g}, {NULL_BAND[1]:g}]", first,
         bool(NULL_BAND[0] <= q_start <= NULL_BAND[1]),
         f"{first:.0f} Elo/decade, null quantile {q_start:.2f} (null mean {nm.mean():.0f}, sd {nm.std():.0f})"),
        ("F11.below", "pass@1 falls below the reference line in level (Elo at B minus the line through its start)",
         None, "null-quantile", "< 0.05", level, bool(q_level < 0.05),
         f"{level:+.0f} Elo at B, null quantile {q_level:.3f}"),
        ("F11.bend", "pass@1 passes its scaling inflection point early (b_inf / B)", 0.1, "ordering", "<= 0.1",
         rel_inf, bool(inf.status != "above_at_end" and rel_inf <= 0.1 + 1e-12),
         f"b_inf = {rel_inf:.3g} B ({inf.status})"),
        ("F11.overtake", "past the bend pass@4 overtakes pass@1 and leads at B (Elo lead)", None, "ordering", "exact",
         lead, bool(overtakes), f"pass@4 - pass@1 = {lead:+.0f} Elo at B; pass@1 last led at "
         + (f"{last_p1_lead / b:.3g} B" if led.size else "no checkpoint")),
        ("F11.track", "group@4 tracks pass@1 (joint Elo difference at B)", 0.0, "elo", "<= 50 Elo",
         e["group@4"] - e["pass@1"], bool(abs(e["group@4"] - e["pass@1"]) <= 50),
         f"group@4 - pass@1 = {e['group@4'] - e['pass@1']:+.0f} Elo at B"),
        ("F11.between", "pass@2 group@2 falls between group@4 and pass@4 at B (position 0..1)", None, "ordering",
         "exact", pos, bool(lo <= e["pass@2 group@2"] <= hi),
         f"{e['pass@2 group@2']:.0f} vs group@4 {e['group@4']:.0f}, pass@4 {e['pass@4']:.0f}"),
    ]
    out = pd.DataFrame(rows, columns=["claim", "text", "seed_value", "measure", "tolerance", "value", "holds",
                                      "detail"])
    out.insert(1, "figure", "11")
    out.insert(6, "seed", seed)
    return out[["claim", "figure", "text", "seed_value", "measure", "tolerance", "seed", "value", "holds", "detail"]]


def figure11_job(args: tuple) -> object:
    """One job of the reproduction: figure 11 on one seed for each configuration, in one process
    (the configurations draw the same DAG seeds, so DAGs that differ only in their costs are grown
    once, :mod:`evalkit.sim.generator`), returned without their session tables except the first
    configuration's when ``keep`` (for the figure); or, for ``("null", key)``, the best-of-n null."""
    if args[0] == "null":
        return _compute_null(args[1])
    configs, seed, keep = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        results = [figure11(c, rng=seed) for c in configs]
    return [r if keep and k == 0 else dataclasses.replace(r, traces=r.traces.iloc[:0]) for k, r in enumerate(results)]


@overload
def figure11_reproduction(
    config: Figure11Config | None = ..., *, seeds: Sequence[int] = ..., breaks: Sequence[str] = ...,
    engine: str | None = ..., workers: int | None = ..., scheduler: object = ...,
    progress: ProgressFn | None = ..., keep_first: Literal[False] = ...,
) -> pd.DataFrame: ...
@overload
def figure11_reproduction(
    config: Figure11Config | None = ..., *, seeds: Sequence[int] = ..., breaks: Sequence[str] = ...,
    engine: str | None = ..., workers: int | None = ..., scheduler: object = ...,
    progress: ProgressFn | None = ..., keep_first: Literal[True],
) -> tuple[pd.DataFrame, Figure11Result]: ...
def figure11_reproduction(
    config: Figure11Config | None = None, *, seeds: Sequence[int] = (0, 1, 2, 3, 4), breaks: Sequence[str] = (),
    engine: str | None = None, workers: int | None = None, scheduler: object = None,
    progress: ProgressFn | None = None, keep_first: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, Figure11Result]:
    """:func:`figure11_claims` on several seeds (and under each break), in the tidy claim format.

    Each seed is one job of :func:`evalkit.engine.get_executor` (running the model and every
    break, which share their DAGs). The frame has a ``simulator`` column (``"model"`` or the
    break's name). Summarise the model's rows with :func:`evalkit.sim.claims.summarise` (a claim
    holds on >= 2/3 of the seeds: 4 of 5). With ``keep_first`` it also returns the model's
    :class:`Figure11Result` on the first seed.
    """
    from evalkit.sim.experiments import sweep_executor

    sims, jobs = figure11_jobs(config, seeds=seeds, breaks=breaks, keep_first=keep_first)
    ex = sweep_executor(engine, workers=workers, scheduler=scheduler)
    outs = ex.map(figure11_job, jobs, progress=progress, stage=FIG11_STAGE)
    if keep_first:
        return figure11_table(sims, seeds, outs, keep_first=True)
    return figure11_table(sims, seeds, outs)


def figure11_jobs(
    config: Figure11Config | None = None, *, seeds: Sequence[int] = (0, 1, 2, 3, 4), breaks: Sequence[str] = (),
    keep_first: bool = False,
) -> tuple[dict[str, Figure11Config], list[tuple]]:
    """The simulators (model and breaks) of :func:`figure11_reproduction` and its executor jobs for
    :func:`figure11_job`: one per seed, then the best-of-n null unless it is cached (the shortest
    job, last: it fills the pool's tail). :func:`figure11_table` reads their outputs."""
    config = config if config is not None else Figure11Config()
    from evalkit.sim.experiments import load_params

    base = config.params if config.params is not None else load_params()
    sims = {"model": config}
    sims.update({b: Figure11Config(**{**config.__dict__, "params": break_params(base, b)}) for b in breaks})
    jobs: list[tuple] = [(tuple(sims.values()), int(s), keep_first and k == 0) for k, s in enumerate(seeds)]
    key = _null_key(config)
    if key not in _NULLS:
        jobs.append(("null", key))
    return sims, jobs


def _null_key(config: Figure11Config) -> tuple:
    return (int(config.n_tasks), int(config.n_sessions), float(config.decades), float(config.grid), 200, 0)


@overload
def figure11_table(sims: dict[str, Figure11Config], seeds: Sequence[int], out: list, *,
                   keep_first: Literal[False] = ...) -> pd.DataFrame: ...
@overload
def figure11_table(sims: dict[str, Figure11Config], seeds: Sequence[int], out: list, *,
                   keep_first: Literal[True]) -> tuple[pd.DataFrame, Figure11Result]: ...
def figure11_table(
    sims: dict[str, Figure11Config], seeds: Sequence[int], out: list, *, keep_first: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, Figure11Result]:
    """The tidy claim table of :func:`figure11_reproduction` from its jobs' outputs (in job order)."""
    out = list(out)
    key = _null_key(sims["model"])
    if len(out) > len(seeds):
        _NULLS[key] = out.pop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per_seed = [[figure11_claims(r, seed=s) for r in rs] for rs, s in zip(out, seeds, strict=True)]
    frames = [fs[k].assign(simulator=n) for k, n in enumerate(sims) for fs in per_seed]
    table = pd.concat(frames, ignore_index=True)
    return (table, out[0][0]) if keep_first else table


def write_figure11_reproduction(
    out: str | os.PathLike, config: Figure11Config | None = None, *, seeds: Sequence[int] = (0, 1, 2, 3, 4),
    breaks: Sequence[str] = FIG11_BREAKS, engine: str | None = None, workers: int | None = None,
    scheduler: object = None, progress: ProgressFn | None = None, figure: bool = True,
) -> pd.DataFrame:
    """Run :func:`figure11_reproduction`, write its tables to ``out`` and append them to the
    simulator's ``claims.md`` there (creating it if absent). Returns the per-claim summary.

    Files: ``figure11_claims_by_seed.csv`` (one row per claim, seed and simulator, with the
    numbers in words), ``figure11_claims.csv`` (per claim: value per seed, seeds held, holds on
    >= 2/3 of the seeds, i.e. 4 of 5, and its kind under the breaks) and, with ``figure``,
    ``fig11_elo_per_budget.png`` (first seed).
    """
    config = config if config is not None else Figure11Config()
    allrows, first = figure11_reproduction(config, seeds=seeds, breaks=breaks, engine=engine, workers=workers,
                                           scheduler=scheduler, progress=progress, keep_first=True)
    return write_figure11_outputs(out, allrows, first, seeds=seeds, breaks=breaks, figure=figure)


def figure11_summary(allrows: pd.DataFrame, *, breaks: Sequence[str]) -> pd.DataFrame:
    """Per claim: the model's value per seed, seeds held, holds (4 of 5), its kind under ``breaks``
    and, for a row that does not hold, the failing seeds' numbers in words (``note``)."""
    from evalkit.sim.claims import evidence_kinds, summarise

    by_seed = allrows.loc[allrows["simulator"] == "model"].drop(columns=["simulator"])
    summary = summarise(by_seed.drop(columns=["detail"]))
    if breaks:
        tables = {b: allrows.loc[allrows["simulator"] == b].drop(columns=["simulator", "detail"]) for b in breaks}
        summary = summary.merge(evidence_kinds(by_seed, tables), on="claim", how="left")
    summary["note"] = [
        "" if ok else "; ".join(f"seed {s}: {d}" for s, d, h in
                                by_seed.loc[by_seed["claim"] == c, ["seed", "detail", "holds"]].itertuples(index=False)
                                if not h)
        for c, ok in zip(summary["claim"], summary["holds"], strict=True)
    ]
    return summary


def write_figure11_outputs(
    out: str | os.PathLike, allrows: pd.DataFrame, first: Figure11Result, *, seeds: Sequence[int],
    breaks: Sequence[str], figure: bool = True,
) -> pd.DataFrame:
    """The files of :func:`write_figure11_reproduction` from the output of
    :func:`figure11_reproduction` (``keep_first=True``). Returns the per-claim summary."""
    from pathlib import Path

    from evalkit.sim.reproduce import to_markdown

    config = first.config
    o = Path(out)
    o.mkdir(parents=True, exist_ok=True)
    summary = figure11_summary(allrows, breaks=breaks)
    allrows.to_csv(o / "figure11_claims_by_seed.csv", index=False)
    summary.to_csv(o / "figure11_claims.csv", index=False)
    md = o / "claims.md"
    head = md.read_text() if md.exists() else ""
    head = head.split("\n## Figure 11")[0].rstrip("\n")
    section = (f"\n\n## Figure 11: Elo per agent-time (seeds {', '.join(map(str, seeds))}; {config.n_tasks} tasks x "
               f"{config.n_sessions} sessions per system)\n\nThresholds are fixed in "
               "`evalkit.studies.figure11_claims`; a row holds when it holds on at least 2/3 of the seeds (4 of 5). "
               "F11.start and F11.below are judged by their quantile in a best-of-n null run through the same "
               "pipeline (`evalkit.studies.fig11_claims.best_of_n_null`); kinds come from the breaks "
               f"{', '.join(breaks) or '(none)'} (figure 11 has no overheads, so `nocomm` cannot change it).\n\n")
    md.write_text((head + section if head else section.lstrip()) + to_markdown(summary))
    if figure:
        from evalkit.plots._figure import subplots

        fig, axes = subplots(1, 2, figsize=(12, 4.5))
        plot_figure11(first, axes=axes)
        fig.tight_layout()
        fig.savefig(o / "fig11_elo_per_budget.png", dpi=120, metadata={"Software": None})
    return summary
