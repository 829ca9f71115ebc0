"""Elo-per-budget sections of a report: a session table in; curves, inflection points and the
systems compared at the budget out.

:func:`evalkit.report.write_report` adds :data:`BUDGET_SECTIONS` when it gets ``traces=``. The
sections read ``ctx.results``: ``traces`` (a validated session table) and, when a caller has
fitted them already (as ``evalkit demo`` has), ``self_elo``, ``joint_elo``, ``inflection`` and
``budget``; whatever is missing is fitted here with ``ctx.params['curve_options']``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.budget import allocate_sessions, elo_curves, inflection_point
from evalkit.budget.slopes import InflectionResult
from evalkit.report.document import Block, ReportContext, Section, Table, Text, plain
from evalkit.stats import compare_systems

__all__ = ["final_scores", "prepare_curves", "curves_section", "budget_order_section", "BUDGET_SECTIONS",
           "inflection_findings", "leader_at_budget"]


def final_scores(traces: pd.DataFrame, budget: float) -> pd.DataFrame:
    """Each session's best score at ``budget``: ``system, task, trial, score`` (trial = session).

    A session without a submission by ``budget`` is left out and counted in ``.attrs['missing']``.
    """
    tr = traces.loc[traces["budget"] <= budget * (1 + 1e-9)]
    best = tr.groupby(["system", "task", "session"], sort=True)["score"].max()
    every = traces[["system", "task", "session"]].drop_duplicates()
    out = best.reset_index().rename(columns={"session": "trial"})[["system", "task", "trial", "score"]]
    out.attrs["missing"] = int(len(every) - len(out))
    return out


def prepare_curves(ctx: ReportContext) -> None:
    """Fit what the sections need and is not in ``ctx.results`` yet."""
    r = ctx.results
    if "traces" not in r or {"self_elo", "joint_elo", "inflection", "budget"} <= set(r):
        return
    opts = dict(ctx.params.get("curve_options") or {})
    if "bootstrap" in opts:  # elo_curves' deprecated name of n_resamples: pass the new one
        opts.setdefault("n_resamples", opts.pop("bootstrap"))
    seed = ctx.seed
    tr = r["traces"]
    if "self_elo" not in r:
        r["self_elo"] = elo_curves(tr, mode="self", rng=seed, **opts)
    if "joint_elo" not in r:
        r["joint_elo"] = elo_curves(tr, mode="joint", rng=seed + 1, **opts) if tr["system"].nunique() > 1 else None
    if "inflection" not in r:
        r["inflection"] = {s: inflection_point(r["self_elo"], system=s) for s in r["self_elo"].systems}
    if "budget" not in r:
        ref = r["joint_elo"] if r["joint_elo"] is not None else r["self_elo"]
        r["budget"] = float(ref.curve["budget"].max())


def curves_section(ctx: ReportContext) -> Section | None:
    """Self-Elo against the 400-per-decade reference, joint Elo, and the inflection points."""
    if "traces" not in ctx.results:
        return None
    prepare_curves(ctx)
    from evalkit.plots._figure import subplots
    from evalkit.plots.budget import plot_elo_curves

    r = ctx.results
    joint = r["joint_elo"]
    fig, axes = subplots(1, 2 if joint is not None else 1, figsize=(12 if joint is not None else 6.5, 4.5))
    axes = np.atleast_1d(axes)
    plot_elo_curves(r["self_elo"], ax=axes[0], inflection=list(r["inflection"].values()), title="self-Elo")
    if joint is not None:
        plot_elo_curves(joint, ax=axes[1], reference=False, title="joint Elo (all systems)")
    f = ctx.save_figure(fig, "elo_per_budget", "Self-Elo of each system against the 400-Elo-per-decade reference of "
                                               "repeated sampling (dashed), with the scaling inflection points, and "
                                               "joint Elo of all systems; bands: session-bootstrap percentile "
                                               f"intervals ({r['self_elo'].confidence_level:.0%}).")
    inflection_findings(ctx, r["inflection"], r["budget"], level=r["self_elo"].confidence_level)
    rows = []
    for system, inf in r["inflection"].items():
        k = allocate_sessions(r["budget"], inf.b_inf) if np.isfinite(inf.b_inf) and inf.b_inf > 0 else None
        rows.append({"system": system, "status": inf.status, "b_inf": inf.b_inf, "ci_low": inf.ci_low,
                     "ci_high": inf.ci_high, "K at B": k, "note": inf.note})
    ties = ", ".join(f"{plain(k)}: {v:.0%}" for k, v in r["self_elo"].tie_share.items())  # names: plain text
    failed = r["self_elo"].n_failed + (joint.n_failed if joint is not None else 0)
    blocks: list[Block] = [
        Text("A player is a (system, budget checkpoint) on a geometric grid; players meet only within a task "
             "(higher best-so-far wins, equal ties); one Bradley-Terry fit pools all tasks; the first checkpoint is "
             "anchored at 1000; bands come from resampling sessions within each (system, task)."),
        f,
        Text(f"Scaling inflection point b_inf: the last checkpoint at which the local self-Elo slope (least squares "
             f"over five neighbouring checkpoints) exceeds 400 Elo per decade; K = max(1, round(B / b_inf)) "
             f"independent sessions for the budget B = {r['budget']:.4g}."),
        Table(pd.DataFrame(rows), floatfmt=".4g", csv="tables/inflection.csv"),
        Text(f"Share of tied games in the self-Elo fits: {ties}. Bootstrap replicates without an estimate "
             f"(left out of the bands): {failed}."),
    ]
    return Section("Elo per budget", tuple(blocks))


def inflection_findings(ctx: ReportContext, inflection: dict, budget: float, *, level: float = 0.95,
                        section: str = "Elo per budget") -> None:
    """A finding per system with a scaling inflection point: ``b_inf`` with its interval and the
    number of independent sessions it implies at the budget."""
    for system, inf in inflection.items():
        if not (np.isfinite(inf.b_inf) and inf.b_inf > 0):
            continue
        k = allocate_sessions(budget, inf.b_inf)
        ctx.headline.finding(
            f"**{plain(system)}** stops gaining 400 Elo per decade at b_inf = {_b_inf_text(inf, level)}: at the "
            f"budget B = {budget:.4g}, K = {k} independent session{'s' if k != 1 else ''} of B/K beat one.",
            section=section, severity="high", source="budget")


def _b_inf_text(inf: InflectionResult, level: float) -> str:
    """``b_inf`` with its interval. A lower bound of 0 is not a budget: it means some bootstrap
    resamples never exceed the reference slope, and the sentence says so and how often."""
    from evalkit._format import decimals_for, format_estimate, format_number

    if not inf.ci_low > 0:
        reps = np.asarray(inf.replicates, dtype=float)
        reps = reps[np.isfinite(reps)]
        never = float(np.mean(reps == 0)) if reps.size else float("nan")
        d = decimals_for([inf.b_inf, inf.ci_high], 3)
        return (f"{format_number(inf.b_inf, d)} ({level:.0%} CI up to {format_number(inf.ci_high, d)}; in "
                f"{never:.0%} of bootstrap resamples the slope never exceeds 400 Elo per decade)")
    return format_estimate(inf.b_inf, inf.ci_low, inf.ci_high, level=level)


def leader_at_budget(ctx: ReportContext, last: pd.DataFrame, *, section: str = "Systems at the budget") -> None:
    """The leader on joint Elo at the budget, with its interval and its margin over the runner-up."""
    from evalkit._format import format_estimate

    top = last.sort_values("elo", ascending=False).reset_index(drop=True)
    if len(top) < 2:
        return
    a, b = top.iloc[0], top.iloc[1]
    overlap = bool(a["ci_low"] <= b["ci_high"])
    ctx.headline.finding(
        f"At the budget, **{plain(a['system'])}** leads on joint Elo: {format_estimate(a['elo'], a['ci_low'], a['ci_high'])}"
        f", {a['elo'] - b['elo']:+.0f} Elo over **{plain(b['system'])}** "
        f"({'the intervals overlap' if overlap else 'the intervals do not overlap'}).",
        section=section, severity="high", source="budget")


def budget_order_section(ctx: ReportContext) -> Section | None:
    """Joint Elo of each system at the budget and paired tests of the final scores over tasks."""
    r = ctx.results
    if "traces" not in r:
        return None
    prepare_curves(ctx)
    blocks: list = []
    if r.get("joint_elo") is not None:
        c = r["joint_elo"].curve
        last = c.loc[c.groupby("system")["budget"].idxmax(), ["system", "budget", "elo", "ci_low", "ci_high"]]
        leader_at_budget(ctx, last)
        blocks += [Text("Joint Elo of each system at its last checkpoint, with its session-bootstrap interval, "
                        "best first:"),
                   Table(last.sort_values("elo", ascending=False), floatfmt=".4g", csv="tables/order_at_budget.csv")]
    scores = final_scores(r["traces"], r["budget"])
    task_means = scores.groupby(["system", "task"], as_index=False).agg(score=("score", "mean")).rename(
        columns={"task": "item"})
    if task_means["system"].nunique() > 1:
        p = ctx.params
        from evalkit.report.tasks import labelled_pairs, oriented_pairs

        order = list(dict.fromkeys(r["traces"]["system"].astype(str)))  # the baseline is the system first in the table
        cmp = compare_systems(task_means, pairs=oriented_pairs(order, "all"), test="paired_t",
                              adjust=p.get("adjust", "holm"), alpha=p.get("alpha", 0.05),
                              family="final best score, task means")
        ctx.results["final_tests"] = cmp
        from evalkit.report.findings import comparison_findings

        comparison_findings(ctx.headline, cmp.table, section="Systems at the budget", alpha=p.get("alpha", 0.05),
                            level=p.get("confidence_level", 0.95), adjust=p.get("adjust", "holm"), unit="tasks",
                            n_col="n_items", what="best score at B", max_pairs=1, source="budget")
        t = labelled_pairs(cmp.table[["a", "b", "n_items", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
                                      "effect_size", "pvalue", "pvalue_adjusted", "reject"]])
        method = cmp.multiplicity.description if cmp.multiplicity is not None else "no pair testable"
        blocks += [Text(f"Best score at B = {r['budget']:.4g}, paired over tasks (task means over sessions; candidate "
                        "− baseline, the baseline being the system that comes first in the session table; "
                        f"{cmp.test}; {method}). Sessions without a submission by B: {scores.attrs['missing']}."),
                   Table(t, floatfmt=".4g", csv="tables/final_score_tests.csv",
                         key=("a", "b", "diff", "ci_low", "ci_high", "n_items", "pvalue", "pvalue_adjusted", "reject"))]
    if not blocks:
        return None
    return Section("Systems at the budget", tuple(blocks))


BUDGET_SECTIONS = (curves_section, budget_order_section)
