"""The main job: simulate the default Elo-per-budget study, analyse it, write the report.

``evalkit demo --out DIR`` calls :func:`run_demo`. The pipeline is the one a user's own traces
take: a session table (here from :mod:`evalkit.sim`) -> Elo per budget
(:mod:`evalkit.budget`) -> significance tests (:mod:`evalkit.stats`) -> a report folder
(:mod:`evalkit.report`: Markdown, HTML, PNG, CSV tables, ``run.json``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._deprecate import renamed_keywords
from evalkit._output import atomic_output_dir, check_out_path
from evalkit._progress import ProgressFn, tick
from evalkit.budget import allocate_sessions, split_table
from evalkit.report import (
    Bullets,
    ReportContext,
    ReportSpec,
    Section,
    Table,
    Text,
    build_report,
    write_report,
)
from evalkit.report.budget import budget_order_section
from evalkit.report.budget import final_scores as report_final_scores
from evalkit.report.document import Block
from evalkit.resources import data_file
from evalkit.sim.params import calibrated
from evalkit.studies.fig11 import (
    Figure11Config,
    Figure11Result,
    figure11,
    plot_figure11,
)
from evalkit.studies.fig11_claims import figure11_claims

__all__ = ["REAL_DATA", "final_scores", "run_demo", "budget_sections"]


def final_scores(result: Figure11Result) -> pd.DataFrame:
    """Each session's best score at the budget ``B``: ``system, task, trial, score``.

    A best-of-K composite counts as one session (its members each spent ``B / K``)."""
    return report_final_scores(result.traces, result.budget)


def _figure_section(ctx: ReportContext) -> Section:
    res: Figure11Result = ctx.results["figure11"]
    from evalkit.plots._figure import subplots

    fig, axes = subplots(1, 2, figsize=(12, 4.5))
    plot_figure11(res, axes=axes)
    f = ctx.save_figure(fig, "figure11", "Left: self-Elo of pass@1 and group@4 with 95 % session-bootstrap bands, "
                                         "the 400-Elo-per-decade reference of repeated sampling (dashed) and pass@1's "
                                         "scaling inflection point. Right: joint Elo of all four systems.")
    c = res.config
    text = (f"{c.n_tasks} tasks x {c.n_sessions} sessions per system; every session grows its own DAG (a group's "
            f"agents share one). Budget = agent-time, B = {res.budget:.4g} (simulator time units); checkpoints every "
            f"{c.grid}x from B/10^{c.decades:g} to B. Score = best value so far / {res.scale:.4g} (90th percentile of "
            "the best values of 64 DAGs), clipped at 1. One Bradley-Terry fit pools the games of all tasks; the "
            f"first checkpoint is anchored at 1000; {c.bootstrap} session-bootstrap replicates.")
    ties = ", ".join(f"{k}: {v:.0%}" for k, v in res.joint_elo.tie_share.items())
    return Section("Elo per agent-time (figure 11)", (Text(text), f, Text(f"Share of tied games: {ties}.")))


def _inflection_section(ctx: ReportContext) -> Section:
    res: Figure11Result = ctx.results["figure11"]
    rows: list[dict[str, Any]] = []
    blocks: list[Block] = []
    for system, inf in res.inflection.items():
        rows.append({"system": system, "status": inf.status, "b_inf": inf.b_inf, "b_inf / B": inf.b_inf / res.budget,
                     "ci_low": inf.ci_low, "ci_high": inf.ci_high})
    table = pd.DataFrame(rows)
    blocks.append(Text("The scaling inflection point b_inf is the last checkpoint at which the local self-Elo slope "
                       "(least squares over five neighbouring checkpoints, centred) exceeds 400 Elo per decade; the "
                       "interval is the 95 % session-bootstrap percentile interval."))
    blocks.append(Table(table, floatfmt=".4g", csv="tables/inflection.csv"))
    inf = res.inflection["pass@1"]
    if np.isfinite(inf.b_inf) and inf.b_inf > 0:
        k = allocate_sessions(res.budget, inf.b_inf)
        blocks.append(Text(f"Allocation rule: K = max(1, round(B / b_inf)) = **{k}** independent pass@1 sessions of "
                           "B/K each."))
    split = split_table(res.self_elo, system="pass@1", budget=res.budget, ks=(1, 2, 3, 4, 6, 8, 10))
    blocks.append(Text("Predicted joint-scale advantage of K independent sessions of B/K over one session of B, "
                       "r(B/K) + 400 log10 K - r(B) from pass@1's self-Elo curve (independence assumed):"))
    blocks.append(Table(split, floatfmt=".4g", csv="tables/split_advantage.csv"))
    e = res.final.set_index("system")["elo"]
    k4 = split.set_index("k").loc[4]
    blocks.append(Text(f"Check against the simulated pass@4 (four real sessions of B/4): predicted "
                       f"{k4['advantage']:+.0f} Elo (95 % interval {k4['ci_low']:+.0f} .. {k4['ci_high']:+.0f}), "
                       f"measured pass@4 - pass@1 = {e['pass@4'] - e['pass@1']:+.0f} Elo on the joint scale."))
    return Section("Scaling inflection point and allocation", tuple(blocks))


def _claims_section(ctx: ReportContext) -> Section:
    claims: pd.DataFrame = ctx.results["claims"]
    return Section("The seed's claims about figure 11", (
        Text("Checked on this run; the thresholds are fixed in `evalkit.studies.figure11_claims`, and "
             "`evalkit simulate reproduce` checks them on five seeds."),
        Table(claims[["claim", "text", "detail", "tolerance", "holds"]], csv="tables/figure11_claims.csv", data=claims),
    ))


def budget_sections() -> list[Callable[[ReportContext], Section | None]]:
    """Report sections of the Elo-per-budget study (they read ``ctx.results['figure11']`` and the
    fitted curves that :func:`run_demo` puts in ``ctx.results``)."""
    return [_figure_section, _inflection_section, budget_order_section, _claims_section]


#: Bundled real judgments rated by the demo's second report (LLMFAO crowd votes, CC BY 4.0), named
#: within evalkit's data (:func:`evalkit.resources.data_file`); ``real_data="bundled"`` selects it.
REAL_DATA = "llmfao/crowd-comparisons.csv"


def _real_data_path(real_data: str | Path | None) -> Path | None:
    """The demo's second input, checked before anything is simulated."""
    if real_data is None:
        return None
    if isinstance(real_data, str) and real_data == "bundled":
        return data_file(REAL_DATA)
    real = Path(real_data)
    if not real.is_file():
        raise ValueError(f"real_data {str(real)!r} is not a file; pass real_data=None to skip the second report.")
    from evalkit.io import read_comparisons

    read_comparisons(real)  # a file that is no judgment log fails now, not after the simulation
    return real


@renamed_keywords(seed="rng")
def run_demo(
    out_dir: str | Path,
    *,
    config: Figure11Config | None = None,
    rng: int = 0,
    real_data: str | Path | None = "bundled",
    progress: ProgressFn | None = None,
    engine: str | None = None,
    workers: int | None = None,
    scheduler: object = None,
    force: bool = False,
) -> Path:
    """Simulate the default study, fit the curves, test, and write the report to ``out_dir``.

    Parameters
    ----------
    out_dir : path
        Report folder.
    config : Figure11Config, optional
        The simulated study (default: :class:`Figure11Config()`).
    rng : int
        Seed of the whole run (``seed``: the deprecated name).
    real_data : path, "bundled" or None
        A judgment log rated in a second report, ``out_dir/real/`` (Bradley-Terry leaderboard,
        win rates, head-to-head tests), linked from the main one; ``"bundled"`` (default) the
        bundled LLMFAO crowd votes (:data:`REAL_DATA`); None skips it.
    progress : callable, optional
        ``progress(stage, done, total)`` (:mod:`evalkit._progress`).
    engine, workers, scheduler
        Where the sessions are simulated (:func:`evalkit.engine.get_executor`; default: the
        local process pool).
    force : bool
        Replace an existing non-empty ``out_dir`` whole (default: refuse it). The folder is
        built in a temporary sibling and renamed into place, ``run.json`` (with every file's
        SHA-256) written last, so an interrupted run leaves nothing that looks complete.

    Returns
    -------
    Path
        The report folder (``report.html``, ``report.md``, ``figures/``, ``tables/``,
        ``run.json``, ``sessions.parquet`` (the simulated session table) and ``real/``).
    """
    config = config if config is not None else Figure11Config()
    check_out_path(out_dir, force=force)
    real = _real_data_path(real_data)  # every input checked before the simulation starts
    if config.params is None:
        calibrated()  # the bundled parameter set: an error now if it is not installed
    res = figure11(config, rng=rng, progress=progress, engine=engine if (engine or scheduler) else "process",
                   workers=workers,
                   scheduler=scheduler)
    scores = final_scores(res)
    claims = figure11_claims(res, seed=rng)
    with atomic_output_dir(out_dir, force=force) as folder:
        _write_demo(folder.path, res, scores, claims, config=config, rng=rng, real_data=real,
                    progress=progress, record=folder.record)
    return Path(out_dir)


def _write_demo(out: Path, res: Figure11Result, scores: pd.DataFrame, claims: pd.DataFrame, *,
                config: Figure11Config, rng: int, real_data: Path | None,
                progress: ProgressFn | None, record: dict) -> None:
    res.traces.to_parquet(out / "sessions.parquet", index=False)

    notes = [
        "Simulated with evalkit's calibrated swarm simulator (`evalkit.sim`, parameters in data/sim/calibrated.json; "
        "the values used are in run.json).",
        "The session table is written to sessions.parquet; `evalkit curve sessions.parquet` reruns the curves "
        "on it like on any user's traces.",
    ]
    if real_data is not None:
        real = real_data
        tick(progress, f"rating {real.name} in a second report", 0, 1)
        write_report(ReportSpec(comparisons=real, title=f"Bradley-Terry ratings of {real.name}", rng=rng),
                     out / "real")
        notes.append(f"Ratings and head-to-head tests on real judgments ({real.name}): "
                     "[real/report.html](real/report.html).")
        tick(progress, f"rating {real.name} in a second report", 1, 1)
    tick(progress, "significance tests and report", 0, 1)

    def seed_results(ctx: ReportContext) -> Section:
        ctx.results.update(figure11=res, claims=claims, traces=res.traces, budget=res.budget,
                           self_elo=res.self_elo, joint_elo=res.joint_elo, inflection=res.inflection)
        return Section("Study", (Bullets(tuple(notes)),))

    sections = [seed_results, *budget_sections()]
    from evalkit.report import DEFAULT_SECTIONS

    spec = ReportSpec(scores=scores, title="evalkit demo: Elo per agent-time on simulated swarms", rng=rng,
                      sections=[sections[0], *sections[1:], *DEFAULT_SECTIONS], unit_pair=("pass@4", "pass@1"),
                      params={"config": {k: v for k, v in vars(config).items() if k != "params"},
                              "sim_params": (config.params or calibrated()).to_dict(),
                              "budget": res.budget})
    record.update(build_report(spec, out))
    tick(progress, "significance tests and report", 1, 1)
